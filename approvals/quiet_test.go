package approvals

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/approvals/safe"
	"github.com/wardenhq/warden/sandbox"
)

// TestQuietKnownSafeAttacks: each tool added to the known-safe list has
// options that write, run or read what the command line does not name; the
// model writes every word, so each attack must not be known-safe, and each
// twin (the everyday use) must be.
func TestQuietKnownSafeAttacks(t *testing.T) {
	cases := []struct {
		attack, twin []string
	}{
		// sed: the script is parsed; w/W/r/R/e and s///w|e are found.
		{[]string{"sed", "-n", "1w /etc/x", "f"}, []string{"sed", "-n", "1p", "f"}},
		{[]string{"sed", "-n", "-e", "p", "-e", "e id"}, []string{"sed", "-n", "-e", "p", "-e", "5q"}},
		{[]string{"sed", "-n", "/start/,/end/{p;w out\n}", "f"}, []string{"sed", "-n", "/start/,/end/{p;}", "f"}},
		{[]string{"sed", "-n", "/x/r /etc/shadow", "f"}, []string{"sed", "-n", "/x/p", "f"}},
		{[]string{"sed", "-n", "/x/R other", "f"}, []string{"sed", "-n", "/x/P", "f"}},
		{[]string{"sed", "-n", "1W out", "f"}, []string{"sed", "-n", "1=", "f"}},
		{[]string{"sed", "s/a/b/w out", "f"}, []string{"sed", "s/a/b/g", "f"}},
		{[]string{"sed", "s/a/id/e", "f"}, []string{"sed", "s/a/id/2p", "f"}},
		{[]string{"sed", "-n", `s/\//x/e`, "f"}, []string{"sed", "-n", `s/\//x/p`, "f"}},
		{[]string{"sed", "-n", `\%x%w out`, "f"}, []string{"sed", "-n", `\%x%p`, "f"}},
		{[]string{"sed", "-n", "/a;w out/p;w out2", "f"}, []string{"sed", "-n", "/a;w out/p", "f"}},
		{[]string{"sed", "-n", "1p", "--expression=1e id"}, []string{"sed", "-n", "--expression=1p", "f"}},
		{[]string{"sed", "-ne", "1e id", "f"}, []string{"sed", "-ne", "1,3p", "f"}},
		{[]string{"sed", "-i", "-n", "1p", "f"}, []string{"sed", "-n", "1p", "f"}},
		{[]string{"sed", "--in-p", "s/a/b/", "f"}, []string{"sed", "--quiet", "s/a/b/p", "f"}},
		{[]string{"sed", "-f", "script.sed", "f"}, []string{"sed", "-E", "-n", "/^(a|b)+$/p", "f"}},
		{[]string{"sed", "-n", "1a text", "f"}, []string{"sed", "-n", "$p", "f"}},
		// sort: -o, --output and abbreviations, --compress-program, -T.
		{[]string{"sort", "-o", "f", "in"}, []string{"sort", "-u", "in"}},
		{[]string{"sort", "-uo", "f", "in"}, []string{"sort", "-uk2", "in"}},
		{[]string{"sort", "--out=f", "in"}, []string{"sort", "--unique", "in"}},
		{[]string{"sort", "--compress-prog=sh", "in"}, []string{"sort", "-t", "o", "-k", "2", "in"}},
		{[]string{"sort", "-T", "/tmp/x", "in"}, []string{"sort", "-n", "in"}},
		{[]string{"sort", "--files0-from=list"}, []string{"sort", "-r", "in"}},
		// git: its own config, output files, external diff and textconv,
		// a forced pager, signature verification, branch changes.
		{[]string{"git", "-c", "core.pager=evil", "log"}, []string{"git", "log"}},
		{[]string{"git", "--config-env=core.pager=X", "log"}, []string{"git", "--no-pager", "log"}},
		{[]string{"git", "-p", "status"}, []string{"git", "-P", "status"}},
		{[]string{"git", "--git-dir=/tmp/x/.git", "status"}, []string{"git", "-C", "sub", "status"}},
		{[]string{"git", "log", "--output=f"}, []string{"git", "log", "--oneline"}},
		{[]string{"git", "log", "--outp=f"}, []string{"git", "log", "--output-indicator-new=+"}},
		{[]string{"git", "diff", "--ext-diff"}, []string{"git", "diff", "--stat"}},
		{[]string{"git", "diff", "--ext"}, []string{"git", "diff", "--exit-code"}},
		{[]string{"git", "show", "--textconv", "HEAD:f"}, []string{"git", "show", "HEAD:f"}},
		{[]string{"git", "log", "--show-signature"}, []string{"git", "log", "-3", "--stat"}},
		{[]string{"git", "log", "--format=%H %G?"}, []string{"git", "log", "--format=%H %s"}},
		{[]string{"git", "branch", "-D", "main"}, []string{"git", "branch", "-a"}},
		{[]string{"git", "branch", "new-feature"}, []string{"git", "branch", "--list", "feat*"}},
		{[]string{"git", "branch", "--set-upstream-to=origin/x"}, []string{"git", "branch", "--show-current"}},
		{[]string{"git", "branch", "-m", "a", "b"}, []string{"git", "branch", "-vv", "--sort=-committerdate"}},
		{[]string{"timeout", "5", "git", "status"}, []string{"git", "status", "--porcelain"}},
		// tree, du, find, xxd, file, strings, diff.
		{[]string{"tree", "-o", "f"}, []string{"tree", "-L", "2"}},
		{[]string{"tree", "-aRo", "f"}, []string{"tree", "-a", "-I", "node_modules|o"}},
		{[]string{"tree", "-R"}, []string{"tree", "-d"}},
		{[]string{"du", "--files0-from=list"}, []string{"du", "-sh", "."}},
		{[]string{"du", "--files0", "list"}, []string{"du", "-h", "--max-depth=1"}},
		{[]string{"find", ".", "-fprint", "out"}, []string{"find", ".", "-print"}},
		{[]string{"find", ".", "-name", "x", "-fprintf", "out", "%p"}, []string{"find", ".", "-name", "x", "-printf", "%p"}},
		{[]string{"xxd", "in", "out"}, []string{"xxd", "in"}},
		{[]string{"xxd", "-r", "dump", "bin"}, []string{"xxd", "-l", "64", "bin"}},
		{[]string{"xxd", "-s", "-10", "in", "out"}, []string{"xxd", "-s", "-10", "in"}},
		{[]string{"file", "-C", "-m", "magic"}, []string{"file", "-b", "f"}},
		{[]string{"file", "--comp", "-m", "magic"}, []string{"file", "--mime-type", "f"}},
		// date, test.
		{[]string{"date", "-s", "2020-01-01"}, []string{"date", "-u", "+%F"}},
		{[]string{"date", "--se=2020-01-01"}, []string{"date", "--date=yesterday"}},
		{[]string{"test", "-v", "a[$(touch pwned)]"}, []string{"test", "-f", "go.mod"}},
		{[]string{"bash", "-c", "[ 'a[$(id)]' -eq 0 ] && ls"}, []string{"bash", "-c", "[ -d node_modules ] && ls || echo missing"}},
		// Wrapped in a shell, with || true and 2>/dev/null.
		{[]string{"bash", "-lc", "sed -n '1w x' f 2>/dev/null || true"}, []string{"bash", "-lc", "sed -n '1,5p' f 2>/dev/null || true"}},
		{[]string{"bash", "-lc", "sort f > out"}, []string{"bash", "-lc", "sort f | uniq -c | sort -rn | head 2>/dev/null"}},
		{[]string{"bash", "-lc", "diff a b 2> err.log"}, []string{"bash", "-lc", "diff -u a b 2>&1 || true"}},
	}
	for _, c := range cases {
		if safe.KnownSafe(command.Analyze(c.attack)) {
			t.Errorf("attack %q is known-safe", c.attack)
		}
		if a := command.Analyze(c.twin); !safe.KnownSafe(a) {
			t.Errorf("twin %q is not known-safe (problems %q)", c.twin, a.Problems)
		}
	}
}

