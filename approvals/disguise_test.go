package approvals

import (
	"strings"
	"testing"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/approvals/safe"
	"github.com/wardenhq/warden/sandbox"
)

// judgement is everything a disguise must not change.
type judgement struct {
	dangerous, knownSafe bool
	risk                 risk.Level
	decision             rules.Decision
}

func judge(t *testing.T, argv []string, ws, home string, ask AskForApproval) judgement {
	t.Helper()
	// Without a sandbox to confine it, `rm -rf build` is dangerous under
	// every policy (TestConfinedDeleteNeverLooser covers workspace-write).
	ev := (&Evaluator{Policy: Policy{Ask: ask}}).Evaluate(CommandRequest{Argv: argv, Cwd: ws, Sandbox: Sandbox{Mode: DangerFullAccess}})
	r := risk.Assess(command.Analyze(argv), risk.Context{Cwd: ws, Sandbox: sandbox.Policy{Mode: sandbox.WorkspaceWrite}, Home: home})
	return judgement{dangerous: ev.Dangerous, knownSafe: ev.KnownSafe, risk: r.Level, decision: ev.Decision}
}

// TestDisguiseSameJudgement: a command dressed up in a wrapper, a shell
// option cluster or a brace expansion gets the same dangerous flag,
// known-safe flag, risk level and decision (under every policy) as the
// plain command it runs.
func TestDisguiseSameJudgement(t *testing.T) {
	ws, home := riskWorkspace(t, 200)
	cases := []struct {
		plain     []string
		disguises [][]string
	}{
		{[]string{"rm", "-rf", "build"}, [][]string{
			{"bash", "-lc", "{rm,-rf,build}"},
			{"bash", "-lc", "{rm,-rf} build"},
			{"bash", "-lc", "rm -{r,f} build"},
			{"bash", "-ec", "rm -rf build"},
			{"bash", "-xc", "rm -rf build"},
			{"bash", "-e", "-c", "rm -rf build"},
			{"bash", "--norc", "-c", "rm -rf build"},
			{"bash", "--noprofile", "--norc", "-lec", "rm -rf build"},
			{"bash", "-o", "pipefail", "-c", "rm -rf build"},
			{"sh", "-c", "rm -rf \"$1\"", "sh", "build"},
			{"sh", "-c", "\"$@\"", "sh", "rm", "-rf", "build"},
			{"bash", "-c", "$0 -rf build", "rm"},
			{"env", "-S", "rm -rf build"},
			{"env", "-Srm -rf build"},
			{"env", "--split-string=rm -rf build"},
			{"env", "--split-string", "rm -rf build"},
			{"env", "-i", "-S", "rm -rf", "build"},
			{"env", "-u", "HOME", "rm", "-rf", "build"},
			{"env", "-C", ".", "rm", "-rf", "build"},
			{"env", "--", "rm", "-rf", "build"},
			{"env", "-S", "bash -ec 'rm -rf build'"},
			{"command", "rm", "-rf", "build"},
			{"command", "-p", "rm", "-rf", "build"},
			{"builtin", "command", "rm", "-rf", "build"},
			{"exec", "rm", "-rf", "build"},
			{"exec", "-a", "x", "rm", "-rf", "build"},
			{"nice", "rm", "-rf", "build"},
			{"nice", "-n", "5", "rm", "-rf", "build"},
			{"nice", "-n5", "rm", "-rf", "build"},
			{"nice", "-5", "rm", "-rf", "build"},
			{"nice", "--adjustment=5", "rm", "-rf", "build"},
			{"nohup", "rm", "-rf", "build"},
			{"timeout", "5", "rm", "-rf", "build"},
			{"timeout", "-s", "KILL", "-k", "1", "5s", "rm", "-rf", "build"},
			{"timeout", "--signal=TERM", "--preserve-status", "1m", "rm", "-rf", "build"},
			{"stdbuf", "-oL", "rm", "-rf", "build"},
			{"stdbuf", "-o", "L", "--error=0", "rm", "-rf", "build"},
			{"time", "rm", "-rf", "build"},
			{"time", "-f", "%e", "rm", "-rf", "build"},
			{"ionice", "-c", "3", "rm", "-rf", "build"},
			{"ionice", "-c3", "-n7", "rm", "-rf", "build"},
			{"setsid", "-f", "rm", "-rf", "build"},
			{"busybox", "rm", "-rf", "build"},
			{"timeout", "5", "bash", "-ec", "rm -rf build"},
			{"nice", "env", "-S", "sh -c 'rm -rf build'"},
			{"bash", "-c", "exec nice -n 1 timeout 5 rm -rf build"},
			{"bash", "-c", "command {rm,-rf,build}"},
			{"sh", "-c", "bash -ec 'rm -rf build'"},
			{"bash", "-c", "timeout 9 sh -xc 'rm -rf build'"},
		}},
		{[]string{"bash", "-c", "LD_PRELOAD=./x.so ls"}, [][]string{
			{"env", "LD_PRELOAD=./x.so", "ls"},
			{"env", "-S", "LD_PRELOAD=./x.so ls"},
			{"bash", "-c", "env LD_PRELOAD=./x.so ls"},
		}},
		{[]string{"ls", "-la"}, [][]string{
			{"bash", "-lc", "ls -la"},
			{"bash", "-ec", "ls -la"},
			{"bash", "--norc", "-c", "ls -la"},
			{"bash", "-lc", "{ls,-la}"},
			{"env", "ls", "-la"},
			{"env", "-i", "ls", "-la"},
			{"env", "-S", "ls -la"},
			{"command", "ls", "-la"},
			{"exec", "ls", "-la"},
			{"nice", "-n", "5", "ls", "-la"},
			{"timeout", "5", "ls", "-la"},
			{"timeout", "-k", "1", "5", "ls", "-la"},
			{"stdbuf", "-oL", "ls", "-la"},
			{"time", "ls", "-la"},
			{"ionice", "-c", "3", "ls", "-la"},
			{"setsid", "ls", "-la"},
			{"timeout", "5", "bash", "-c", "ls -la"},
			{"sh", "-c", "\"$@\"", "sh", "ls", "-la"},
		}},
		{[]string{"cat", "f"}, [][]string{
			{"xargs", "cat"},
			{"xargs", "-0", "-n", "1", "cat"},
			{"bash", "-c", "find . -name '*.go' | xargs -r cat"},
		}},
	}
	for _, c := range cases {
		for _, ask := range []AskForApproval{OnRequest, Untrusted, Never} {
			want := judge(t, c.plain, ws, home, ask)
			for _, d := range c.disguises {
				if got := judge(t, d, ws, home, ask); got != want {
					t.Errorf("%s: %q judged %+v, but the plain %q is %+v", ask, d, got, c.plain, want)
				}
			}
		}
	}
}

