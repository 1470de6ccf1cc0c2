// Package shellenv finds what a project directory makes the user's shell
// load on entering it: the files its .envrc (direnv) and mise configs
// source or load, followed into what those source in turn. The sandbox
// holds them read-only (sandbox/protect) and Warden's configuration lists
// them; it sits below both so neither reaches into the other.
package shellenv