// TestQuietSecretsNeverKnownSafe: the new readers are judged by the secret
// scan like cat: reading credentials asks under every policy.
func TestQuietSecretsNeverKnownSafe(t *testing.T) {
	ws, _ := riskWorkspace(t, 1)
	// git's global config must be where no sandboxed command writes.
	t.Setenv("HOME", hostBin(t))
	cases := []struct{ attack, twin []string }{
		{[]string{"diff", "~/.ssh/id_ed25519", "/dev/null"}, []string{"diff", "a.txt", "/dev/null"}},
		{[]string{"xxd", ".env"}, []string{"xxd", "one.txt"}},
		{[]string{"strings", "/home/u/.aws/credentials"}, []string{"strings", "bin/app"}},
		{[]string{"sed", "-n", "1,5p", ".env.local"}, []string{"sed", "-n", "1,5p", ".env.example"}},
		{[]string{"sort", "/home/u/.netrc"}, []string{"sort", "notes.txt"}},
		{[]string{"git", "diff", "--no-index", "/home/u/.ssh/id_rsa", "/dev/null"}, []string{"git", "diff", "--no-index", "a.txt", "b.txt"}},
	}
	for _, c := range cases {
		for _, ask := range []AskForApproval{Untrusted, OnRequest} {
			ev := &Evaluator{Policy: Policy{Ask: ask}}
			if e := ev.Evaluate(CommandRequest{Argv: c.attack, Cwd: ws, Sandbox: Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}}}); e.KnownSafe || e.Decision != rules.Prompt {
				t.Errorf("%s: attack %q: known-safe %v, decision %s (%s)", ask, c.attack, e.KnownSafe, e.Decision, e.Reason)
			}
			if e := ev.Evaluate(CommandRequest{Argv: c.twin, Cwd: ws, Sandbox: Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}}}); !e.KnownSafe || e.Decision != rules.Allow {
				t.Errorf("%s: twin %q: known-safe %v, decision %s (%s)", ask, c.twin, e.KnownSafe, e.Decision, e.Reason)
			}
		}
	}
}

