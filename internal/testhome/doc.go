// Package testhome keeps tests out of the user's real Warden directories.
//
// A test process that starts warden (or calls config.StateDir and friends)
// would otherwise write the audit log, transcripts, rules and toolchain
// caches into ~/.local/state/warden, ~/.config/warden and ~/.cache/warden.
// Main points HOME and every XDG base directory at a fresh directory
// (outside /tmp and $TMPDIR, the sandbox's writable roots) for the whole
// test process, so every warden it starts inherits them, while Go's own
// caches stay where they were (a fresh HOME would otherwise rebuild
// everything from nothing).
//
// Use it as func TestMain(m *testing.M) { testhome.Main(m) }, or call Setup
// from an existing TestMain.
package testhome
