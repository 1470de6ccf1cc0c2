// Package guard keeps a sandboxed run from leaving what the user's own
// tools would execute later at a protected path that did not exist when it
// started (a .git, .envrc or .vscode made in a writable root, at any depth,
// or a dot-entry in a home directory): it watches each missing protected
// path while the command runs (fanotify, else inotify), moves what appears
// away to the quarantine directory at once and again after the run, and
// holds a placeholder in each git directory's missing entries
// (commondir, modules, …) so git finds nothing the command planted.
//
// The paths themselves come from sandbox/protect; the launcher starts a
// Guard for each namespaced run (Start), lets the command go once it
// watches (WaitArmed) and collects what it moved away (Finish).
// Linux only.
package guard