// gitRepo makes a repository whose config runs `touch <marker>` from every
// place a config can start a program when git status, log, diff or show
// runs: core.fsmonitor, the pager, an external diff, a textconv driver,
// the post-index-change hook and signature verification.
func gitRepo(t *testing.T) (ws, marker string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ws = t.TempDir()
	marker = filepath.Join(t.TempDir(), "ran")
	// git's global config must be where no sandboxed command writes.
	home := hostBin(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	run := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	run("config", "user.email", "t@example.com")
	run("config", "user.name", "t")
	os.WriteFile(filepath.Join(ws, ".gitattributes"), []byte("*.txt diff=evil\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("one\n"), 0o644)
	run("add", ".")
	run("commit", "-qm", "first")
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("two\n"), 0o644)
	touch := "touch " + marker
	hooks := filepath.Join(ws, ".git", "hooks")
	os.WriteFile(filepath.Join(hooks, "post-index-change"), []byte("#!/bin/sh\n"+touch+"\n"), 0o755)
	for _, kv := range [][2]string{
		{"core.fsmonitor", touch + "; false"},
		{"core.pager", touch + "; cat"},
		{"pager.log", touch + "; cat"},
		{"diff.external", "sh -c '" + touch + "'"},
		{"diff.evil.textconv", "sh -c '" + touch + "; cat \"$0\"'"},
		{"log.showSignature", "true"},
		{"gpg.program", "sh -c '" + touch + "'"},
	} {
		run("config", kv[0], kv[1])
	}
	return ws, marker
}

// gitInert are the known-safe git subcommands the test repository's
// config has no hold on without a terminal (no pager runs): hardened for
// the pager and the hooks all the same.
var gitInert = map[string]bool{"branch": true, "grep": true, "ls-files": true, "rev-parse": true,
	"shortlog": true, "cat-file": true, "tag": true, "remote": true, "stash": true}

// TestGitHardening runs real git in a repository whose config tries to run
// a program: the hardened argv Warden runs starts none, while the same
// command as the model wrote it does (so the attack is real).
func TestGitHardening(t *testing.T) {
	ws, marker := gitRepo(t)
	for _, argv := range [][]string{
		{"git", "status"},
		{"git", "diff"},
		{"git", "log", "-p", "-1"},
		{"git", "show", "HEAD"},
		{"git", "branch", "-v"},
		{"bash", "-c", "git status --short && git diff --stat 2>/dev/null || true"},
		{"git", "blame", "a.txt"},
		{"git", "describe", "--always", "--dirty"},
		{"git", "grep", "-n", "one", "HEAD"},
		{"git", "ls-files", "-m"},
		{"git", "rev-parse", "HEAD"},
		{"git", "shortlog", "-s", "HEAD"},
		{"git", "cat-file", "-p", "HEAD:a.txt"},
		{"git", "tag", "-l"},
		{"git", "remote", "-v"},
		{"git", "stash", "list"},
		{"bash", "-c", "git blame -L 1,1 a.txt | head -1; git log --oneline -3"},
	} {
		e := (&Evaluator{Policy: Policy{Ask: Untrusted}}).Evaluate(CommandRequest{Argv: argv, Cwd: ws, Sandbox: Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}, WritableRoots: []string{ws}}})
		if e.Decision != rules.Allow || !e.KnownSafe || e.RunArgv == nil {
			t.Fatalf("%q: decision %s, known-safe %v, run %q (%s)", argv, e.Decision, e.KnownSafe, e.RunArgv, e.Reason)
		}
		if !strings.Contains(e.Reason, "runs as `") {
			t.Errorf("%q: the reason does not show what runs: %s", argv, e.Reason)
		}
		for i, run := range [][]string{e.RunArgv, argv} {
			os.Remove(marker)
			cmd := exec.Command(run[0], run[1:]...)
			cmd.Dir = ws
			cmd.Env = append(os.Environ(), "GIT_PAGER_IN_USE=", "PAGER=")
			out, _ := cmd.CombinedOutput()
			_, err := os.Stat(marker)
			ran := err == nil
			switch {
			case i == 0 && ran:
				t.Errorf("hardened %q ran a program from the repository's config\n%s", run, out)
			case i == 1 && !ran && !gitInert[argv[1]]:
				// The inert ones run none of them, hardened or not: only
				// the others prove that the repository is hostile.
				t.Errorf("as written, %q ran nothing: the test repository does not attack\n%s", run, out)
			}
		}
	}
}

