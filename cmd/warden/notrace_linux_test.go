package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/approvals"
)

// No trace, no noise (issue 12), through the real binary: nothing Warden
// does is left in the workspace or seen by grep -r, find and git status
// inside the sandbox; protected names a command creates are moved to the
// quarantine under the state directory and reported.

// treeListing is every path under dir with its mode, for before/after
// comparisons.
func treeListing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel+" "+info.Mode().String())
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// toolScript runs grep -r, find and git status and prints each status.
const toolScript = `grep -r x . ; echo "grep $?"; find . | sort; echo "find $?"; git status --porcelain 2>&1; echo "git $?"`

// gitPlaceholders are the entries of a git dir that the sandbox holds
// read-only with an empty placeholder while a run needs them, so that the
// command cannot create them (sandbox/gitmask_linux.go): find inside the
// sandbox lists them; the host's tree after the run holds none.
var gitPlaceholders = []string{"./.git/commondir", "./.git/config.worktree", "./.git/hooks", "./.git/modules", "./.git/worktrees"}

// withoutGitPlaceholders drops from the sandbox's tool output the lines of
// placeholders the host's output (want) does not have; nothing else.
func withoutGitPlaceholders(got, want string) string {
	var out strings.Builder
	for _, l := range strings.SplitAfter(got, "\n") {
		if slices.Contains(gitPlaceholders, strings.TrimSuffix(l, "\n")) && !strings.Contains(want, l) {
			continue
		}
		out.WriteString(l)
	}
	return out.String()
}

