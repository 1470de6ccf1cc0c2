//go:build unix

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals"
)

// commandWorkspace is a git workspace as an agent finds it: committed
// files (one executable), one edited but not committed, one untracked.
type commandWorkspace struct {
	t    *testing.T
	dir  string
	want map[string]string      // path → content
	mode map[string]os.FileMode // path → permission bits
}

func newCommandWorkspace(t *testing.T) *commandWorkspace {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // its own undo history
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	w := &commandWorkspace{t: t, dir: t.TempDir(), want: map[string]string{}, mode: map[string]os.FileMode{}}
	w.git("init", "-q")
	w.file("src/a.go", "package a\n", 0o644)
	w.file("src/tool.sh", "#!/bin/sh\necho tool\n", 0o755)
	w.file("src/edited.go", "package edited\n", 0o644)
	w.file("README.md", "# project\n", 0o644)
	w.git("add", ".")
	w.git("commit", "-qm", "init")
	w.file("src/edited.go", "package edited // not committed yet\r\n", 0o600)
	w.file("src/untracked.bin", "\x00\x01\x02 mine\xff", 0o640)
	return w
}

func (w *commandWorkspace) git(args ...string) {
	w.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", w.dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "-c", "gc.auto=0"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (w *commandWorkspace) file(rel, content string, mode os.FileMode) {
	w.t.Helper()
	p := filepath.Join(w.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		w.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		w.t.Fatal(err)
	}
	w.want[rel], w.mode[rel] = content, mode
}

// check fails unless every file is as written, byte for byte, with its mode.
func (w *commandWorkspace) check(when string) {
	w.t.Helper()
	for rel, content := range w.want {
		p := filepath.Join(w.dir, rel)
		data, err := os.ReadFile(p)
		if err != nil || string(data) != content {
			w.t.Errorf("%s: %s is %q (%v), want %q", when, rel, data, err, content)
			continue
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != w.mode[rel] {
			w.t.Errorf("%s: %s has mode %v, want %v", when, rel, fi.Mode().Perm(), w.mode[rel])
		}
	}
}

// gitState is what of the repository undo must never touch: its refs,
// objects and stash.
func (w *commandWorkspace) gitState() string {
	w.t.Helper()
	var b strings.Builder
	filepath.WalkDir(filepath.Join(w.dir, ".git"), func(p string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(w.dir, p)
		if err == nil && (strings.HasPrefix(rel, ".git/objects") || strings.HasPrefix(rel, ".git/refs") || rel == ".git/packed-refs" || rel == ".git/logs") {
			b.WriteString(rel + "\n")
		}
		return nil
	})
	return b.String()
}

// `rm -rf src` in a git workspace, through the real sandbox, says what it
// deleted; `warden undo` brings back the committed, edited and untracked
// files byte for byte with their modes and removes what the command made,
// without writing to the repository; a second undo says it was done.
func TestUndoBringsBackWhatACommandDeleted(t *testing.T) {
	w := newCommandWorkspace(t)
	before := w.gitState()
	_, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", "rm -rf src && echo made > made.txt")
	if code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"deleted 4 files under src/ (2 not committed)", "created made.txt", "warden undo"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("exec's line should say %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(w.dir, "src")); !os.IsNotExist(err) {
		t.Fatalf("src survived the rm: %v", err)
	}

	stdout, stderr, code := runWarden(t, "undo", "--cwd", w.dir)
	if code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "undid `rm -rf src && echo made > made.txt`") || !strings.Contains(stdout, "4 files restored, 1 removed") {
		t.Errorf("undo says:\n%s", stdout)
	}
	w.check("after undo")
	if _, err := os.Stat(filepath.Join(w.dir, "made.txt")); !os.IsNotExist(err) {
		t.Errorf("the file the command made is still there: %v", err)
	}
	if after := w.gitState(); after != before {
		t.Errorf("the repository changed:\nbefore\n%s\nafter\n%s", before, after)
	}
	if _, stderr, code := runWarden(t, "undo", "--cwd", w.dir); code != 1 || !strings.Contains(stderr, "already undone") {
		t.Errorf("second undo: exit %d, %s", code, stderr)
	}
}

