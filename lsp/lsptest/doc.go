// Package lsptest drives the real warden binary over pipes as an LSP client,
// so end-to-end tests read like the user's story: open a file, ask for code
// actions, run a command, answer the approval dialog, check the edit.
//
// The client records every message in both directions, answers server→client
// requests from a script (OnRequest), and fails the test with the server's
// log and the message trace when something goes wrong.
//
//	c := lsptest.Start(t, lsptest.Options{Dir: dir})
//	c.Initialize(nil)
//	uri := c.Open(filepath.Join(dir, "main.go"), "go", src)
//	c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
//	c.ExecuteCommand("warden.status")
//	c.WaitFor("$/progress", lsptest.ProgressKind("end"))
//
// Tests in the same package as the code under test cannot import lsptest
// (it imports lsp); write them as package lsp_test.
package lsptest
