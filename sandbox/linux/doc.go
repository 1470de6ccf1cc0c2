// Package linux is the sandbox's enforcement on Linux: the helper that the
// warden binary re-executes as (HelperArg, HelperMain) and everything it
// applies before it execs the command: fresh user, mount, pid, ipc and net
// namespaces, the mount view (writable roots bound writable, what they hold
// read-only again, hidden paths masked), Landlock, the seccomp filter, the
// capability drop and limits; the supervisor that mediates unix-socket
// connects and addressed sends (unixmediate_linux.go) and reports every
// path a call is about to change to the launcher's change record
// (recordwrites_linux.go, resolve_linux.go); and the forwarder
// that carries the command's TCP to Warden's proxy under network ask. The
// launcher (package sandbox) resolves a Policy into a Spec and sends it.
package linux
