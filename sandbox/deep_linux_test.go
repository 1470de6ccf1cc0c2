package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wardenhq/warden/sandbox/protect"
)

// bothWays runs f as a one-shot process runs commands (each run scans the
// roots before and after) and as a long-lived one does (spare helpers kept:
// the index serves the workspace).
func bothWays(t *testing.T, f func(t *testing.T)) {
	t.Run("one-shot", f)
	t.Run("kept", func(t *testing.T) {
		KeepSpareHelpers(true)
		defer KeepSpareHelpers(false)
		f(t)
	})
}

// Attack: a run makes a repository four levels down with a core.fsmonitor,
// and an .envrc five levels down, that the user's shell prompt would obey
// on the host once they cd there. Both are moved away at the end of the
// run and reported. Twins: an ordinary file next to them lands, and a
// sandboxed git commit in the workspace's repository works.
func TestDeepCreatedProtectedEntriesMovedAway(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		ws := t.TempDir()
		if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		run(t, ws, Command{Argv: sh(`true`), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}}) // the index, when kept, is built
		script := `set -e
mkdir -p a/b/c/d x/y/z/w/v
git init -q a/b/c/d
printf '[core]\n\tfsmonitor = touch pwned\n' >> a/b/c/d/.git/config
echo ok > a/b/c/d/file
echo 'export A=1' > x/y/z/w/v/.envrc
echo twin > x/y/z/w/v/notes.txt
git add x/y/z/w/v/notes.txt && git -c user.name=t -c user.email=t@example.com commit -qm twin && echo committed`
		res := run(t, ws, Command{Argv: sh(script), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
		if res.ExitCode != 0 || !strings.Contains(string(res.Output), "committed") {
			t.Fatalf("twin: the run failed: %+v %s", res, res.Output)
		}
		var removed []string
		for _, r := range res.Removed {
			removed = append(removed, r.Path)
		}
		for _, p := range []string{"a/b/c/d/.git", "x/y/z/w/v/.envrc"} {
			if !slices.Contains(removed, filepath.Join(ws, p)) {
				t.Errorf("attack: %s is not reported moved away: %q", p, removed)
			}
			if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
				t.Errorf("attack: %s the run created is still there", p)
			}
		}
		for _, p := range []string{"a/b/c/d/file", "x/y/z/w/v/notes.txt"} {
			if _, err := os.Stat(filepath.Join(ws, p)); err != nil {
				t.Errorf("twin: %s: %v", p, err)
			}
		}
		if len(res.Removed) != 2 {
			t.Errorf("want 2 moved away: %v", res.Removed)
		}
		if kept := keepingSpares(); protect.IndexServes(ws) != kept {
			t.Errorf("the index serves %s: %v, want %v", ws, !kept, kept)
		}
	})
}

// Attack: existing protected names six levels down in a tree of 22,420
// directories (10,420 and a vendor directory of 12,000: beyond the scan's
// old bound of 20,000 directories or 100 ms) are rewritten by a run; they
// stay as they were, and nothing says the scan was cut. Twin: a new file
// beside them lands, and nothing is moved away.
func TestDeepExistingHeldInLargeTree(t *testing.T) {
	ws := t.TempDir()
	deep := makeBigTree(t, ws, false)
	for i := range 12000 {
		if err := os.MkdirAll(filepath.Join(ws, "vendor", strconv.Itoa(i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bothWays(t, func(t *testing.T) {
		chain := filepath.Dir(deep[1])
		rel, _ := filepath.Rel(ws, chain)
		res := run(t, ws, Command{Argv: sh(`cd ` + rel + ` && { echo evil >> mise.toml; echo evil >> .envrc; echo '[core]' >> ` + deep[0] + `/config; echo ok > new.txt; } 2>/dev/null; echo done`), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
		if !strings.Contains(string(res.Output), "done") {
			t.Fatalf("%+v %s", res, res.Output)
		}
		for _, p := range []string{deep[1], deep[2], filepath.Join(deep[0], "config")} {
			if b, err := os.ReadFile(p); err != nil || string(b) != "# deep\n" {
				t.Errorf("attack: %s now %q (%v)", p, b, err)
			}
		}
		if b, err := os.ReadFile(filepath.Join(chain, "new.txt")); err != nil || string(b) != "ok\n" {
			t.Errorf("twin: new.txt %q %v", b, err)
		}
		if len(res.Removed) != 0 || len(res.NotEnforced) != 0 {
			t.Errorf("want nothing moved and nothing unenforced: %v %v", res.Removed, res.NotEnforced)
		}
		os.Remove(filepath.Join(chain, "new.txt"))
	})
}