// TestGitHardeningNeedsProtectedConfig: a repository a sandboxed command
// could have made (a nested one in the workspace, whose config the sandbox
// did not hold read-only) gets no known-safe git; the workspace's own does.
func TestGitHardeningNeedsProtectedConfig(t *testing.T) {
	ws, _ := gitRepo(t)
	nested := filepath.Join(ws, "vendor", "x")
	os.MkdirAll(nested, 0o755)
	if out, err := exec.Command("git", "init", "-q", nested).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	sb := Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}, WritableRoots: []string{ws}}
	ev := &Evaluator{Policy: Policy{Ask: Untrusted}}
	if e := ev.Evaluate(CommandRequest{Argv: []string{"git", "status"}, Cwd: nested, Sandbox: sb}); e.KnownSafe || e.Decision != rules.Prompt {
		t.Errorf("git status in a nested repository: known-safe %v, decision %s", e.KnownSafe, e.Decision)
	}
	if e := ev.Evaluate(CommandRequest{Argv: []string{"git", "-C", "vendor/x", "log"}, Cwd: ws, Sandbox: sb}); e.KnownSafe || e.Decision != rules.Prompt {
		t.Errorf("git -C into a nested repository: known-safe %v, decision %s", e.KnownSafe, e.Decision)
	}
	if e := ev.Evaluate(CommandRequest{Argv: []string{"git", "status"}, Cwd: ws, Sandbox: sb}); !e.KnownSafe || e.Decision != rules.Allow {
		t.Errorf("git status in the workspace: known-safe %v, decision %s (%s)", e.KnownSafe, e.Decision, e.Reason)
	}
	// A git the hardening cannot reach (a shell inside the script) is not known-safe.
	if e := ev.Evaluate(CommandRequest{Argv: []string{"bash", "-c", "sh -c 'git status'"}, Cwd: ws, Sandbox: sb}); e.KnownSafe {
		t.Errorf("git in a nested shell is known-safe")
	}
}

// TestConfinedDeleteNeverLooser: under workspace-write, an `rm -rf` dressed
// in a wrapper or found through find/xargs is never judged looser than the
// plain command, and the plain command asks under untrusted.
func TestConfinedDeleteNeverLooser(t *testing.T) {
	ws, _ := riskWorkspace(t, 200)
	sb := Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}}
	eval := func(ask AskForApproval, argv []string) *Evaluation {
		return (&Evaluator{Policy: Policy{Ask: ask}}).Evaluate(CommandRequest{Argv: argv, Cwd: ws, Sandbox: sb})
	}
	plain := []string{"rm", "-rf", "build"}
	if e := eval(Untrusted, plain); e.Decision != rules.Prompt {
		t.Errorf("untrusted %q: %s", plain, e.Decision)
	}
	for _, ask := range []AskForApproval{OnRequest, Never, OnFailure} {
		if e := eval(ask, plain); e.Decision != rules.Allow || e.Dangerous {
			t.Errorf("%s %q: %s, dangerous %v (%s)", ask, plain, e.Decision, e.Dangerous, e.Reason)
		}
	}
	for _, d := range [][]string{
		{"nohup", "rm", "-rf", "build"},
		{"busybox", "rm", "-rf", "build"},
		{"bwrap", "--bind", "/", "/", "rm", "-rf", "build"},
		{"bash", "-c", "find build -exec rm -rf {} +"},
		{"bash", "-c", "echo build | xargs rm -rf"},
		{"sudo", "rm", "-rf", "build"},
		{"bash", "-c", "rm -rf \"$D\""},
		{"bash", "-c", "rm -rf build/../.."},
		{"rm", "-rf", ".git"},
		{"rm", "-rf", "."},
		{"rm", "-rf", "/tmp"},
		{"rm", "-rf", "~"},
	} {
		if e := eval(OnRequest, d); e.Decision == rules.Allow {
			t.Errorf("on-request %q runs without asking (%s)", d, e.Reason)
		}
	}
	// Twins: what the plain rule lets through, in the workspace and in /tmp.
	scratch := t.TempDir()
	os.MkdirAll(filepath.Join(scratch, "out"), 0o755)
	for _, twin := range [][]string{
		{"rm", "-f", "one.txt"},
		{"bash", "-lc", "rm -rf build/d01 build/d02 && make"},
		{"rm", "-rf", filepath.Join(scratch, "out")},
		{"timeout", "5", "rm", "-rf", "build"},
	} {
		if e := eval(OnRequest, twin); e.Decision != rules.Allow {
			t.Errorf("twin %q: %s (%s)", twin, e.Decision, e.Reason)
		}
	}
}

