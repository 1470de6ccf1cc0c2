// Package gitfacts holds what Warden knows about git, without judging a
// command: which configuration keys and values make git run a program or
// weaken a check (and the editor values that do not), the -c and
// --config-env options and GIT_* variables that set them for one command,
// the entries of a git dir git obeys, a repository's remotes and their URLs,
// and whether every repository and configuration file a git command could
// use is one a sandboxed command cannot have written (StaysProtected, Judge).
//
// risk's assessor turns these facts into risk; approvals asks StaysProtected
// whether a git command's read-only subcommands may count as known-safe.
package gitfacts