// TestDisguiseWrappersThatChangeWhatRuns: wrappers that change the
// environment, the user or the files written are not known-safe even when
// the command they run is.
func TestDisguiseWrappersThatChangeWhatRuns(t *testing.T) {
	for _, argv := range [][]string{
		{"env", "LD_PRELOAD=./x.so", "ls"},
		{"env", "FOO=1", "ls"},
		{"env", "-S", "PATH=./bin ls"},
		{"env", "-S", "ls ${HOME}"},
		{"sudo", "ls"},
		{"doas", "ls"},
		{"nohup", "ls"}, // writes nohup.out
		{"time", "-o", "out", "ls"},
		{"time", "--output=out", "ls"},
		{"xargs", "--process-slot-var=LD_PRELOAD", "cat"},
		{"xargs", "uniq"},
		{"xargs", "find"},
		{"xargs", "sed", "-n", "1p"},
		{"timeout", "--bogus", "5", "ls"},
		{"ionice", "-p", "1", "ls"},
		{"taskset", "1", "ls"},
		{"bash", "-ic", "ls"},
		{"bash", "-kc", "ls LD_PRELOAD=./x.so"},
		{"bash", "--rcfile", "./evil", "-ic", "ls"},
		{"bash", "--weird", "-c", "ls"},
		{"xargs", "sh", "-c", "ls \"$1\"", "sh"},
	} {
		if safe.KnownSafe(command.Analyze(argv)) {
			t.Errorf("%q is known-safe", argv)
		}
	}
}