// noTraceWorkspace is a workspace with files, a repository or not.
func noTraceWorkspace(t *testing.T, home string, repo bool) string {
	t.Helper()
	ws := filepath.Join(home, "ws")
	os.MkdirAll(filepath.Join(ws, "src", "deep"), 0o755)
	os.WriteFile(filepath.Join(ws, "src", "deep", "a.txt"), []byte("x marks the spot\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "README"), []byte("readme\n"), 0o644)
	if repo {
		hostGit(t, ws, "init", "-q")
	}
	return ws
}

func TestNoTraceExecToolsSeeWhatTheHostSees(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, repo := range []bool{false, true} {
		home := t.TempDir()
		ws := noTraceWorkspace(t, home, repo)
		env := append(isolated(home), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		before := treeListing(t, ws)
		if _, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "true"); code != 0 {
			t.Fatalf("true: exit %d %s", code, errOut)
		}
		if after := treeListing(t, ws); !slices.Equal(after, before) {
			t.Errorf("repo %v: warden exec -- true changed the workspace:\nbefore %v\nafter  %v", repo, before, after)
		}
		host := exec.Command("sh", "-c", toolScript)
		host.Dir, host.Env = ws, append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		want, _ := host.CombinedOutput()
		stdout, errOut, code := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "sh", "-c", toolScript+" 2>&1")
		if code != 0 || withoutGitPlaceholders(stdout, string(want)) != string(want) || errOut != "" {
			t.Errorf("repo %v: inside the sandbox (exit %d, stderr %q):\n%s\non the host:\n%s", repo, code, errOut, stdout, want)
		}
		if after := treeListing(t, ws); !slices.Equal(after, before) {
			t.Errorf("repo %v: the tools' run changed the workspace:\nbefore %v\nafter  %v", repo, before, after)
		}
	}
}

// Attacks: create the protected names a host tool obeys; each is gone after
// the run, kept in the quarantine, reported on stderr and in the audit log,
// and the planted fsmonitor never runs on the host. Twins: ordinary names
// like them stay.
func TestNoTraceExecCreatedProtectedNamesAreQuarantined(t *testing.T) {
	home := t.TempDir()
	ws := noTraceWorkspace(t, home, false)
	marks := dirOutsideWritableRoots(t)
	env := isolated(home)
	before := treeListing(t, ws)
	attack := `mkdir .git && printf '[core]\n\tfsmonitor = touch ` + marks + `/pwned\n' > .git/config
echo 'touch ` + marks + `/envrc' > .envrc
mkdir .vscode && echo '{}' > .vscode/tasks.json
mkdir -p sub/.git/hooks && echo x > sub/.git/hooks/x
echo '*.o' > .gitignore; mkdir -p git .github; echo x > git/config; echo x > .github/ci.yml; echo n > sub/notes
true`
	_, errOut, _ := wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--approval", "never", "--cwd", ws, "--", "sh", "-c", attack)
	quarantine := filepath.Join(home, "state", "warden", "quarantine")
	for _, name := range []string{".git", ".envrc", ".vscode", "sub/.git"} {
		if _, err := os.Lstat(filepath.Join(ws, name)); err == nil {
			t.Errorf("attack: %s still in the workspace", name)
		}
		if !strings.Contains(errOut, "warden exec: the sandbox removed "+name+" it created: protected path; kept at "+quarantine+"/") {
			t.Errorf("attack: %s not reported on stderr:\n%s", name, errOut)
		}
	}
	kept, _ := filepath.Glob(filepath.Join(quarantine, "*", strings.TrimPrefix(ws, "/"), "sub", ".git", "hooks", "x"))
	if len(kept) != 1 {
		t.Errorf("sub/.git not kept with its content in %s", quarantine)
	}
	want := append(slices.Clone(before), ".github drwxr-xr-x", ".github/ci.yml -rw-r--r--", ".gitignore -rw-r--r--",
		"git drwxr-xr-x", "git/config -rw-r--r--", "sub drwxr-xr-x", "sub/notes -rw-r--r--")
	slices.Sort(want)
	if after := treeListing(t, ws); !slices.Equal(after, want) {
		t.Errorf("workspace after the run:\n got %v\nwant %v", after, want)
	}
	var audited []string
	for _, ev := range readAudit(t, filepath.Join(home, "state", "warden", approvals.AuditFile)) {
		if ev.Event == "quarantine" {
			audited = append(audited, ev.Files...)
		}
	}
	if len(audited) != 4 {
		t.Errorf("audit log quarantine events: %v", audited)
	}
	// The host's git there finds no repository, so no fsmonitor of the
	// command's runs.
	exec.Command("git", "-C", ws, "status").Run()
	if _, err := os.Stat(filepath.Join(marks, "pwned")); err == nil {
		t.Error("the planted fsmonitor ran on the host")
	}
}

// A long-running command that creates .git/config early: the name is gone
// while the command still runs, so nothing on the host gets to obey it.
func TestNoTraceExecRemovesWhileTheCommandRuns(t *testing.T) {
	home := t.TempDir()
	ws := noTraceWorkspace(t, home, false)
	cmd := exec.Command(wardenBin(t), "exec", "--sandbox", "workspace-write", "--approval", "never", "--cwd", ws, "--",
		"sh", "-c", `mkdir .git; printf '[core]\n\tfsmonitor = id\n' > .git/config; echo x > .envrc; touch started; sleep 30`)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, isolated(home)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	gone := func(n string) bool { _, err := os.Lstat(filepath.Join(ws, n)); return os.IsNotExist(err) }
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(ws, "started")); err == nil && gone(".git") && gone(".envrc") {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("warden exec ended before the names were gone: %v %s", err, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("still there while the command runs: .git gone %v, .envrc gone %v", gone(".git"), gone(".envrc"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("the command ended before the check (%v): not seen while it ran", err)
	default:
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
	if !strings.Contains(errOut.String(), "the sandbox removed .git it created: protected path; kept at ") {
		t.Errorf("not reported: %s", errOut.String())
	}
}

// warden run with a scripted hostile model: the attack's .git is gone and
// the model is told where it is kept; the tools' twins see what the host
// sees; nothing is left in the workspace.
func TestNoTraceRunAgent(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home := t.TempDir()
	ws := noTraceWorkspace(t, home, true)
	host := exec.Command("sh", "-c", toolScript)
	host.Dir, host.Env = ws, append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	want, _ := host.CombinedOutput()
	before := treeListing(t, ws)
	call := func(id, script string) modeltest.Turn {
		return modeltest.Turn{Calls: []modeltest.Call{{ID: id, Name: "shell", Args: `{"command":["sh","-c",` + jsonString(script) + `]}`}}}
	}
	srv := modeltest.New(t,
		call("tools", "GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 "+toolScript),
		call("attack", `mkdir -p sub/.git && printf '[core]\n\tfsmonitor = id\n' > sub/.git/config && echo x > .envrc`),
		call("twin", `echo '*.o' > .gitignore`),
		modeltest.Turn{Text: "done"})
	_, stderr, code, _ := runAgentCLI(t, srv, ws, "--approval", "never", "task")
	if code != 0 {
		t.Fatalf("warden run: exit %d %s", code, stderr)
	}
	if got := withoutGitPlaceholders(toolResult(srv, "tools"), string(want)); !strings.Contains(got, string(want)) || !strings.Contains(got, "Exit code: 0") {
		t.Errorf("the tools inside the sandbox:\n%s\non the host:\n%s", got, want)
	}
	got := toolResult(srv, "attack")
	for _, name := range []string{"sub/.git", ".envrc"} {
		if !strings.Contains(got, "the sandbox removed "+name+" it created: protected path; kept at ") {
			t.Errorf("the model was not told about %s: %q", name, got)
		}
		if !strings.Contains(stderr, "warden run: the sandbox removed "+name+" it created") {
			t.Errorf("the user was not told about %s: %s", name, stderr)
		}
	}
	wantTree := append(slices.Clone(before), ".gitignore -rw-r--r--", "sub drwxr-xr-x")
	slices.Sort(wantTree)
	var after []string
	for _, e := range treeListing(t, ws) {
		if !strings.HasPrefix(e, ".git/") { // the repository's own data (index refresh)
			after = append(after, e)
		}
	}
	var wantNoGit []string
	for _, e := range wantTree {
		if !strings.HasPrefix(e, ".git/") {
			wantNoGit = append(wantNoGit, e)
		}
	}
	if !slices.Equal(after, wantNoGit) {
		t.Errorf("workspace after warden run:\n got %v\nwant %v", after, wantNoGit)
	}
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