// Undo refuses, naming the file and --force, when the user edited what the
// command wrote; --force reverts it all the same.
func TestUndoOfACommandRefusesOverTheUsersEdit(t *testing.T) {
	w := newCommandWorkspace(t)
	if _, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", "echo overwritten > README.md"); code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "README.md"), []byte("the user's edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runWarden(t, "undo", "--cwd", w.dir)
	if code != 1 || !strings.Contains(stderr, "README.md") || !strings.Contains(stderr, "warden undo --force") {
		t.Fatalf("undo over an edit: exit %d, %s", code, stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(w.dir, "README.md")); string(data) != "the user's edit\n" {
		t.Fatalf("a refused undo changed README.md: %q", data)
	}
	if _, stderr, code := runWarden(t, "undo", "--cwd", w.dir, "--force"); code != 0 {
		t.Fatalf("undo --force: exit %d, %s", code, stderr)
	}
	w.check("after undo --force")
}

// Two commands are undone in two steps, newest first; --list shows them,
// doctor counts them, and --clear forgets them.
func TestUndoStepsListAndClear(t *testing.T) {
	w := newCommandWorkspace(t)
	for _, script := range []string{"echo one > README.md", "rm src/untracked.bin"} {
		if _, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", script); code != 0 {
			t.Fatalf("exec %s: exit %d\n%s", script, code, stderr)
		}
	}
	stdout, _, code := runWarden(t, "undo", "--cwd", w.dir, "--list")
	if code != 0 || strings.Count(stdout, "command") != 2 || strings.Index(stdout, "rm src/untracked.bin") > strings.Index(stdout, "echo one") {
		t.Errorf("--list (newest first):\n%s", stdout)
	}
	stdout, stderr, code := runWarden(t, "undo", "--cwd", w.dir, "--steps", "2")
	if code != 0 || strings.Count(stdout, "undid") != 2 {
		t.Fatalf("--steps 2: exit %d\n%s%s", code, stdout, stderr)
	}
	w.check("after two steps")
	stdout, _, _ = runWarden(t, "doctor")
	if !strings.Contains(stdout, "undo history") || !strings.Contains(stdout, "2 recorded changes") {
		t.Errorf("doctor:\n%s", stdout)
	}
	if stdout, stderr, code := runWarden(t, "undo", "--clear"); code != 0 || !strings.Contains(stdout, "forgot every recorded change") {
		t.Fatalf("--clear: exit %d %s%s", code, stdout, stderr)
	}
	if stdout, _, _ := runWarden(t, "undo", "--cwd", w.dir, "--list"); !strings.Contains(stdout, "no change recorded") {
		t.Errorf("after --clear, --list says:\n%s", stdout)
	}
}

