package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/agent/modeltest"
)

// Issue 18, class 1: the agent never chooses its own boundary. Each attack
// has a harmless twin that must keep working.

// shellCall is a scripted model's shell tool call.
func shellCall(id, workdir string, argv ...string) modeltest.Turn {
	args, _ := json.Marshal(map[string]any{"command": argv, "workdir": workdir})
	return modeltest.Turn{Calls: []modeltest.Call{{ID: id, Name: "shell", Args: string(args)}}}
}

// boundaryDirs is a workspace with a subdirectory, and a home-like
// directory outside it and every writable root, holding nothing yet.
func boundaryDirs(t *testing.T) (ws, sub, home string) {
	t.Helper()
	ws = filepath.Join(t.TempDir(), "ws")
	sub = filepath.Join(ws, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	return ws, sub, dirOutsideWritableRoots(t)
}

func mustNotExist(t *testing.T, path, what string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		t.Errorf("%s: %s was written", what, path)
	}
}

// The model's workdir outside the workspace is asked about, naming the
// resolved directory, and denied here: nothing is written. A link the
// sandbox itself made inside the workspace, pointing out, is judged by where
// it points. The twin, a real subdirectory, runs unasked.
func TestBoundaryRunWorkdirOutsideTheWorkspaceIsAsked(t *testing.T) {
	ws, _, home := boundaryDirs(t)
	link := filepath.Join(ws, "out")
	srv := modeltest.New(t,
		shellCall("home", home, "sh", "-c", "echo pwned >> .bashrc"),
		shellCall("mklink", "", "ln", "-s", home, link),
		shellCall("link", "out", "sh", "-c", "echo pwned >> .profile"),
		shellCall("twin", "sub", "sh", "-c", "echo ok > made && pwd"),
		modeltest.Turn{Text: "done"},
	)
	stdout, stderr, code, _ := runAgentCLI(t, srv, ws, "--deny", "do it")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	mustNotExist(t, filepath.Join(home, ".bashrc"), "workdir $HOME")
	mustNotExist(t, filepath.Join(home, ".profile"), "workdir through a link")
	for _, id := range []string{"home", "link"} {
		got := toolResult(srv, id)
		if !strings.Contains(got, "denied") || !strings.Contains(got, "runs in "+home+", outside the workspace") {
			t.Errorf("%s: the model is not told why: %q", id, got)
		}
	}
	if n := strings.Count(stderr, "runs in "+home+", outside the workspace"); n < 2 {
		t.Errorf("the prompts did not name the resolved directory (%d times):\n%s", n, stderr)
	}
	if strings.Contains(stderr, "Allow for session") {
		t.Errorf("a workdir outside the workspace was offered for the session:\n%s", stderr)
	}
	if _, err := os.Lstat(link); err != nil {
		t.Fatalf("the sandbox could not make the link, so the link attack proves nothing: %v\n%s", err, toolResult(srv, "mklink"))
	}
	twin := toolResult(srv, "twin")
	if !strings.Contains(twin, "Exit code: 0") || !strings.Contains(twin, filepath.Join(ws, "sub")) {
		t.Errorf("the twin in a subdirectory: %q", twin)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "sub", "made")); string(data) != "ok\n" {
		t.Errorf("the twin wrote %q", data)
	}
	if strings.Count(stderr, "Actions:") != 2 {
		t.Errorf("want exactly the two outside workdirs asked about, stderr:\n%s", stderr)
	}
}