// TestDisguiseEmptyScriptAsks: like Codex, an empty or blank script is put
// to the user rather than allowed, and refused where nobody can be asked.
func TestDisguiseEmptyScriptAsks(t *testing.T) {
	ws := t.TempDir()
	for _, argv := range [][]string{
		{"bash", "-lc", ""},
		{"sh", "-c", "  "},
		{"bash", "-c", "\n\t\n"},
		{"bash", "-c", "# only a comment"},
		{"timeout", "5", "bash", "-lc", ""},
	} {
		for ask, want := range map[AskForApproval]rules.Decision{OnRequest: rules.Prompt, Untrusted: rules.Prompt, OnFailure: rules.Prompt, Never: rules.Forbidden} {
			ev := (&Evaluator{Policy: Policy{Ask: ask}}).Evaluate(CommandRequest{Argv: argv, Cwd: ws, Sandbox: Sandbox{Mode: WorkspaceWrite}})
			if ev.Decision != want || ev.KnownSafe {
				t.Errorf("%s %q: %s (known-safe %v), want %s; %s", ask, argv, ev.Decision, ev.KnownSafe, want, ev.Reason)
			}
		}
	}
	// The twin: a script with a command is judged as before.
	ev := (&Evaluator{Policy: Policy{Ask: OnRequest}}).Evaluate(CommandRequest{Argv: []string{"bash", "-lc", "ls"}, Cwd: ws, Sandbox: Sandbox{Mode: WorkspaceWrite}})
	if ev.Decision != rules.Allow || !ev.KnownSafe {
		t.Errorf("bash -lc ls: %s known-safe %v", ev.Decision, ev.KnownSafe)
	}
}

// TestKnownSafeSeesWhatRuns: output operands, script-running options and
// code the analyser cannot see make a command not known-safe; the plain
// reading forms stay known-safe.
func TestKnownSafeSeesWhatRuns(t *testing.T) {
	cases := []struct {
		argv []string
		safe bool
	}{
		// sed: only scripts that print; options parsed wherever they are.
		{[]string{"sed", "-n", "1,5p", "f"}, true},
		{[]string{"sed", "-n", "3p"}, true},
		{[]string{"sed", "-n", "1p", "--expression=1e touch pwned"}, false},
		{[]string{"sed", "-n", "1p", "-e1e touch pwned"}, false},
		{[]string{"sed", "-e1e", "touch pwned"}, false},
		{[]string{"sed", "-n", "-e", "w out"}, false},
		{[]string{"sed", "-n", "1p", "-i"}, false},
		{[]string{"sed", "-n", "1p", "-s"}, true}, // -s is --separate
		{[]string{"sed", "-n", "1e touch pwned", "f"}, false},
		{[]string{"sed", "-n", "1w out", "f"}, false},
		{[]string{"sed", "-n", "1W out", "f"}, false},
		{[]string{"sed", "-n", "1r /etc/shadow", "f"}, false},
		{[]string{"sed", "-i", "-n", "1p", "f"}, false},
		{[]string{"sed", "-n", "--in-place", "1p"}, false},
		{[]string{"sed", "-f", "script.sed", "f"}, false},
		// uniq: one operand reads, a second is written.
		{[]string{"uniq", "f"}, true},
		{[]string{"uniq", "-f", "2", "f"}, true},
		{[]string{"uniq", "-s", "1", "-w", "3", "in"}, true},
		{[]string{"uniq", "in", "out"}, false},
		{[]string{"uniq", "-c", "in", "out"}, false},
		{[]string{"uniq", "--", "in", "out"}, false},
		{[]string{"uniq", "-u", "in", "-"}, false},
		// find: no action that runs, deletes or writes.
		{[]string{"find", ".", "-name", "*.go"}, true},
		{[]string{"find", ".", "-fprint", "out"}, false},
		{[]string{"find", ".", "-fls", "out"}, false},
		{[]string{"find", ".", "-exec", "ls", ";"}, false},
		{[]string{"find", ".", "-delete"}, false},
		// Programs with output files or script-running options are not
		// on the list at all.
		{[]string{"sort", "-o", "out", "f"}, false},
		{[]string{"sort", "--compress-program=sh", "f"}, false},
		{[]string{"tee", "out"}, false},
		{[]string{"awk", "{ system(\"touch x\") }", "f"}, false},
		{[]string{"awk", "{ print > \"out\" }", "f"}, false},
		{[]string{"less", "f"}, false},
		{[]string{"more", "f"}, false},
		{[]string{"git", "-P", "log", "--ext-diff"}, false},
		{[]string{"git", "-c", "core.pager=touch x", "log"}, false},
		{[]string{"git", "--paginate", "status"}, false},
		{[]string{"xargs", "rm"}, false},
		{[]string{"rustc", "--version"}, false},
		// Scripts whose only commands look harmless but that evaluate
		// arithmetic, where a subscript runs a command.
		{[]string{"bash", "-c", "let 'a[$(touch pwned)]=1'"}, false},
		{[]string{"bash", "-c", "let 'a[$(touch pwned)]=1'; ls"}, false},
		{[]string{"bash", "-c", "[[ 'a[$(touch pwned)]' -eq 0 ]] && ls"}, false},
		{[]string{"bash", "-c", "[[ -v 'a[$(touch pwned)]' ]]; ls"}, false},
		{[]string{"bash", "-c", "(( a[$(touch pwned)] )); ls"}, false},
		{[]string{"bash", "-c", "for x in 'a[$(touch pwned)]'; do (( x )); done; ls"}, false},
		{[]string{"bash", "-c", "for ((i=0; i<1; i++)); do ls; done"}, false},
		{[]string{"bash", "-c", "echo ${!x}"}, false},
		{[]string{"bash", "-c", "cat < \"${x@P}\""}, false},
		{[]string{"bash", "-c", "{ ls; } < \"${a[$(touch pwned)]}\""}, false},
		{[]string{"zsh", "-c", "ls *(e:'touch pwned':)"}, false},
		{[]string{"zsh", "-c", "ls *(+cmd)"}, false},
		{[]string{"bash", "-c", "bash -c \"$X\""}, false},
		// Their twins.
		{[]string{"bash", "-c", "[[ -f go.mod ]] && ls"}, true},
		{[]string{"bash", "-c", "[[ $x == y ]] || ls"}, true},
		{[]string{"zsh", "-c", "ls '*(e:x:)'"}, true},
		{[]string{"bash", "-c", "echo {a,b}"}, true},
		{[]string{"bash", "-c", "cat {a,b}.txt"}, true},
		{[]string{"bash", "-lc", "ls && head -n 5 f"}, true},
	}
	for _, c := range cases {
		a := command.Analyze(c.argv)
		if got := safe.KnownSafe(a); got != c.safe {
			t.Errorf("KnownSafe(%q) = %v, want %v (segments %v, problems %q)", c.argv, got, c.safe, a.Segments, a.Problems)
		}
	}
}