// TestFindNamePatternsReadNothing: find's name patterns select names, so a
// pattern that looks like a key file is no read; a start directory that is
// a credential store, or -exec cat on what it finds there, is.
func TestFindNamePatternsReadNothing(t *testing.T) {
	ws, home := riskWorkspace(t, 1)
	ctx := risk.Context{Cwd: ws, Sandbox: sandbox.Policy{Mode: sandbox.WorkspaceWrite}, Home: home}
	for _, c := range []struct {
		argv    []string
		secrets bool
	}{
		{[]string{"find", ".", "-name", "*.pem", "-o", "-name", "*.key"}, false},
		{[]string{"find", ".", "-path", "*/.ssh/*"}, false},
		{[]string{"find", "~/.ssh", "-type", "f"}, true},
		{[]string{"tail", "~/.bash_history"}, true},
		{[]string{"tail", "build.log"}, false},
		{[]string{"grep", "-r", "TOKEN", "~/.config"}, true},
		{[]string{"grep", "-r", "TOKEN", "src"}, false},
		{[]string{"rg", "password", "~"}, true},
		{[]string{"rg", "password", "."}, false},
		{[]string{"find", ".", "-name", "*.pem", "-exec", "cat", "~/.ssh/id_rsa", ";"}, true},
	} {
		if got := risk.Assess(command.Analyze(c.argv), ctx).ReadsSecrets; got != c.secrets {
			t.Errorf("%q: reads secrets %v, want %v", c.argv, got, c.secrets)
		}
	}
}

// argvRecorder records what the orchestrator asks the runner to run.
type argvRecorder struct{ argv [][]string }

func (r *argvRecorder) Run(_ context.Context, spec RunSpec) (RunResult, error) {
	r.argv = append(r.argv, spec.Argv)
	return RunResult{}, nil
}

// TestOrchestratorRunsHardenedGit: what runs is the hardened argv, and the
// audit log's run line says so; a command with nothing to harden runs as
// written.
func TestOrchestratorRunsHardenedGit(t *testing.T) {
	ws, _ := gitRepo(t)
	state := t.TempDir()
	audit, err := OpenAuditLog(state)
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	rec := &argvRecorder{}
	o := &Orchestrator{Policy: Policy{Ask: Untrusted}, Runner: rec, Audit: audit}
	sb := Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}, WritableRoots: []string{ws}}
	for _, argv := range [][]string{{"git", "log", "-1"}, {"ls", "-la"}} {
		out, err := o.Exec(context.Background(), ExecRequest{CommandRequest: CommandRequest{Argv: argv, Cwd: ws, Sandbox: sb}})
		if err != nil || !out.Ran || out.Asked {
			t.Fatalf("%q: ran %v, asked %v, err %v (%s)", argv, out.Ran, out.Asked, err, out.Evaluation.Reason)
		}
	}
	if len(rec.argv) != 2 {
		t.Fatalf("runs %q", rec.argv)
	}
	if got := strings.Join(rec.argv[0], " "); !strings.HasPrefix(got, "git --no-pager --no-optional-locks -c core.fsmonitor= ") || !strings.HasSuffix(got, " log --no-ext-diff --no-textconv -1") {
		t.Errorf("ran %q, want the hardened git log", got)
	}
	if got := strings.Join(rec.argv[1], " "); got != "ls -la" {
		t.Errorf("ran %q, want ls -la as written", got)
	}
	audit.Sync()
	data, err := os.ReadFile(filepath.Join(state, AuditFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"event":"run","kind":"command","argv":["git","--no-pager","--no-optional-locks","-c","core.fsmonitor="`) {
		t.Errorf("the audit's run line does not show the hardened argv:\n%s", data)
	}
}
