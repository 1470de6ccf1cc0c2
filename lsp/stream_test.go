package lsp_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/lsp/lsptest"
)

func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

// stillServes checks that the server answers a normal request.
func stillServes(t *testing.T, c *lsptest.Client) {
	t.Helper()
	if st := c.Status(); st.Version == "" {
		t.Fatalf("status after bad input: %+v", st)
	}
}

// errorReply waits for an error response with the given id (null for
// unknown) from mark on and returns its message.
func errorReply(t *testing.T, c *lsptest.Client, mark int, id string, code int64) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range c.Messages()[mark:] {
			if m.Dir == lsptest.Received && m.Method == "" && m.Error != nil && string(m.ID) == id && m.Error.Code == code {
				return m.Error.Message
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no error reply with id %s and code %d:\n%s", id, code, c.Trace())
	return ""
}

func TestMalformedJSONGetsParseErrorAndServingContinues(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(nil)
	mark := c.Mark()
	c.WriteRaw([]byte(frame(`{"jsonrpc":"2.0","id":50,"method":`)))
	if msg := errorReply(t, c, mark, "null", lsptest.CodeParseError); !strings.Contains(msg, "JSON") {
		t.Errorf("parse error message %q", msg)
	}
	stillServes(t, c)
}

func TestNotJSONRPCGetsInvalidRequestWithItsID(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(nil)
	mark := c.Mark()
	c.WriteRaw([]byte(frame(`{"jsonrpc":"1.0","id":51,"method":"workspace/executeCommand"}`)))
	if msg := errorReply(t, c, mark, "51", lsptest.CodeInvalidRequest); !strings.Contains(msg, `"jsonrpc":"2.0"`) {
		t.Errorf("invalid request message %q", msg)
	}
	stillServes(t, c)
}

func TestMalformedHeadersAreSkipped(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(nil)
	mark := c.Mark()
	// Garbage lines, a header without a colon, then a valid message.
	c.WriteRaw([]byte("hello there\r\nnot a header\r\n\r\n"))
	errorReply(t, c, mark, "null", lsptest.CodeParseError)
	c.WaitLog("skipped a malformed header line")
	stillServes(t, c)
	// A non-numeric and a negative Content-Length.
	mark = c.Mark()
	c.WriteRaw([]byte("Content-Length: lots\r\n\r\n"))
	if msg := errorReply(t, c, mark, "null", lsptest.CodeParseError); !strings.Contains(msg, `bad Content-Length "lots"`) {
		t.Errorf("message %q", msg)
	}
	c.WriteRaw([]byte("Content-Length: -4\r\n\r\n"))
	stillServes(t, c)
	// An over-long header line.
	c.WriteRaw([]byte("X-Junk: " + strings.Repeat("x", 100000) + "\r\n\r\n"))
	c.WaitLog("skipped an over-long header line")
	stillServes(t, c)
}

func TestShortContentLengthResynchronises(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(nil)
	mark := c.Mark()
	body := `{"jsonrpc":"2.0","id":60,"method":"workspace/executeCommand","params":{"command":"warden.status"}}`
	// Declares 20 bytes fewer than it sends; the next message follows at once.
	c.WriteRaw([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body)-20, body)))
	errorReply(t, c, mark, "null", lsptest.CodeParseError)
	stillServes(t, c)
}