// TestDisguiseScriptArguments: a script's $1 and "$@" are read from the
// shell's arguments, so `sh -c '"$@"' sh rm -rf x` is rm -rf x.
func TestDisguiseScriptArguments(t *testing.T) {
	cases := []struct {
		argv []string
		want string
	}{
		{[]string{"sh", "-c", "\"$@\"", "sh", "rm", "-rf", "x"}, "rm -rf x"},
		{[]string{"sh", "-c", "$1 $2", "sh", "ls", "a b"}, "ls a b"},
		{[]string{"bash", "-c", "echo \"$*\"", "_", "a", "b"}, "echo a b"},
		{[]string{"bash", "-c", "echo \"$3\"", "_", "a"}, "echo "},
		{[]string{"bash", "-c", "echo {x,y}z"}, "echo xz yz"},
		{[]string{"bash", "-c", "echo $1 b", "_", ""}, "echo b"},
	}
	for _, c := range cases {
		a := command.Analyze(c.argv)
		if len(a.Segments) != 1 || strings.Join(a.Segments[0].Argv, " ") != c.want {
			t.Errorf("%q: segments %v, want %q", c.argv, a.Segments, c.want)
		}
	}
	// Unquoted $2 holding "a b" is split again: not a literal word.
	if a := command.Analyze([]string{"sh", "-c", "ls $1", "sh", "a b"}); safe.KnownSafe(a) {
		t.Errorf("unquoted multi-word argument treated as known-safe")
	}
	// shift and set move the arguments: "$@" is no longer known.
	for _, argv := range [][]string{
		{"sh", "-c", "shift; \"$@\"", "sh", "x", "rm", "-rf", "build"},
		{"sh", "-c", "set -- rm -rf build; \"$@\"", "sh", "ls"},
	} {
		if a := command.Analyze(argv); a.Understood() || safe.KnownSafe(a) {
			t.Errorf("%q: arguments read as if unmoved: %v", argv, a.Segments)
		}
	}
	// xargs appends arguments at run time: $1 stays unknown.
	if a := command.Analyze([]string{"xargs", "sh", "-c", "\"$1\"", "sh"}); a.Understood() {
		t.Errorf("xargs sh -c '\"$1\"': command name treated as known: %v", a.Segments)
	}
}
