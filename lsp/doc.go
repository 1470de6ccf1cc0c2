// Package lsp is Warden's editor face: the language server lifecycle over
// stdio, the document store that mirrors the editor's buffers, code actions,
// the warden.* commands run as cancellable jobs, and the typed client for
// server→client calls (approval dialogs, workspace edits, progress).
//
// It also holds the editor-backed implementations of the interfaces that lower
// packages declare: approvals.Prompter (showMessageRequest) and the patch
// Workspace (workspace/applyEdit).
package lsp
