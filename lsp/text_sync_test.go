package lsp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/lsp/lsptest"
)

func rng(l1, c1, l2, c2 uint32) protocol.Range {
	return protocol.Range{Start: protocol.Position{Line: l1, Character: c1}, End: protocol.Position{Line: l2, Character: c2}}
}

// selected returns the text the test provider saw in the range and the
// version, from its "Test: upper-case «…» (vN)" action title.
func selected(t *testing.T, c *lsptest.Client, uri protocol.DocumentURI, r protocol.Range) string {
	t.Helper()
	for _, a := range c.CodeActions(uri, r) {
		if strings.HasPrefix(a.Title, "Test: upper-case «") {
			return strings.TrimPrefix(a.Title, "Test: upper-case ")
		}
	}
	t.Fatalf("no test code action for %v", r)
	return ""
}

func startTest(t *testing.T) *lsptest.Client {
	t.Helper()
	c := lsptest.Start(t, lsptest.Options{Bin: lsptest.TestBinary(t)})
	c.Initialize(nil)
	return c
}

func TestIncrementalEditsWithNonASCIIAndCRLF(t *testing.T) {
	c := startTest(t)
	// "héllo 😀 wörld": é and ö are one UTF-16 unit, 😀 is two.
	uri := c.Open("a.txt", "plaintext", "first\r\nhéllo 😀 wörld\r\nlast")
	if got := selected(t, c, uri, rng(1, 9, 1, 14)); got != "«wörld» (v1)" {
		t.Fatalf("after the emoji (UTF-16 columns): got %s", got)
	}
	// Replace the emoji (columns 6-8) with text; the CRLF line ends stay.
	c.Change(uri, lsptest.Replace(1, 6, 1, 8, "ünïcode"))
	if got := selected(t, c, uri, rng(1, 0, 2, 4)); got != "«héllo ünïcode wörld\r\nlast» (v2)" {
		t.Fatalf("after replacing the emoji: got %q", got)
	}
	// Several changes in one didChange apply in order; a line break inserted
	// as a lone \r still counts as a line end.
	c.Change(uri, lsptest.Replace(0, 5, 0, 5, "!\r"), lsptest.Replace(1, 0, 1, 0, ">"))
	if got := selected(t, c, uri, rng(1, 0, 1, 1)); got != "«>» (v3)" {
		t.Fatalf("after a \\r line break: got %q", got)
	}
	// A character past the end of a line means the line's end.
	if got := selected(t, c, uri, rng(3, 0, 3, 99)); got != "«last» (v3)" {
		t.Fatalf("clamped column: got %q", got)
	}
	// A full-text change replaces everything.
	c.Change(uri, lsptest.Edit{Text: "new"})
	if got := selected(t, c, uri, rng(0, 0, 0, 3)); got != "«new» (v4)" {
		t.Fatalf("full change: got %q", got)
	}
}

func TestBadDidChangeIsReportedAndOtherDocumentsKeepWorking(t *testing.T) {
	c := startTest(t)
	good := c.Open("good.txt", "plaintext", "one\ntwo\n")
	bad := c.Open("bad.txt", "plaintext", "x\n")

	// A change for a document that was never opened.
	c.Change(c.URI("never.txt"), lsptest.Replace(0, 0, 0, 0, "x"))
	// A change past the end of bad.txt: it is now out of sync.
	c.Change(bad, lsptest.Replace(5, 0, 5, 0, "y"))
	c.WaitFor("window/showMessage", lsptest.MessageContains("bad.txt"))

	c.Change(good, lsptest.Replace(1, 0, 1, 3, "TWO"))
	if got := selected(t, c, good, rng(1, 0, 1, 3)); got != "«TWO» (v2)" {
		t.Fatalf("the good document: %q", got)
	}
	c.WaitLog("never.txt, which is not open")
	c.WaitLog("line 5 is past the end of the document")
	// The out-of-sync document is refused rather than served stale...
	err := c.Call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": bad}, "range": rng(0, 0, 0, 1), "context": map[string]any{"diagnostics": []any{}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "out of sync") {
		t.Fatalf("code action on an out-of-sync document: %v", err)
	}
	// ...until the editor sends the whole text again.
	c.Change(bad, lsptest.Edit{Text: "fresh\n"})
	if got := selected(t, c, bad, rng(0, 0, 0, 5)); !strings.HasPrefix(got, "«fresh»") {
		t.Fatalf("after a full resync: %q", got)
	}
}

func TestStatusReportsState(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.go"), []byte("package x\n"), 0o600)
	c := lsptest.Start(t, lsptest.Options{Dir: dir, Bin: lsptest.TestBinary(t)})
	c.Initialize(map[string]any{"sandboxMode": "read-only", "networkAccess": true})
	c.Open("x.go", "go", "package x\n")
	c.Open("y.go", "go", "package y\n")
	st := c.Status()
	if st.OpenDocuments != 2 {
		t.Errorf("openDocuments = %d", st.OpenDocuments)
	}
	if len(st.WorkspaceFolders) != 1 || st.WorkspaceFolders[0].Path != dir {
		t.Errorf("workspaceFolders = %+v, want %s", st.WorkspaceFolders, dir)
	}
	if st.Policy.SandboxMode != "read-only" || !st.Policy.NetworkAccess || st.Policy.ApprovalPolicy != "on-request" {
		t.Errorf("policy = %+v (initializationOptions not merged over defaults)", st.Policy)
	}
	if !st.Capabilities.ChangeAnnotations || !st.Capabilities.ShowDocument || !st.Capabilities.WorkDoneProgress || st.Client.Name != "lsptest" {
		t.Errorf("client = %+v caps = %+v", st.Client, st.Capabilities)
	}
	if st.Version == "" || len(st.Jobs) != 0 {
		t.Errorf("version %q jobs %v", st.Version, st.Jobs)
	}
	if l := c.Status().Latency["workspace/executeCommand"]; l.Count < 1 || l.MaxMs <= 0 {
		t.Errorf("status latency for executeCommand = %+v", l)
	}

	// Settings changes merge; bad ones are refused with a message and the
	// old settings stay.
	c.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"warden": map[string]any{"approvalPolicy": "untrusted"}}})
	if st := c.Status(); st.Policy.ApprovalPolicy != "untrusted" || st.Policy.SandboxMode != "read-only" {
		t.Errorf("after didChangeConfiguration: %+v", st.Policy)
	}
	c.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"sandboxMode": "yolo"}})
	c.WaitFor("window/showMessage", lsptest.MessageContains("sandbox_mode"))
	if st := c.Status(); st.Policy.SandboxMode != "read-only" {
		t.Errorf("a bad setting changed the policy: %+v", st.Policy)
	}

	// Workspace folders follow the editor.
	other := t.TempDir()
	c.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added":   []any{map[string]any{"uri": c.URI(other), "name": "other"}},
		"removed": []any{map[string]any{"uri": c.URI(dir), "name": "x"}},
	}})
	if st := c.Status(); len(st.WorkspaceFolders) != 1 || st.WorkspaceFolders[0].Path != other {
		t.Errorf("folders after change = %+v", st.WorkspaceFolders)
	}
}

func TestBadInitializationOptionsAreShownAndIgnored(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(map[string]any{"approvalPolicy": "sometimes"})
	c.WaitFor("window/showMessage", lsptest.MessageContains("approval_policy"))
	if st := c.Status(); st.Policy.ApprovalPolicy != "on-request" {
		t.Errorf("policy = %+v", st.Policy)
	}
}
