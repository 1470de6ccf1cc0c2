// Package pathmemo remembers, for one sandboxed run, what the file system
// said about each path: its Lstat, its link target and its resolution. The
// launcher resolves the same few directories (the home directory, /tmp, the
// workspace) once per protected or secret path and again in each consumer
// (roots, read policy, guard); a memo makes that one system call each.
//
// A Memo belongs to one run and must never outlive it: a symbolic link may
// change between runs. Within a run it is no weaker than resolving a path
// twice a few microseconds apart, which is what it replaces. Code that must
// see the file system after a moment (a watch taking hold, the command
// ending) calls Forget or does not use the memo.
//
// A nil *Memo is valid and remembers nothing: every call goes to the file
// system.
package pathmemo
