package approvals

import (
	"github.com/wardenhq/warden/approvals/command"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func TestKnownSafe(t *testing.T) {
	linux := runtime.GOOS == "linux"
	cases := []struct {
		argv []string
		safe bool
	}{
		// The known-safe list (Codex is_known_safe_command).
		{[]string{"ls"}, true},
		{[]string{"ls", "-la", "src"}, true},
		{[]string{"cat", "README.md"}, true},
		{[]string{"cd", "src"}, true},
		{[]string{"cut", "-d:", "-f1", "/etc/passwd"}, true},
		{[]string{"echo", "hello"}, true},
		{[]string{"expr", "1", "+", "2"}, true},
		{[]string{"false"}, true},
		{[]string{"true"}, true},
		{[]string{"grep", "-rn", "TODO", "."}, true},
		{[]string{"head", "-n", "5", "f"}, true},
		{[]string{"tail", "-f", "log"}, true},
		{[]string{"id"}, true},
		{[]string{"nl", "f"}, true},
		{[]string{"paste", "a", "b"}, true},
		{[]string{"comm", "-12", "a", "b"}, true},
		{[]string{"jq", ".items[] | .name", "data.json"}, true},
		{[]string{"jq", "-r", "--rawfile", "t", "tmpl.txt", ".", "data.json"}, true},
		{[]string{"printf", "%s\\n", "a", "b"}, true},
		{[]string{"printf", "-v", "PATH", "%s", "/tmp/x"}, false},
		{[]string{"printf", "-vPATH", "%s", "/tmp/x"}, false},
		{[]string{"type", "go"}, true},
		{[]string{"uptime", "-p"}, true},
		{[]string{"pwd"}, true},
		{[]string{"rev", "f"}, true},
		{[]string{"seq", "10"}, true},
		{[]string{"stat", "f"}, true},
		{[]string{"tr", "a", "b"}, true},
		{[]string{"uname", "-a"}, true},
		{[]string{"uniq"}, true},
		{[]string{"uniq", "-c", "f"}, true},
		{[]string{"wc", "-l", "f"}, true},
		{[]string{"which", "go"}, true},
		{[]string{"whoami"}, true},
		{[]string{"numfmt", "1000"}, linux},
		{[]string{"tac", "f"}, linux},
		// base64 only without an output file.
		{[]string{"base64", "f"}, true},
		{[]string{"base64", "-d", "f"}, true},
		{[]string{"base64", "-o", "out", "f"}, false},
		{[]string{"base64", "--output", "out"}, false},
		{[]string{"base64", "--output=out"}, false},
		{[]string{"base64", "-oout"}, false},
		// find without actions that run, delete or write.
		{[]string{"find", ".", "-name", "*.go"}, true},
		{[]string{"find", ".", "-exec", "rm", "{}", ";"}, false},
		{[]string{"find", ".", "-execdir", "ls", ";"}, false},
		{[]string{"find", ".", "-ok", "rm", ";"}, false},
		{[]string{"find", ".", "-okdir", "rm", ";"}, false},
		{[]string{"find", ".", "-delete"}, false},
		{[]string{"find", ".", "-fls", "out"}, false},
		{[]string{"find", ".", "-fprint", "out"}, false},
		{[]string{"find", ".", "-fprint0", "out"}, false},
		{[]string{"find", ".", "-fprintf", "out", "%p"}, false},
		// rg without preprocessors or decompression.
		{[]string{"rg", "TODO"}, true},
		{[]string{"rg", "-n", "-i", "x"}, true},
		{[]string{"rg", "--pre", "sh", "x"}, false},
		{[]string{"rg", "--pre=sh", "x"}, false},
		{[]string{"rg", "--hostname-bin", "sh", "x"}, false},
		{[]string{"rg", "--hostname-bin=sh", "x"}, false},
		{[]string{"rg", "--search-zip", "x"}, false},
		{[]string{"rg", "-z", "x"}, false},
		{[]string{"rg", "-iz", "x"}, false},
		// sed with a script that only prints (see TestSedScripts).
		{[]string{"sed", "-n", "10p", "f"}, true},
		{[]string{"sed", "-n", "1,20p", "f"}, true},
		{[]string{"sed", "-n", "1,20p"}, true},
		{[]string{"sed", "-i", "s/a/b/", "f"}, false},
		{[]string{"sed", "-n", "1,20p", "f", "g"}, true},
		{[]string{"sed", "-n", "1,20w out", "f"}, false},
		{[]string{"sed", "s/a/b/"}, true},
		{[]string{"sed", "s/a/b/w out"}, false},
		// git reads only as Warden runs it (hardened; see TestGitHardening).
		{[]string{"git", "status"}, true},
		{[]string{"git", "log"}, true},
		{[]string{"git", "diff"}, true},
		{[]string{"git", "show", "HEAD"}, true},
		{[]string{"git", "branch"}, true},
		{[]string{"git", "-C", "/tmp", "status"}, true},
		{[]string{"git", "-c", "core.fsmonitor=x", "status"}, false},
		{[]string{"git", "-c", "core.fsmonitor=", "status"}, true},
		{[]string{"git", "-c", "core.fsmonitor=", "-c", "core.pager=cat", "log", "-1"}, true},
		{[]string{"git", "-c", "core.pager=less", "log"}, false},
		{[]string{"git", "-c", "core.hooksPath=/dev/null", "-c", "core.hooksPath=./h", "status"}, false},
		{[]string{"git", "blame", "f"}, true},
		{[]string{"git", "blame", "--textconv", "f"}, false},
		{[]string{"git", "grep", "-n", "x"}, true},
		{[]string{"git", "grep", "-Ovim", "x"}, false},
		{[]string{"git", "grep", "--open-files-in-pager", "x"}, false},
		{[]string{"git", "cat-file", "-p", "HEAD:f"}, true},
		{[]string{"git", "cat-file", "--filters", "HEAD:f"}, false},
		{[]string{"git", "cat-file", "--textconv", "HEAD:f"}, false},
		{[]string{"git", "rev-parse", "--show-toplevel"}, true},
		{[]string{"git", "ls-files"}, true},
		{[]string{"git", "describe", "--tags"}, true},
		{[]string{"git", "tag"}, true},
		{[]string{"git", "tag", "-l", "v1.*"}, true},
		{[]string{"git", "tag", "-n5", "--sort=-creatordate"}, true},
		{[]string{"git", "tag", "v2"}, false},
		{[]string{"git", "tag", "-d", "v1"}, false},
		{[]string{"git", "tag", "-v", "v1"}, false},
		{[]string{"git", "tag", "-a", "v2", "-m", "x"}, false},
		{[]string{"git", "remote", "-v"}, true},
		{[]string{"git", "remote", "get-url", "origin"}, true},
		{[]string{"git", "remote", "add", "x", "https://example.com/r.git"}, false},
		{[]string{"git", "remote", "show", "origin"}, false},
		{[]string{"git", "stash", "list"}, true},
		{[]string{"git", "stash"}, false},
		{[]string{"git", "stash", "list", "-p"}, false},
		{[]string{"git", "stash", "pop"}, false},
		{[]string{"git", "config", "--get", "user.name"}, false},
		{[]string{"git", "reflog", "expire", "--all"}, false},
		// Exact version probes.
		{[]string{"git", "--version"}, true},
		{[]string{"cargo", "--version"}, false}, // rustup: rust-toolchain.toml may name a workspace toolchain
		{[]string{"make", "--version"}, true},
		{[]string{"node", "-v"}, true},
		{[]string{"go", "version"}, true},
		{[]string{"node", "version"}, false},
		{[]string{"go", "version", "-m", "bin"}, false},
		{[]string{"cargo", "build"}, false},
		// Not on the list.
		{[]string{"rm", "f"}, false},
		{[]string{"python3", "-c", "print(1)"}, false},
		{[]string{"bash"}, false},
		{[]string{"/tmp/ls"}, false},
		{[]string{"/bin/ls"}, false},
		{[]string{"make"}, false},
		{[]string{}, false},
		// Shell scripts: safe only if every command is.
		{[]string{"bash", "-lc", "ls && pwd"}, true},
		{[]string{"bash", "-c", "grep x f | wc -l"}, true},
		{[]string{"zsh", "-lc", "ls; echo done"}, true},
		{[]string{"sh", "-c", "cat a || cat b"}, true},
		{[]string{"bash", "-lc", "ls && rm -rf x"}, false},
		{[]string{"bash", "-lc", "ls > out.txt"}, false},
		{[]string{"bash", "-lc", "ls >> out.txt"}, false},
		{[]string{"bash", "-lc", "ls 2>/dev/null"}, true},
		{[]string{"bash", "-lc", "ls 2>&1 | head"}, true},
		{[]string{"bash", "-lc", "cat < in.txt"}, true},
		{[]string{"bash", "-lc", "echo $HOME"}, false},
		{[]string{"bash", "-lc", "$CMD"}, false},
		{[]string{"bash", "-lc", "echo $(rm -rf x)"}, false},
		{[]string{"bash", "-lc", "(ls && pwd)"}, true},
		{[]string{"bash", "-lc", "FOO=1 ls"}, false},
		{[]string{"bash", "-lc", "ls &"}, false},
		{[]string{"bash", "-lc", "f() { ls; }; f"}, false},
		{[]string{"bash", "-lc", "ls && ("}, false},
		{[]string{"bash", "-lc", "git status"}, true},
		{[]string{"bash", "-lc", "cat <<EOF\nhello\nEOF"}, true},
		{[]string{"bash", "-lc", "echo 'single' \"double\""}, true},
		{[]string{"bash", "-l", "-c", "ls"}, true},
		{[]string{"bash", "-x", "-c", "ls"}, true},
		{[]string{"bash", "-lc", "ls", "extra"}, true},
		{[]string{"fish", "-c", "ls"}, false},
		{[]string{"bash", "-lc", "sh -c 'ls && pwd'"}, true},
		{[]string{"bash", "-lc", "sh -c 'ls > x'"}, false},
		{[]string{"bash", "-lc", "ls >| x"}, false},
		{[]string{"bash", "-lc", "ls &> x"}, false},
		{[]string{"bash", "-lc", "ls >&x"}, false},
		{[]string{"ls", "\xff"}, false},
	}
	for _, c := range cases {
		if got := KnownSafe(command.Analyze(c.argv)); got != c.safe {
			t.Errorf("KnownSafe(%q) = %v, want %v (problems %v)", c.argv, got, c.safe, command.Analyze(c.argv).Problems)
		}
	}
}

func TestDangerous(t *testing.T) {
	cases := []struct {
		argv      []string
		dangerous bool
	}{
		{[]string{"rm", "-f", "x"}, true},
		{[]string{"rm", "-rf", "build"}, true},
		{[]string{"rm", "-fr", "build"}, true},
		{[]string{"rm", "-Rf", "build"}, true},
		{[]string{"rm", "--force", "x"}, true},
		{[]string{"rm", "-r", "build"}, false},
		{[]string{"rm", "x"}, false},
		{[]string{"rm", "--", "-f"}, false},
		{[]string{"rm", "-r", "--", "-f"}, false},
		{[]string{"/bin/rm", "-f", "x"}, true},
		{[]string{"sudo", "rm", "-rf", "/"}, true},
		{[]string{"sudo", "-u", "root", "rm", "-f", "x"}, true},
		{[]string{"env", "A=1", "rm", "-f", "x"}, true},
		{[]string{"xargs", "rm", "-f"}, true},
		{[]string{"timeout", "5", "rm", "-rf", "x"}, true},
		{[]string{"bash", "-lc", "ls && rm -rf build"}, true},
		{[]string{"bash", "-lc", "find . | xargs rm -f"}, true},
		{[]string{"bash", "-lc", "echo $(rm -rf x)"}, true},
		{[]string{"bash", "-lc", "if true; then rm -f x; fi"}, true},
		{[]string{"bash", "-lc", "for f in *; do rm -f \"$f\"; done"}, true},
		{[]string{"bash", "-lc", "sh -c 'rm -rf x'"}, true},
		{[]string{"bash", "-lc", "echo rm -rf x"}, false},
		{[]string{"git", "push", "--force"}, false},
		{[]string{"ls"}, false},
	}
	for _, c := range cases {
		if got := Dangerous(command.Analyze(c.argv)); got != c.dangerous {
			t.Errorf("Dangerous(%q) = %v, want %v", c.argv, got, c.dangerous)
		}
	}
}

func TestAnalyzeSplitsScripts(t *testing.T) {
	cases := []struct {
		script   string
		commands [][]string
		problem  string // a substring of the first problem, "" for none
	}{
		{"ls && pwd", [][]string{{"ls"}, {"pwd"}}, ""},
		{"a || b; c | d", [][]string{{"a"}, {"b"}, {"c"}, {"d"}}, ""},
		{"(cd src && make)", [][]string{{"cd", "src"}, {"make"}}, ""},
		{"echo $(date) `whoami`", [][]string{{"echo", "$(date)", "$(whoami)"}, {"date"}, {"whoami"}}, ""},
		{"diff <(ls a) <(ls b)", [][]string{{"diff", "<(ls a)", "<(ls b)"}, {"ls", "a"}, {"ls", "b"}}, ""},
		{"if test -f x; then cat x; fi", [][]string{{"test", "-f", "x"}, {"cat", "x"}}, ""},
		{"while read l; do echo \"$l\"; done < f", [][]string{{"read", "l"}, {"echo", "\"$l\""}}, ""},
		{"echo 'a b' \"c d\" e\\ f", [][]string{{"echo", "a b", "c d", "e f"}}, ""},
		{"git commit -m \"fix: it\"", [][]string{{"git", "commit", "-m", "fix: it"}}, ""},
		{"bash -c 'ls; pwd'", [][]string{{"ls"}, {"pwd"}}, ""},
		{"ls &", [][]string{{"ls"}}, "background"},
		{"$X y", [][]string{{"$X", "y"}}, "computed at run time"},
		{"f() { :; }", nil, "function"},
		{"ls && (", nil, "cannot parse"},
		{"export A=1", nil, "declares"},
		{"A=1", nil, "assigns"},
	}
	for _, c := range cases {
		a := command.Analyze([]string{"bash", "-lc", c.script})
		var got [][]string
		for _, s := range a.Segments {
			got = append(got, s.Argv)
		}
		if c.commands != nil && !reflect.DeepEqual(got, c.commands) {
			t.Errorf("%q: commands %q, want %q", c.script, got, c.commands)
		}
		switch {
		case c.problem == "" && len(a.Problems) > 0:
			t.Errorf("%q: unexpected problems %q", c.script, a.Problems)
		case c.problem != "" && (len(a.Problems) == 0 || !strings.Contains(a.Problems[0], c.problem)):
			t.Errorf("%q: problems %q, want one containing %q", c.script, a.Problems, c.problem)
		}
	}
}

func TestAnalyzeBadInput(t *testing.T) {
	huge := strings.Repeat("echo hi; ", (1<<20)/9)
	cases := map[string][]string{
		"non-UTF-8 argv":    {"ls", "\xff\xfe"},
		"1 MB command line": {"bash", "-lc", huge},
		"parser rejects":    {"bash", "-lc", "echo 'unterminated"},
		"empty":             {},
		"1 MB plain argv":   {"echo", huge},
	}
	for name, argv := range cases {
		a := command.Analyze(argv)
		if len(a.Problems) == 0 {
			t.Errorf("%s: no problem reported", name)
		}
		if KnownSafe(a) {
			t.Errorf("%s: treated as known-safe", name)
		}
		ev := (&Evaluator{Policy: Policy{Ask: OnRequest}}).Evaluate(CommandRequest{Argv: argv, Cwd: t.TempDir(), Sandbox: Sandbox{Mode: WorkspaceWrite}})
		if ev.Decision != Prompt {
			t.Errorf("%s: decision %s, want prompt (the safe default); reason %q", name, ev.Decision, ev.Reason)
		}
		if ev.Reason == "" || len(ev.Reason) > 2000 {
			t.Errorf("%s: reason missing or too long for a dialog (%d bytes)", name, len(ev.Reason))
		}
	}
}

func TestUnwrap(t *testing.T) {
	cases := []struct {
		argv, inner, wrappers []string
	}{
		{[]string{"sudo", "rm", "x"}, []string{"rm", "x"}, []string{"sudo"}},
		{[]string{"sudo", "-u", "bob", "ls"}, []string{"ls"}, []string{"sudo"}},
		{[]string{"env", "-i", "A=1", "B=2", "make"}, []string{"make"}, []string{"env"}},
		{[]string{"nice", "-n", "10", "timeout", "5s", "make", "all"}, []string{"make", "all"}, []string{"nice", "timeout"}},
		{[]string{"ls"}, []string{"ls"}, nil},
	}
	for _, c := range cases {
		inner, w := command.Unwrap(c.argv)
		if !reflect.DeepEqual(inner, c.inner) || !reflect.DeepEqual(w, c.wrappers) {
			t.Errorf("Unwrap(%q) = %q, %q; want %q, %q", c.argv, inner, w, c.inner, c.wrappers)
		}
	}
}
