package agent

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Transcript records a session twice, as it happens: JSON lines for tools
// and a Markdown file for people (the editor opens it with
// window/showDocument). Both are appended event by event, so a crash loses
// at most the event being written.
type Transcript struct {
	// JSONLPath and MarkdownPath are where the two files are.
	JSONLPath, MarkdownPath string

	mu        sync.Mutex
	jsonl, md *os.File
	err       error
}

// Event is one JSON line.
type Event struct {
	Time time.Time `json:"time"`
	// Kind is task, reasoning, assistant, tool_call, tool_result, plan, answer, stopped or error.
	Kind    string          `json:"kind"`
	Text    string          `json:"text,omitempty"`
	Tool    string          `json:"tool,omitempty"`
	CallID  string          `json:"call_id,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"`
	Verdict string          `json:"verdict,omitempty"`
}

// NewSessionID returns a sortable, unique session id.
func NewSessionID() string {
	var b [3]byte
	rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// OpenTranscript creates the session's two files in dir (mode 0600: they
// may hold code and command output).
func OpenTranscript(dir, id string) (*Transcript, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("transcript directory: %w", err)
	}
	t := &Transcript{
		JSONLPath:    filepath.Join(dir, id+".jsonl"),
		MarkdownPath: filepath.Join(dir, id+".md"),
	}
	var err error
	if t.jsonl, err = os.OpenFile(t.JSONLPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	if t.md, err = os.OpenFile(t.MarkdownPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		t.jsonl.Close()
		return nil, fmt.Errorf("transcript: %w", err)
	}
	fmt.Fprintf(t.md, "# Warden session %s\n", id)
	return t, nil
}

// Record appends one event to both files. A failed write is remembered
// (Err) and does not stop the session: the transcript is a record, not a
// dependency.
func (t *Transcript) Record(e Event) {
	if t == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	line, _ := json.Marshal(e)
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := t.jsonl.Write(append(line, '\n')); err != nil && t.err == nil {
		t.err = err
	}
	if _, err := t.md.WriteString(markdown(e)); err != nil && t.err == nil {
		t.err = err
	}
}

// Err returns the first write error, if any.
func (t *Transcript) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// Close closes both files.
func (t *Transcript) Close() error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	err1 := t.jsonl.Close()
	err2 := t.md.Close()
	if err1 != nil {
		return err1
	}
	return err2
}

func markdown(e Event) string {
	at := e.Time.Format("15:04:05")
	switch e.Kind {
	case "task":
		return fmt.Sprintf("\n## Task (%s)\n\n%s\n", at, e.Text)
	case "reasoning":
		// Collapsed: the editor shows the transcript beside the code, and
		// the model's thinking is there to open, not to read as the answer.
		return fmt.Sprintf("\n<details><summary>Reasoning</summary>\n\n%s\n</details>\n", fence("text", e.Text))
	case "assistant":
		return fmt.Sprintf("\n**Agent:** %s\n", e.Text)
	case "tool_call":
		return fmt.Sprintf("\n### `%s` (%s)\n\n%s", e.Tool, at, fence("json", string(e.Args)))
	case "tool_result":
		head := "Result"
		if e.Verdict != "" && e.Verdict != Ran.String() {
			head = "Result: " + e.Verdict
		}
		return fmt.Sprintf("\n%s:\n\n%s", head, fence("text", e.Text))
	case "plan":
		return fmt.Sprintf("\n**Plan:**\n\n%s", fence("text", e.Text))
	case "answer":
		return fmt.Sprintf("\n## Answer (%s)\n\n%s\n", at, e.Text)
	case "stopped":
		return fmt.Sprintf("\n## Stopped (%s)\n\n%s\n", at, e.Text)
	case "error":
		return fmt.Sprintf("\n## Error (%s)\n\n%s\n", at, e.Text)
	}
	return fmt.Sprintf("\n%s: %s\n", e.Kind, e.Text)
}

// fence wraps text in a code fence longer than any backtick run inside it.
func fence(lang, text string) string {
	ticks := "```"
	for strings.Contains(text, ticks) {
		ticks += "`"
	}
	return ticks + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + ticks + "\n"
}
