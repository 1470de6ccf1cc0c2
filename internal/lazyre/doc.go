// Package lazyre compiles regular expressions on first use: a package-level
// regexp.MustCompile runs at every process start, including the sandbox
// helper's and a one-shot `warden exec`, whether or not the pattern is used.
package lazyre
