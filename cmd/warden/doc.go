// Command warden is the single Warden binary: the language server (serve), the
// command runner (exec), the patch applier (apply-patch), policy checks,
// diagnostics (doctor) and the hidden sandbox helper entry point.
//
// This package only parses flags and wires the lower packages together; each
// subcommand lives in its own file and registers itself in init.
package main
