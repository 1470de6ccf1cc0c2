// Package seatbelt is the sandbox's enforcement on macOS: the Seatbelt
// profile (SBPL) for one run, built from a Spec the sandbox resolves from
// its Policy (writable roots with what they hold, what may be read, what is
// hidden, the network), and the sandbox-exec command line that applies it.
// Paths travel as -D parameters, so no quoting reaches the profile; every
// deny of a protected path or a secret also matches it in any letter case
// and Unicode spelling the volume folds to it (fold.go), and comes after
// the allows it limits.
package seatbelt
