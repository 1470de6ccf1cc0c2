// Package wire holds the LSP message shapes that go.lsp.dev/protocol v0.12.0
// lacks or gets wrong: LSP 3.16's WorkspaceEdit with mixed documentChanges and
// change annotations, workspace/applyEdit's parameters and answer (with the
// Neovim plugin's review outcome), window/showDocument, CodeAction, $/progress
// with a plain token and a 0% that is sent, $/cancelRequest with numeric ids,
// the normalised key of a JSON-RPC id, and the client capabilities Warden acts
// on as initialize announces them.
//
// It only describes messages; sending them is lsp's client.
package wire
