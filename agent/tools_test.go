package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncateKeepsHeadAndTail(t *testing.T) {
	if got := Truncate("short", 100); got != "short" {
		t.Errorf("short text changed: %q", got)
	}
	s := strings.Repeat("é", 50000) // two bytes each: cuts must not split runes
	got := Truncate(s, 1000)
	if len(got) > 1000 || !utf8.ValidString(got) {
		t.Errorf("len %d, valid %v", len(got), utf8.ValidString(got))
	}
	if !strings.Contains(got, "omitted from the middle of 100000 bytes") {
		t.Errorf("note missing: %q", got)
	}
	lines := strings.Repeat("0123456789\n", 10000)
	got = Truncate(lines, 2000)
	head, tail, _ := strings.Cut(got, "[...")
	if !strings.HasSuffix(head, "0123456789\n") || !strings.HasPrefix(tail[strings.Index(tail, "\n")+1:], "0123456789\n") {
		t.Errorf("cuts are not on line boundaries:\n%s", got)
	}
}

func TestReadFileRefusesLinksOutOfTheWorkspace(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("key"), 0o600)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "big.txt"), []byte(strings.Repeat("line\n", 3000)), 0o644)
	os.WriteFile(filepath.Join(dir, "bin"), []byte{0x7f, 'E', 'L', 'F', 0, 1}, 0o644)
	reg := NewRegistry(&ToolEnv{Dir: dir})
	ctx := context.Background()
	if got := reg.Call(ctx, "read_file", `{"path":"link"}`).Content; !strings.Contains(got, "outside the readable roots") {
		t.Errorf("symlink escape: %q", got)
	}
	if got := reg.Call(ctx, "read_file", `{"path":"`+filepath.Join(outside, "secret")+`"}`).Content; !strings.Contains(got, "outside the readable roots") {
		t.Errorf("absolute path outside: %q", got)
	}
	got := reg.Call(ctx, "read_file", `{"path":"big.txt","offset":2999,"limit":5}`).Content
	if got != "  2999\tline\n  3000\tline\n" {
		t.Errorf("offset/limit: %q", got)
	}
	if got := reg.Call(ctx, "read_file", `{"path":"big.txt"}`).Content; !strings.Contains(got, "[1000 more lines; read on with offset 2001]") {
		t.Errorf("default limit note missing: %q", got[len(got)-80:])
	}
	if got := reg.Call(ctx, "read_file", `{"path":"bin"}`).Content; !strings.Contains(got, "binary file") {
		t.Errorf("binary: %q", got)
	}
	if got := reg.Call(ctx, "read_file", `{"path":"absent.go"}`).Content; !strings.Contains(got, "cannot read") || !strings.Contains(got, "no such file") {
		t.Errorf("missing file: %q", got)
	}
	// Extra readable roots widen what may be read.
	reg = NewRegistry(&ToolEnv{Dir: dir, Roots: []string{dir, outside}})
	if got := reg.Call(ctx, "read_file", `{"path":"link"}`).Content; got != "     1\tkey\n" {
		t.Errorf("with the extra root: %q", got)
	}
}

func TestToolSchemasMatchTheContract(t *testing.T) {
	want := map[string][]string{
		"shell":       {"command", "workdir", "timeout_ms", "sandbox_permissions", "justification", "prefix_rule"},
		"apply_patch": {"input"},
		"read_file":   {"path", "offset", "limit"},
		"list_dir":    {"path", "depth"},
		"update_plan": {"plan"},
	}
	defs := NewRegistry(nil).Definitions()
	if len(defs) != len(want) {
		t.Fatalf("%d tools", len(defs))
	}
	for _, d := range defs {
		props := d.Function.Parameters.(interface{ MarshalJSON() ([]byte, error) })
		raw, _ := props.MarshalJSON()
		for _, field := range want[d.Function.Name] {
			if !strings.Contains(string(raw), `"`+field+`":`) {
				t.Errorf("%s lacks %s", d.Function.Name, field)
			}
		}
	}
}
