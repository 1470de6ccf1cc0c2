// Package gitconfig reads git config files for what Warden must know of
// them: which variables exist and their values (Read), and which files
// outside a git dir its config and its hook managers make git obey or run
// (Targets), so that a sandboxed command cannot rewrite them for the
// user's next git on the host.
package gitconfig
