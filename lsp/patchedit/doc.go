// Package patchedit is the editor's patch.Workspace: a checked patch plan
// becomes one workspace/applyEdit (with change annotations, so the user can
// review it hunk by hunk where the client allows), files the client cannot
// create, delete or move are written on disk after the editor's part landed,
// and what really landed is read back from the documents, never from the
// editor's answer alone.
//
// It asks the connection only for the client's capabilities and applyEdit
// (Editor); lsp's Client is one.
package patchedit
