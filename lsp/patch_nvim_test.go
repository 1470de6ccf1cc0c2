package lsp_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// TestPatchThroughNeovimBuiltinHandler sends a patch through real Neovim's own
// workspace/applyEdit handler (0.7.2 on Debian bookworm; CI installs it):
// the open buffer's unsaved text is patched at its version, a file is moved
// with a hunk, one is deleted and one created, avoiding the 0.7 bugs with
// CreateFile/RenameFile options. Neovim leaves the created file's content in
// an unsaved buffer it does not report, and Warden says so rather than
// claiming it landed.
func TestPatchThroughNeovimBuiltinHandler(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim not installed (CI installs Debian's neovim)")
	}
	ws := t.TempDir()
	write(t, ws, map[string]string{
		"a.txt":    "one\ntwo\nthree\n",
		"old.txt":  "keep\nchange me\n",
		"gone.txt": "bye\n",
	})
	patchText := `*** Begin Patch
*** Update File: a.txt
@@
 one (unsaved)
-two
+TWO
*** Update File: old.txt
*** Move to: moved.txt
@@
 keep
-change me
+changed
*** Delete File: gone.txt
*** Add File: sub/new.txt
+fresh
*** End Patch`
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	script, _ := filepath.Abs("testdata/nvim_patch.lua")
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-u", "NONE", "-c", "luafile "+script)
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "WS="+ws, "WARDEN_BIN="+lsptest.Binary(t), "PATCH="+patchText,
		"XDG_STATE_HOME="+home+"/state", "XDG_CONFIG_HOME="+home+"/config", "XDG_DATA_HOME="+home+"/data")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdin = nil
	if err := cmd.Run(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, stderr.String())
	}
	outText := stderr.String()
	line := func(prefix string) string {
		// Neovim may print a message without a line break before it.
		for _, l := range strings.Split(outText, "\n") {
			if _, after, ok := strings.Cut(l, prefix); ok {
				return after
			}
		}
		t.Fatalf("no %q line in:\n%s", prefix, outText)
		return ""
	}
	result, buffer := line("RESULT: "), line("BUFFER: ")
	if buffer != "one (unsaved) | TWO | three" {
		t.Errorf("a.txt buffer = %q", buffer)
	}
	for _, want := range []string{"M a.txt", "R old.txt -> moved.txt", "D gone.txt", "not applied: sub/new.txt"} {
		if !strings.Contains(result, want) {
			t.Errorf("result %q lacks %q", result, want)
		}
	}
	if got, _ := fileText(t, filepath.Join(ws, "a.txt")); got != "one\ntwo\nthree\n" {
		t.Errorf("a.txt on disk = %q: the buffer must stay unsaved", got)
	}
	if got, ok := fileText(t, filepath.Join(ws, "moved.txt")); !ok || got != "keep\nchanged\n" {
		t.Errorf("moved.txt = %q, %v", got, ok)
	}
	for _, gone := range []string{"old.txt", "gone.txt"} {
		if _, ok := fileText(t, filepath.Join(ws, gone)); ok {
			t.Errorf("%s still exists", gone)
		}
	}
	if got, ok := fileText(t, filepath.Join(ws, "sub/new.txt")); !ok || got != "" {
		t.Errorf("sub/new.txt = %q, %v: Neovim creates it empty and keeps the text in a buffer", got, ok)
	}
}