// Under never nobody can be asked: the outside workdir is refused with the
// reason; the twin inside runs.
func TestBoundaryRunWorkdirOutsideUnderNeverIsRefused(t *testing.T) {
	ws, _, home := boundaryDirs(t)
	srv := modeltest.New(t,
		shellCall("home", home, "sh", "-c", "echo pwned >> .bashrc"),
		shellCall("twin", "sub", "sh", "-c", "echo ok > made"),
		modeltest.Turn{Text: "done"},
	)
	stdout, stderr, code, _ := runAgentCLI(t, srv, ws, "--approval", "never", "do it")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	mustNotExist(t, filepath.Join(home, ".bashrc"), "workdir $HOME under never")
	if got := toolResult(srv, "home"); !strings.Contains(got, "Policy forbids") || !strings.Contains(got, "outside the workspace") || !strings.Contains(got, "never") {
		t.Errorf("refusal not explained to the model: %q", got)
	}
	if got := toolResult(srv, "twin"); !strings.Contains(got, "Exit code: 0") {
		t.Errorf("the twin under never: %q", got)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "sub", "made")); string(data) != "ok\n" {
		t.Errorf("the twin wrote %q", data)
	}
}

// Approved, an outside workdir is only where the command runs: the
// sandbox's writable roots stay the workspace's, so .bashrc is still not
// written (and the command's relative write inside the workspace twin is).
func TestBoundaryApprovedOutsideWorkdirGainsNoWritableRoot(t *testing.T) {
	ws, _, home := boundaryDirs(t)
	srv := modeltest.New(t,
		shellCall("home", home, "sh", "-c", "echo pwned >> .bashrc; pwd"),
		shellCall("twin", home, "sh", "-c", "echo ok > "+filepath.Join(ws, "made")),
		modeltest.Turn{Text: "done"},
	)
	stdout, stderr, code, _ := runAgentCLI(t, srv, ws, "--yes", "do it")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	mustNotExist(t, filepath.Join(home, ".bashrc"), "an approved outside workdir")
	if got := toolResult(srv, "home"); !strings.Contains(got, "Sandboxed: yes") || !strings.Contains(got, home) {
		t.Errorf("the approved command did not run sandboxed in %s: %q", home, got)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "made")); string(data) != "ok\n" {
		t.Errorf("the twin (writing into the workspace from there) wrote %q: %s", data, toolResult(srv, "twin"))
	}
}

// `warden exec` runs in its workspace; a command there that writes outside
// is blocked by the sandbox, the twin writing inside works.
func TestBoundaryExecCannotWriteOutsideItsWorkspace(t *testing.T) {
	ws, _, home := boundaryDirs(t)
	_, errOut, code := runWardenEnv(t, t.TempDir(), "", "exec", "--cwd", ws, "--yes", "--", "sh", "-c", "echo pwned >> "+filepath.Join(home, ".bashrc"))
	if code == 0 {
		t.Errorf("a write outside the workspace succeeded: %s", errOut)
	}
	mustNotExist(t, filepath.Join(home, ".bashrc"), "exec writing outside")
	_, errOut, code = runWardenEnv(t, t.TempDir(), "", "exec", "--cwd", ws, "--yes", "--", "sh", "-c", "echo ok > sub/made")
	if data, _ := os.ReadFile(filepath.Join(ws, "sub", "made")); code != 0 || string(data) != "ok\n" {
		t.Errorf("the twin: exit %d, wrote %q: %s", code, data, errOut)
	}
}

