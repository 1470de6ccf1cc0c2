// Package patch is the patch model: it parses Codex "*** Begin Patch" patches
// and unified/git diffs into one []FileChange model, locates hunks with a
// tolerance ladder, checks paths against the workspace, applies changes to
// disk all or nothing, and records checkpoints for undo.
package patch
