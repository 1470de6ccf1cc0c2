package safe

import (
	"runtime"
	"testing"

	"github.com/wardenhq/warden/approvals/command"
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