// writeConfig writes config.toml under home's XDG config.
func writeConfig(t *testing.T, home, toml string) {
	t.Helper()
	dir := filepath.Join(home, "config", "warden")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeWardenRules(t *testing.T, dir, body string) {
	t.Helper()
	rules := filepath.Join(dir, ".warden", "rules")
	if err := os.MkdirAll(rules, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rules, "project.rules"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func boundaryPolicyCheck(t *testing.T, home, cwd string, argv ...string) policyJSON {
	t.Helper()
	out, errOut, code := runWardenEnv(t, home, "", append([]string{"policy", "check", "--json", "--approval", "untrusted", "--cwd", cwd, "--"}, argv...)...)
	var p policyJSON
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil {
		t.Fatalf("policy check --cwd %s %v: exit %d %s %s", cwd, argv, code, out, errOut)
	}
	return p
}

// A .warden/rules the sandbox made in a subdirectory of a trusted workspace
// does not inherit its trust: its allow rule is ignored (tighten-only). The
// twins: the trusted root's own allow rule applies in the root and below it.
func TestBoundarySubdirRulesDoNotInheritTrust(t *testing.T) {
	home := dirOutsideWritableRoots(t) // under /tmp, a writable root, ws/.warden would be the sandbox's to rewrite
	ws := filepath.Join(home, "ws")
	sub := filepath.Join(ws, "sub")
	writeWardenRules(t, ws, `prefix_rule(pattern=["make", "test"], decision="allow")`+"\n")
	writeWardenRules(t, sub, `prefix_rule(pattern=["curl"], decision="allow")`+"\n")
	writeConfig(t, home, fmt.Sprintf("trusted_workspaces = [%q]\n", ws))
	for _, cwd := range []string{ws, sub} {
		if p := boundaryPolicyCheck(t, home, cwd, "curl", "https://example.com"); p.Decision != "prompt" || p.BypassSandbox {
			t.Errorf("--cwd %s: a sandbox-made sub/.warden/rules allowed curl: %+v", cwd, p)
		}
		if p := boundaryPolicyCheck(t, home, cwd, "make", "test"); p.Decision != "allow" {
			t.Errorf("--cwd %s: the trusted root's own allow rule did not apply: %+v", cwd, p)
		}
	}
}

// Trust is exact and resolved: a trusted /x/ws trusts neither /x/ws2 (a
// string prefix) nor a subdirectory that is not listed; a trusted path
// written through a link trusts the directory it names.
func TestBoundaryTrustIsExactAfterResolvingLinks(t *testing.T) {
	home := t.TempDir()
	ws, ws2 := filepath.Join(home, "ws"), filepath.Join(home, "ws2")
	allow := `prefix_rule(pattern=["curl"], decision="allow")` + "\n"
	writeWardenRules(t, ws, allow)
	writeWardenRules(t, ws2, allow)
	link := filepath.Join(home, "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, home, fmt.Sprintf("trusted_workspaces = [%q]\n", link))
	if p := boundaryPolicyCheck(t, home, ws2, "curl", "x"); p.Decision != "prompt" {
		t.Errorf("trusting %s trusted %s: %+v", ws, ws2, p)
	}
	if p := boundaryPolicyCheck(t, home, ws, "curl", "x"); p.Decision != "allow" {
		t.Errorf("a workspace trusted through a link %s is not trusted: %+v", link, p)
	}
}

// A .git the sandbox made in a subdirectory no longer hides the workspace's
// forbid rules: the root's (and its ancestors') rules apply to every
// directory below them. The twin: a command no rule forbids still runs there.
func TestBoundarySubdirGitKeepsTheWorkspaceForbidRules(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(home, "ws")
	sub := filepath.Join(ws, "sub")
	writeWardenRules(t, ws, `prefix_rule(pattern=["touch", "forbidden"], decision="forbidden", justification="not here")`+"\n")
	if err := os.MkdirAll(filepath.Join(sub, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p := boundaryPolicyCheck(t, home, sub, "touch", "forbidden"); p.Decision != "forbidden" || !strings.Contains(p.Reason, "not here") {
		t.Errorf("sub/.git dropped the workspace's forbid rule: %+v", p)
	}
	_, errOut, code := runWardenEnv(t, home, "", "exec", "--cwd", sub, "--yes", "--", "touch", "forbidden")
	if code != exitRefused || !strings.Contains(errOut, "not here") {
		t.Errorf("exec in sub/ with a .git: exit %d, %s", code, errOut)
	}
	mustNotExist(t, filepath.Join(sub, "forbidden"), "forbidden touch")
	_, errOut, code = runWardenEnv(t, home, "", "exec", "--cwd", sub, "--yes", "--", "touch", "allowed")
	if _, err := os.Stat(filepath.Join(sub, "allowed")); code != 0 || err != nil {
		t.Errorf("the twin in sub/: exit %d, %v: %s", code, err, errOut)
	}
}