// ATTACK: the undo history keeps copies of files from every workspace,
// including one that read_deny hides where it is; a sandboxed command in
// another workspace must not read that copy from Warden's state.
// TWIN: the command still reads its own workspace, and undo (Warden,
// outside the sandbox) still reads the history.
func TestUndoHistoryIsHiddenFromSandboxedCommands(t *testing.T) {
	w := newCommandWorkspace(t)
	secret := "API_TOKEN=hunter2-" + filepath.Base(w.dir) + "\n"
	w.file(".env", secret, 0o600)
	// A recorded run in the first workspace rewrites its untracked .env:
	// the history keeps a copy of the secret. Then the user hides .env.
	if _, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", "echo x > out.txt; echo rotated > .env"); code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	cfgDir := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "warden")
	os.MkdirAll(cfgDir, 0o700)
	if err := os.WriteFile(filepath.Join(cfgDir, "config.toml"), []byte("read_deny = ["+strconv.Quote(filepath.Join(w.dir, ".env"))+"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(secret))
	name := hex.EncodeToString(sum[:])
	blob := filepath.Join(os.Getenv("XDG_STATE_HOME"), "warden", "checkpoints", "store", "blobs", name[:2], name[2:])
	if data, err := os.ReadFile(blob); err != nil || string(data) != secret {
		t.Fatalf("the store should hold the copy at %s: %q, %v", blob, data, err)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "mine.txt"), []byte("mine\n"), 0o644)
	stdout, _, code := runWarden(t, "exec", "--cwd", other, "--", "sh", "-c", "cat "+blob+"; cat mine.txt")
	if strings.Contains(stdout, "hunter2") {
		t.Fatalf("a sandboxed command read the copy of a read_deny file from the undo history (exit %d):\n%s", code, stdout)
	}
	if !strings.Contains(stdout, "mine\n") {
		t.Errorf("the twin: the command should read its own workspace: %q", stdout)
	}
	if _, stderr, code := runWarden(t, "undo", "--cwd", w.dir); code != 0 {
		t.Errorf("undo: exit %d %s", code, stderr)
	}
}

// ATTACK: Warden's state directory holds other sessions' transcripts (the
// conversation, the model's earlier tool results) and the audit log (every
// command and answer); a sandboxed command must read neither, nor find out
// what the directory holds.
// TWIN: the command still reads its own workspace, and Warden itself still
// appends to the audit log.
func TestStateDirectoryIsHiddenFromSandboxedCommands(t *testing.T) {
	marker := "state-marker-" + filepath.Base(t.TempDir())
	first := newCommandWorkspace(t)
	if _, stderr, code := runWarden(t, "exec", "--cwd", first.dir, "--", "sh", "-c", "echo "+marker+" > out.txt"); code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	state := filepath.Join(os.Getenv("XDG_STATE_HOME"), "warden")
	audit := filepath.Join(state, approvals.AuditFile)
	if data, err := os.ReadFile(audit); err != nil || !strings.Contains(string(data), marker) {
		t.Fatalf("the audit log at %s should name the first command: %v\n%s", audit, err, data)
	}
	transcript := filepath.Join(state, "sessions", "earlier.md")
	os.MkdirAll(filepath.Dir(transcript), 0o700)
	if err := os.WriteFile(transcript, []byte("the user pasted "+marker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "mine.txt"), []byte("mine\n"), 0o644)
	script := "cat " + audit + " " + transcript + "; ls -a " + state + " " + filepath.Join(state, "sessions") + "; cat mine.txt"
	stdout, stderr, code := runWarden(t, "exec", "--cwd", other, "--", "sh", "-c", script)
	if strings.Contains(stdout, marker) || strings.Contains(stdout, "earlier.md") || strings.Contains(stdout, approvals.AuditFile) {
		t.Fatalf("a sandboxed command read Warden's state directory (exit %d):\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "mine\n") {
		t.Errorf("the twin: the command should read its own workspace: %q %s", stdout, stderr)
	}
	if data, _ := os.ReadFile(audit); !strings.Contains(string(data), "mine.txt") {
		t.Errorf("the twin: Warden should still log the second command in %s", audit)
	}
}

// ATTACK: a command that changes only permission bits (a script made
// executable, a key file opened to the group) is recorded; undo must put
// the bits back, not find the content unchanged and skip the file.
func TestUndoRestoresWhatAChmodChanged(t *testing.T) {
	w := newCommandWorkspace(t)
	script := "chmod +x README.md && chmod 644 src/edited.go && chmod -x src/tool.sh"
	if _, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", script); code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	if fi, _ := os.Stat(filepath.Join(w.dir, "README.md")); fi.Mode().Perm() != 0o755 {
		t.Fatalf("the chmod did not run: README.md has mode %v", fi.Mode().Perm())
	}
	stdout, stderr, code := runWarden(t, "undo", "--cwd", w.dir)
	if code != 0 || !strings.Contains(stdout, "3 files restored") {
		t.Fatalf("undo: exit %d\n%s%s", code, stdout, stderr)
	}
	w.check("after undo of a chmod")
}

// TWIN: a chmod the user makes after the command is theirs: undo refuses,
// naming the file, and leaves it; --force puts the command's file back.
func TestUndoOfAChmodRefusesOverTheUsersChmod(t *testing.T) {
	w := newCommandWorkspace(t)
	if _, stderr, code := runWarden(t, "exec", "--cwd", w.dir, "--", "sh", "-c", "chmod +x README.md"); code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, stderr)
	}
	readme := filepath.Join(w.dir, "README.md")
	if err := os.Chmod(readme, 0o640); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runWarden(t, "undo", "--cwd", w.dir)
	if code != 1 || !strings.Contains(stderr, "README.md") || !strings.Contains(stderr, "--force") {
		t.Fatalf("undo over the user's chmod: exit %d, %s", code, stderr)
	}
	if fi, _ := os.Stat(readme); fi.Mode().Perm() != 0o640 {
		t.Fatalf("a refused undo changed README.md's mode to %v", fi.Mode().Perm())
	}
	if _, stderr, code := runWarden(t, "undo", "--cwd", w.dir, "--force"); code != 0 {
		t.Fatalf("undo --force: exit %d, %s", code, stderr)
	}
	w.check("after undo --force")
}
