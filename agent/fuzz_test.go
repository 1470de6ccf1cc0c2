package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzToolCall: whatever name and arguments a model sends, a tool call
// answers with a message (never a panic), bounded in size.
func FuzzToolCall(f *testing.F) {
	for _, seed := range [][2]string{
		{"read_file", `{"path":"a.txt","offset":2,"limit":1}`},
		{"read_file", `{"path": "a.txt"`},
		{"list_dir", `{"path":".","depth":9}`},
		{"shell", `{"command":"ls"}`},
		{"shell", `{"command":["ls"],"timeout_ms":-1,"prefix_rule":["rm"]}`},
		{"update_plan", `{"plan":[{"step":"x","status":"in_progress"},{"step":"y","status":"in_progress"}]}`},
		{"apply_patch", `{"input":""}`},
		{"nope", `[]`},
		{"read_file", `{"path":"../../etc/passwd"}{}`},
	} {
		f.Add(seed[0], seed[1])
	}
	dir := f.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	reg := NewRegistry(&ToolEnv{Dir: dir})
	f.Fuzz(func(t *testing.T, name, args string) {
		res := reg.Call(context.Background(), name, args)
		if res.Content == "" {
			t.Fatalf("%s(%q): empty answer", name, args)
		}
		if len(res.Content) > MaxToolOutput {
			t.Fatalf("%s: %d bytes", name, len(res.Content))
		}
	})
}

// FuzzAccumulator: any sequence of stream chunks merges without a panic,
// and well-formed fragments reassemble exactly.
func FuzzAccumulator(f *testing.F) {
	f.Add(`{"path":"main.go"}`, 3, true)
	f.Add(`{"command":["go","test"]}`, 1, false)
	f.Fuzz(func(t *testing.T, args string, chunk int, withIndex bool) {
		if chunk < 1 || chunk > 64 || !utf8.ValidString(args) {
			return
		}
		var a accumulator
		zero := 0
		for i, end := 0, 0; i < len(args) || i == 0; i = end {
			// Fragments are JSON strings, which end on a character
			// boundary, as a real stream's do.
			end = min(i+chunk, len(args))
			for end < len(args) && !utf8.RuneStart(args[end]) {
				end++
			}
			var tc wireCallDelta
			tc.Function.Arguments, _ = json.Marshal(args[i:end])
			if i == 0 {
				tc.ID, tc.Function.Name = "c1", "read_file"
			}
			if withIndex {
				tc.Index = &zero
			}
			a.add(wireDelta{ToolCalls: []wireCallDelta{tc}})
			if len(args) == 0 {
				break
			}
		}
		r := a.reply()
		if len(r.ToolCalls) != 1 || r.ToolCalls[0].Function.Arguments != args || r.ToolCalls[0].ID != "c1" {
			t.Fatalf("merged %+v from %q", r.ToolCalls, args)
		}
		// And garbage streams never panic.
		readStream(bufio.NewReader(strings.NewReader("data: "+args+"\n\nerror: "+args+"\n")), nil, nil)
		readWhole(strings.NewReader(args), nil, nil)
	})
}

// FuzzCommentInstruction never panics and returns trimmed instructions.
func FuzzCommentInstruction(f *testing.F) {
	f.Add("// warden: do it")
	f.Add("<!-- warden: x -->")
	f.Fuzz(func(t *testing.T, line string) {
		if got, ok := CommentInstruction(line); ok && (got == "" || got != strings.TrimSpace(got)) {
			t.Fatalf("%q -> %q", line, got)
		}
	})
}
