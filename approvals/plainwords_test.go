package approvals

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/rules"
)

// hostBin makes a directory outside every writable root the tests use (not
// under /tmp or $TMPDIR: workspace-write makes those writable) holding
// stub executables, as /usr/bin holds the real ones.
func hostBin(t testing.TB, names ...string) string {
	t.Helper()
	parent, _ := os.Getwd()
	for _, tmp := range []string{"/tmp", os.TempDir()} {
		if rel, err := filepath.Rel(tmp, parent); err == nil && !strings.HasPrefix(rel, "..") {
			parent = "/var/tmp"
		}
	}
	if rel, err := filepath.Rel(os.TempDir(), parent); err == nil && !strings.HasPrefix(rel, "..") {
		t.Skipf("no directory outside the writable roots: TMPDIR is %s", os.TempDir())
	}
	dir, err := os.MkdirTemp(parent, ".hostbin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// hostEnv is an unsandboxed command's environment: PATH and HOME outside
// the writable roots.
func hostEnv(dir string) func() []string {
	return func() []string { return []string{"PATH=" + dir, "HOME=" + dir} }
}

// grantRule is an allow rule for pattern carrying a write grant to dir.
func grantRule(dir string, pattern ...string) string {
	q := make([]string, len(pattern))
	for i, p := range pattern {
		q[i] = `"` + p + `"`
	}
	return `prefix_rule(pattern=[` + strings.Join(q, ", ") + `], decision="allow", additional_permissions={"write": ["` + dir + `"]})` + "\n"
}

// grantApplied says whether e runs by its rule with the rule's grant.
func grantApplied(e *Evaluation) bool {
	return e.Decision == rules.Allow && !e.Grant.IsZero() && !e.GrantAsked
}

// TestRuleGrantPlainWords: an allow rule's grant goes only to what the
// rule names: plain words running programs from outside the writable roots
// (a program the sandbox could rewrite would carry the grant). Each attack
// is judged as if no rule matched (here, under on-request: it runs
// sandboxed, without the grant), with the reason saying why; each twin
// gets the grant. No rule ever takes the command out of the sandbox.
func TestRuleGrantPlainWords(t *testing.T) {
	bin := hostBin(t, "cat", "bash", "git", "sh")
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "bin"), 0o755)
	os.WriteFile(filepath.Join(ws, "bin", "cat"), []byte("#!/bin/sh\ntouch /pwned\n"), 0o755)
	// A link outside the roots whose target is the workspace's binary.
	links := hostBin(t)
	os.Symlink(filepath.Join(ws, "bin", "cat"), filepath.Join(links, "cat"))
	rulesDir, granted := t.TempDir(), hostBin(t)
	writeRules(t, rulesDir, "r.rules", grantRule(granted, "cat")+grantRule(granted, "git", "status")+
		grantRule(granted, "printf")+grantRule(granted, "test")+grantRule(granted, "read")+grantRule(granted, "echo"))
	rules, err := rules.LoadRules([]rules.RuleSource{{Dir: rulesDir}})
	if err != nil {
		t.Fatal(err)
	}
	sh := func(s string) []string { return []string{"bash", "-lc", s} }
	cases := []struct {
		name   string
		argv   []string
		env    func() []string
		bypass bool
		why    string // substring of the reason when not bypassed
	}{
		// Twins: plain words, programs from PATH outside the roots.
		{"plain argv", []string{"cat", "f"}, nil, true, ""},
		{"plain script", sh("cat f"), nil, true, ""},
		{"stderr to /dev/null", sh("cat f 2>/dev/null"), nil, true, ""},
		{"both to /dev/null", sh("cat f >/dev/null 2>&1 </dev/null"), nil, true, ""},
		{"quoted words and list", sh(`cat "f" 'g h' x\ y && git status | cat; cat '*' "$"`), nil, true, ""},
		{"tilde inside a word", sh("cat HEAD~1"), nil, true, ""},
		{"absolute program outside the roots", []string{filepath.Join(bin, "cat"), "f"}, nil, true, ""},
		{"inert builtin", sh("echo hi && printf %s x"), nil, true, ""},
		{"nested plain shell", sh(`bash -lc "cat f"`), nil, true, ""},
		// Attacks: assignments.
		{"PATH prefix", sh("PATH=./bin:$PATH cat f"), nil, false, "sets PATH"},
		{"LD_PRELOAD prefix", sh("LD_PRELOAD=./x.so cat f"), nil, false, "sets LD_PRELOAD"},
		{"harmless-looking assignment", sh("FOO=bar cat f"), nil, false, "sets FOO"},
		{"nested assignment", sh(`bash -lc "LD_PRELOAD=./x.so cat f"`), nil, false, "sets LD_PRELOAD"},
		// Expansions and substitutions.
		{"command substitution", sh("cat $(cat g)"), nil, false, "command substitution"},
		{"backquotes", sh("cat `cat g`"), nil, false, "command substitution"},
		{"process substitution", sh("cat <(cat g)"), nil, false, "process substitution"},
		{"default assignment", sh("cat ${x:=./bin/cat}"), nil, false, "parameter expansion"},
		{"subscript substitution", sh("cat ${x[$(cat g)]}"), nil, false, "parameter expansion"},
		{"arithmetic", sh("cat $((1+1))"), nil, false, "arithmetic"},
		{"let subscript", sh("let 'a[$(cat g)]'; cat f"), nil, false, "let"},
		{"arithmetic command", sh("(( a[1] )) && cat f"), nil, false, "arithmetic"},
		{"test subscript", sh("[[ -v 'a[$(cat g)]' ]] && cat f"), nil, false, "[[ … ]]"},
		{"printf -v subscript", sh("printf -v 'a[$(cat g)]' x; cat f"), nil, false, "printf -v"},
		{"test -v subscript", sh("test -v 'a[$(cat g)]' && cat f"), nil, false, "test -v"},
		{"read into a subscript", sh("read 'a[$(cat g)]' </dev/null; cat f"), nil, false, "builtin read"},
		{"variable", sh("cat $HOME/f"), nil, false, "parameter expansion"},
		// Globs, braces, tildes.
		{"glob", sh("cat *"), nil, false, "glob"},
		{"question glob", sh("cat f?"), nil, false, "glob"},
		{"bracket glob", sh("cat [fg]"), nil, false, "glob"},
		{"braces", sh("cat {f,g}"), nil, false, "braces"},
		{"tilde", sh("cat ~/f"), nil, false, "~"},
		{"tilde after =", sh("cat a=~/f"), nil, false, "~"},
		{"extended glob", sh("cat @(f|g)"), nil, false, "extended glob"},
		// Redirections.
		{"write a file", sh("cat f > out"), nil, false, "redirects > out"},
		{"append a file", sh("cat f >> out"), nil, false, "redirects >> out"},
		{"read a file", sh("cat < g"), nil, false, "redirects < g"},
		{"computed target", sh(`cat f 2> "$(cat g)"`), nil, false, "computed"},
		{"here-string", sh("cat <<< hi"), nil, false, "here-"},
		{"here-document", sh("cat <<EOF\n$(cat g)\nEOF"), nil, false, "here-"},
		{"named descriptor", sh("cat f {fd}>/dev/null"), nil, false, "{fd}"},
		// Other syntax.
		{"background", sh("cat f & cat g"), nil, false, "background"},
		{"subshell", sh("(cat f)"), nil, false, "subshell"},
		{"function", sh("cat() { cat g; }; cat f"), nil, false, "function"},
		// Programs inside a writable root.
		{"absolute program in the workspace", []string{filepath.Join(ws, "bin", "cat"), "f"}, nil, false, "inside the writable root"},
		{"absolute program in a script", sh(filepath.Join(ws, "bin", "cat") + " f"), nil, false, "inside the writable root"},
		{"PATH searches the workspace", sh("cat f"), func() []string { return []string{"PATH=" + filepath.Join(ws, "bin") + ":" + bin, "HOME=" + bin} }, false, "inside the writable root"},
		{"PATH searches the workspace first, even when absent", []string{"cat", "f"}, func() []string { return []string{"PATH=" + filepath.Join(ws, "nobin") + ":" + bin} }, false, "inside the writable root"},
		{"PATH link into the workspace", []string{"cat", "f"}, func() []string { return []string{"PATH=" + links + ":" + bin} }, false, "resolves to"},
		{"relative PATH entry", []string{"cat", "f"}, func() []string { return []string{"PATH=.:" + bin} }, false, "relative directory"},
		{"shell in the workspace", []string{filepath.Join(ws, "bin", "bash"), "-lc", "cat f"}, nil, false, "inside the writable root"},
		{"login shell reads a workspace HOME", sh("cat f"), func() []string { return []string{"PATH=" + bin, "HOME=" + ws} }, false, "startup files"},
		{"BASH_ENV in the workspace", []string{"bash", "-c", "cat f"}, func() []string { return []string{"PATH=" + bin, "BASH_ENV=" + ws + "/env"} }, false, "startup files"},
		{"program not on PATH", []string{"cat", "f"}, func() []string { return []string{"PATH=" + links + "-none"} }, false, "not found on PATH"},
	}
	os.WriteFile(filepath.Join(ws, "bin", "bash"), []byte("#!/bin/sh\n"), 0o755)
	for _, c := range cases {
		env := c.env
		if env == nil {
			env = hostEnv(bin)
		}
		ev := &Evaluator{Policy: Policy{Ask: OnRequest}, Rules: rules, RunEnv: env}
		e := ev.Evaluate(CommandRequest{Argv: c.argv, Cwd: ws, Sandbox: Sandbox{Mode: WorkspaceWrite, WritableRoots: []string{ws}}})
		if e.BypassSandbox {
			t.Errorf("%s: %q: bypass_sandbox true (reason %q)", c.name, c.argv, e.Reason)
		}
		if grantApplied(e) != c.bypass {
			t.Errorf("%s: %q: grant applied %v, want %v (reason %q)", c.name, c.argv, grantApplied(e), c.bypass, e.Reason)
			continue
		}
		if c.bypass {
			if !strings.Contains(e.Reason, "allowed by rule") || !strings.Contains(e.Reason, "in the sandbox") {
				t.Errorf("%s: decision %s, reason %q", c.name, e.Decision, e.Reason)
			}
			continue
		}
		if !strings.Contains(e.Reason, c.why) {
			t.Errorf("%s: reason %q lacks %q", c.name, e.Reason, c.why)
		}
		if len(e.MatchedRules) > 0 && !strings.Contains(e.Reason, "allow rule not applied: rule "+rulesDir) {
			t.Errorf("%s: a matched rule was set aside silently: %q", c.name, e.Reason)
		}
	}
}

