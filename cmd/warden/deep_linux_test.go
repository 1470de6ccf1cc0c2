package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Attack through the binary: a one-shot run makes a repository four levels
// down whose config names a core.fsmonitor; the user's git there, on the
// host, would run it (a shell prompt runs git status on cd). The run ends
// with the .git moved away and reported, and the user's git runs nothing.
// Twins in the same run: a file next to it lands, and a sandboxed git
// commit in the workspace's repository works.
func TestDeepCreatedRepositoryMovedAway(t *testing.T) {
	u := newAsUser(t)
	out := u.sh(`set -e; mkdir -p "$WS" "$HOME"; git init -q "$WS"
$W sh -c 'mkdir -p a/b/c/d && git init -q a/b/c/d && printf "[core]\n\tfsmonitor = touch $HOME/pwned\n" >> a/b/c/d/.git/config && echo ok > a/b/c/d/file && git add a/b/c/d/file && git -c user.name=t -c user.email=t@example.com commit -qm twin && echo committed'
cd "$WS/a/b/c/d" && git status >/dev/null 2>&1; echo status=$?`)
	if !strings.Contains(out, "committed") {
		t.Fatalf("twin: the sandboxed commit failed: %s", out)
	}
	if _, err := os.Lstat(filepath.Join(u.base, "ws/a/b/c/d/.git")); err == nil {
		t.Errorf("attack: the repository the run made four levels down is still there: %s", out)
	}
	if !strings.Contains(out, "a/b/c/d/.git") {
		t.Errorf("the run does not report what it moved away: %s", out)
	}
	if _, err := os.Stat(filepath.Join(u.base, "home/pwned")); err == nil {
		t.Errorf("attack: the fsmonitor ran on the host: %s", out)
	}
	if b, err := os.ReadFile(filepath.Join(u.base, "ws/a/b/c/d/file")); err != nil || string(b) != "ok\n" {
		t.Errorf("twin: the file next to it: %q %v", b, err)
	}
}

// Attack through the binary: a mise.toml and an .envrc six levels down in
// a tree of 22,000 directories (an ordinary monorepo with its vendored
// code: beyond the scan's old bound) are rewritten by a run; they stay as
// they were and the run says nothing was cut. Twin: a new file beside them
// lands.
func TestDeepExistingConfigsHeldInLargeTree(t *testing.T) {
	u := newAsUser(t)
	out := u.sh(`set -e; mkdir -p "$WS" "$HOME"; git init -q "$WS"; cd "$WS"
for a in $(seq -w 1 20); do for b in $(seq -w 1 20); do for c in $(seq -w 1 25); do echo "p$a/m$b/s$c"; done; done; done | xargs mkdir -p
mkdir vendor && (cd vendor && seq 1 12000 | xargs mkdir)
mkdir -p p20/m20/s25/a/b/c && echo '# deep' > p20/m20/s25/a/b/c/mise.toml && echo '# deep' > p20/m20/s25/a/b/c/.envrc
$W sh -c 'cd p20/m20/s25/a/b/c; echo evil >> mise.toml; echo evil >> .envrc; echo ok > new.txt && echo twin=$?'`)
	if !strings.Contains(out, "twin=0") {
		t.Fatalf("twin: the write beside them failed: %s", out)
	}
	for _, n := range []string{"mise.toml", ".envrc"} {
		if b, err := os.ReadFile(filepath.Join(u.base, "ws/p20/m20/s25/a/b/c", n)); err != nil || string(b) != "# deep\n" {
			t.Errorf("attack: %s now %q (%v): %s", n, b, err, out)
		}
	}
	if strings.Contains(out, "stopped at its bound") {
		t.Errorf("the scan of an ordinary tree was cut: %s", out)
	}
}