func TestLongContentLengthKeepsTheFollowingMessage(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(nil)
	first := `{"jsonrpc":"2.0","id":70,"method":"workspace/executeCommand","params":{"command":"warden.status"}}`
	second := `{"jsonrpc":"2.0","id":71,"method":"workspace/executeCommand","params":{"command":"warden.status"}}`
	// The first header claims 30 more bytes than its body: they come out of
	// the second message, which must still be answered.
	c.WriteRaw([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(first)+30, first) + frame(second)))
	for _, id := range []string{"70", "71"} {
		deadline := time.Now().Add(20 * time.Second)
		for {
			if answered(c, id) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("request %s never answered:\n%s", id, c.Trace())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	c.WaitLog("Content-Length was larger than the message")
	stillServes(t, c)
}

func answered(c *lsptest.Client, id string) bool {
	for _, m := range c.Messages() {
		if m.Dir == lsptest.Received && m.Method == "" && string(m.ID) == id && m.Error == nil {
			return true
		}
	}
	return false
}

func TestHugeMessageIsSkippedWithoutBuffering(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(nil)
	mark := c.Mark()
	// A 33 MB request (over the 32 MiB limit): id first, as editors write it.
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":80,"method":"textDocument/codeAction","params":{"pad":"`)
	b.Write(bytes.Repeat([]byte("x"), 33<<20))
	b.WriteString(`"}}`)
	go c.WriteRaw([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", b.Len()) + b.String()))
	if msg := errorReply(t, c, mark, "80", lsptest.CodeInvalidRequest); !strings.Contains(msg, "limit") {
		t.Errorf("huge message reply %q", msg)
	}
	// A huge notification has no id: the user is told.
	b.Reset()
	b.WriteString(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"pad":"`)
	b.Write(bytes.Repeat([]byte("x"), 33<<20))
	b.WriteString(`"}}`)
	go c.WriteRaw([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", b.Len()) + b.String()))
	c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("textDocument/didOpen"))
	stillServes(t, c)
}

func TestBatchIsRefused(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(nil)
	mark := c.Mark()
	c.WriteRaw([]byte(frame(`[{"jsonrpc":"2.0","id":90,"method":"shutdown"}]`)))
	if msg := errorReply(t, c, mark, "null", lsptest.CodeInvalidRequest); !strings.Contains(msg, "batches") {
		t.Errorf("batch reply %q", msg)
	}
	stillServes(t, c)
}

// A didChange too big to read leaves its document out of sync (never stale),
// found by its URI even when it comes after the content (Neovim sorts keys).
func TestHugeDidChangeMarksItsDocumentOutOfSync(t *testing.T) {
	c := startTest(t)
	big := c.Open("big.txt", "plaintext", "small\n")
	other := c.Open("other.txt", "plaintext", "fine\n")
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"contentChanges":[{"text":"`)
	b.Write(bytes.Repeat([]byte("y"), 33<<20))
	fmt.Fprintf(&b, `"}],"textDocument":{"uri":%q,"version":2}}}`, big)
	mark := c.Mark()
	go c.WriteRaw([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", b.Len()) + b.String()))
	c.WaitFrom(mark, "window/showMessage", lsptest.MessageContains("textDocument/didChange"))
	err := c.Call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": big}, "range": rng(0, 0, 0, 1), "context": map[string]any{"diagnostics": []any{}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "out of sync") {
		t.Fatalf("code action after a skipped change: %v", err)
	}
	if got := selected(t, c, other, rng(0, 0, 0, 4)); got != "«fine» (v1)" {
		t.Errorf("the other document: %q", got)
	}
	c.Change(big, lsptest.Edit{Text: "resent\n"})
	if got := selected(t, c, big, rng(0, 0, 0, 6)); !strings.HasPrefix(got, "«resent»") {
		t.Errorf("after the editor resent the text: %q", got)
	}
}

func TestHeaderVariantsEditorsSend(t *testing.T) {
	c := lsptest.Start(t, lsptest.Options{})
	c.Initialize(nil)
	body := `{"jsonrpc":"2.0","id":95,"method":"workspace/executeCommand","params":{"command":"warden.status"}}`
	// Lower-case name, a Content-Type header, bare \n line ends.
	c.WriteRaw([]byte(fmt.Sprintf("content-length: %d\nContent-Type: application/vscode-jsonrpc; charset=utf-8\n\n%s", len(body), body)))
	deadline := time.Now().Add(20 * time.Second)
	for !answered(c, "95") {
		if time.Now().After(deadline) {
			t.Fatalf("not answered:\n%s", c.Trace())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if strings.Contains(c.Stderr(), "skipped") {
		t.Errorf("valid headers were reported as bad:\n%s", c.Stderr())
	}
}