// TestRuleGrantSetAsideRuleSkipsNoApproval: a rule set aside does not
// spare the approval the same command would need without it.
func TestRuleGrantSetAsideRuleSkipsNoApproval(t *testing.T) {
	bin := hostBin(t, "cat", "bash", "make")
	ws := t.TempDir()
	rulesDir := t.TempDir()
	writeRules(t, rulesDir, "r.rules", grantRule(hostBin(t), "make"))
	rules, err := rules.LoadRules([]rules.RuleSource{{Dir: rulesDir}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pol := range []AskForApproval{Untrusted, Never, OnRequest} {
		ev := &Evaluator{Policy: Policy{Ask: pol}, Rules: rules, RunEnv: hostEnv(bin)}
		req := CommandRequest{Cwd: ws, Sandbox: Sandbox{Mode: WorkspaceWrite}}
		req.Argv = []string{"bash", "-lc", "make all"}
		twin := ev.Evaluate(req)
		if !grantApplied(twin) || twin.BypassSandbox {
			t.Errorf("%s: twin `make all`: %s grant=%v bypass=%v (%s)", pol, twin.Decision, twin.Grant, twin.BypassSandbox, twin.Reason)
		}
		req.Argv = []string{"bash", "-lc", "MAKEFLAGS=x make all"}
		noRules := (&Evaluator{Policy: Policy{Ask: pol}, RunEnv: hostEnv(bin)}).Evaluate(req)
		got := ev.Evaluate(req)
		if got.BypassSandbox || !got.Grant.IsZero() || got.Decision != noRules.Decision {
			t.Errorf("%s: %q: %s bypass=%v, want %s as without the rule (%s)", pol, req.Argv, got.Decision, got.BypassSandbox, noRules.Decision, got.Reason)
		}
		if len(got.MatchedRules) != 1 || !strings.Contains(got.Reason, "carries additional permissions, and the command sets MAKEFLAGS") {
			t.Errorf("%s: matched %v, reason %q", pol, got.MatchedRules, got.Reason)
		}
	}
}

// TestRuleBypassUnwrappedCommand: a command the analysis finds inside
// another program's arguments (as unwrapping env -S or timeout does) is
// not one the plain check saw whole, so its rule cannot bypass; the same
// command named directly can.
func TestRuleBypassUnwrappedCommand(t *testing.T) {
	bin := hostBin(t, "cat", "timeout")
	ws := t.TempDir()
	req := CommandRequest{Cwd: ws, Sandbox: Sandbox{Mode: WorkspaceWrite}}
	check := plainCheckFor(req, hostEnv(bin)())
	wrapped := &command.Analysis{Argv: []string{"timeout", "5", "./bin/cat", "f"}, Segments: []command.Segment{{Argv: []string{"./bin/cat", "f"}, Literal: true}}}
	if why := check.GrantBlocker(wrapped); !strings.Contains(why, "runs inside another command") {
		t.Errorf("unwrapped segment: %q", why)
	}
	direct := &command.Analysis{Argv: []string{"timeout", "5", "cat", "f"}, Segments: []command.Segment{{Argv: []string{"timeout", "5", "cat", "f"}, Literal: true}}}
	if why := plainCheckFor(req, hostEnv(bin)()).GrantBlocker(direct); why != "" {
		t.Errorf("plain command: %q", why)
	}
	if why := plainCheckFor(req, hostEnv(bin)()).GrantBlocker(command.Analyze([]string{"cat", "\xff"})); why == "" {
		t.Error("non-UTF-8 argument passed")
	}
}
