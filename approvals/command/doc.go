// Package command says what a command line is, before anyone judges it: the
// shell syntax tree of every script it runs (mvdan.cc/sh, bash and POSIX
// dialects, nested `sh -c` followed to a bounded depth), the wrapper programs
// it passes through unwrapped (sudo, env, timeout, xargs, flock…), its words
// and redirections as Segments, the plain-words check (whether a line is only
// literal words running programs from outside the writable roots, which a
// rule's grant needs), and the escaping that makes any of it safe to show in
// a dialog or a terminal. It holds no policy: the known-safe list lives in
// approvals/safe, risk facts in approvals/risk, decisions in approvals.
package command
