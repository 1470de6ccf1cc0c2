// Package safe holds Codex's known-safe and dangerous lists, program by
// program: which command lines only read (ls, cat, grep, git status…, with
// the options that would make them write or run code ruled out, sed and
// find judged by their scripts and actions) and which always need the user
// (rm -f and its disguises). A line is judged on what runs, through the
// wrappers and nested shells that approvals/command unwraps; it is known safe
// only when every command in it is. Known-safe git is run hardened
// (HardenGit), so a repository's configuration cannot turn a read into code.
package safe
