// Command nouserns runs a command where user namespaces are refused, as in
// a container under Docker's default seccomp profile: it installs a seccomp
// filter that answers EPERM to unshare and clone with CLONE_NEWUSER and
// ENOSYS to clone3 (whose flags a filter cannot read, so libc and Go fall
// back to clone), then execs its arguments. Tests only: it is how the
// tests show what Warden does on such a machine.
//
//	nouserns COMMAND [ARGS...]
package main
