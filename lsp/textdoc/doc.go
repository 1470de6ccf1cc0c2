// Package textdoc mirrors the editor's documents: immutable Document
// snapshots (UTF-16 positions, lines, slices without splitting the text) and
// the Store of open buffers, which reads a file as the editor has it (the open
// buffer, else the disk), refuses out-of-sync text (ErrOutOfSync), and lets
// jobs wait for a version or observe changes. It also converts between file
// paths and file: URIs.
//
// It knows nothing of the server: lsp's text synchronization handlers
// (didOpen, didChange, didClose) call Open, Change and Close.
package textdoc
