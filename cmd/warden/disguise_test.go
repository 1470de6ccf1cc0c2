package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// disguiseWorkspace makes a workspace with a build/ directory to lose.
func disguiseWorkspace(t *testing.T) (home, ws string) {
	t.Helper()
	home = t.TempDir()
	ws = filepath.Join(home, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"build/a.o", "build/b.o", "f"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("line 1\nline 2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// build/ holds a repository's data, so `rm -rf build` is high risk and
	// dangerous (a small rm -rf inside the writable roots runs sandboxed
	// under on-request and never).
	if err := os.MkdirAll(filepath.Join(ws, "build", "dep", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return home, ws
}

func policyCheck(t *testing.T, home, ws, approval string, argv []string) policyJSON {
	t.Helper()
	args := append([]string{"policy", "check", "--approval", approval, "--cwd", ws, "--json", "--"}, argv...)
	stdout, stderr, code := runWardenEnv(t, home, "", args...)
	var p policyJSON
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatalf("%q: exit %d, bad JSON %q (%s)", argv, code, stdout, stderr)
	}
	return p
}

// TestDisguisePolicyCheckAdversarial drives `warden policy check` with
// disguised destructive commands (each must be asked about and flagged
// dangerous) and commands that smuggle code past the known-safe list (each
// must not be known-safe, so `untrusted` asks), each beside a harmless twin
// that must keep its plain judgement.
func TestDisguisePolicyCheckAdversarial(t *testing.T) {
	home, ws := disguiseWorkspace(t)
	dangerous := [][]string{
		{"bash", "-lc", "{rm,-rf,build}"},
		{"bash", "-lc", "rm -{r,f} build"},
		{"bash", "-ec", "rm -rf build"},
		{"bash", "-xc", "rm -rf build"},
		{"bash", "-e", "-c", "rm -rf build"},
		{"bash", "--norc", "-c", "rm -rf build"},
		{"bash", "-lec", "rm -rf build"},
		{"sh", "-c", "\"$@\"", "sh", "rm", "-rf", "build"},
		{"env", "-S", "rm -rf build"},
		{"env", "--split-string=rm -rf build"},
		{"env", "-i", "-u", "HOME", "A=1", "rm", "-rf", "build"},
		{"env", "-C", ".", "rm", "-rf", "build"},
		{"command", "rm", "-rf", "build"},
		{"builtin", "exec", "rm", "-rf", "build"},
		{"exec", "rm", "-rf", "build"},
		{"nice", "-n", "10", "rm", "-rf", "build"},
		{"nohup", "rm", "-rf", "build"},
		{"timeout", "-k", "1", "5s", "rm", "-rf", "build"},
		{"stdbuf", "-oL", "rm", "-rf", "build"},
		{"time", "rm", "-rf", "build"},
		{"ionice", "-c", "3", "rm", "-rf", "build"},
		{"setsid", "rm", "-rf", "build"},
		{"sudo", "-u", "root", "rm", "-rf", "build"},
		{"doas", "rm", "-rf", "build"},
		{"xargs", "-0", "rm", "-rf"},
		{"bash", "-c", "ls build | xargs rm"},
		{"timeout", "5", "bash", "-ec", "rm -rf build"},
		{"env", "-S", "sh -c 'rm -rf build'"},
		{"bash", "-c", "find build -exec rm -rf {} +"},
	}
	for _, argv := range dangerous {
		for approval, want := range map[string]string{"on-request": "prompt", "never": "forbidden"} {
			p := policyCheck(t, home, ws, approval, argv)
			if p.Decision != want || !p.Dangerous || p.KnownSafe {
				t.Errorf("attack %q under %s: decision %s dangerous %v known-safe %v; want %s, dangerous", argv, approval, p.Decision, p.Dangerous, p.KnownSafe, want)
			}
		}
	}
	notSafe := [][]string{
		{"sed", "-n", "1p", "--expression=1e touch pwned"},
		{"sed", "-n", "1p", "-e1e touch pwned"},
		{"sed", "-e1e", "touch pwned"},
		{"sed", "-n", "-e", "w out"},
		{"sed", "-n", "1p", "-i"},
		{"uniq", "f", "out"},
		{"sort", "-o", "out", "f"},
		{"find", ".", "-fprint", "out"},
		{"awk", "BEGIN { system(\"touch pwned\") }"},
		{"tee", "out"},
		{"less", "f"},
		{"git", "-c", "core.pager=touch pwned", "log"},
		{"cargo", "--version"},
		{"bash", "-c", "let 'a[$(touch pwned)]=1'"},
		{"bash", "-c", "let 'a[$(touch pwned)]=1'; ls"},
		{"bash", "-c", "[[ 'a[$(touch pwned)]' -eq 0 ]] || ls"},
		{"bash", "-c", "(( a[$(touch pwned)] )); ls"},
		{"zsh", "-c", "ls *(e:'touch pwned':)"},
		{"env", "LD_PRELOAD=./x.so", "ls"},
		{"nohup", "ls"},
		{"time", "-o", "out", "ls"},
		{"bash", "-ic", "ls"},
		{"xargs", "uniq"},
		{"bash", "-lc", ""},
		{"sh", "-c", "  "},
	}
	for _, argv := range notSafe {
		if p := policyCheck(t, home, ws, "on-request", argv); p.KnownSafe {
			t.Errorf("attack %q under on-request: known-safe", argv)
		}
		if p := policyCheck(t, home, ws, "untrusted", argv); p.Decision != "prompt" || p.KnownSafe {
			t.Errorf("attack %q under untrusted: decision %s known-safe %v; want prompt", argv, p.Decision, p.KnownSafe)
		}
	}
	// Blank scripts ask even under on-request (as Codex does).
	for _, argv := range [][]string{{"bash", "-lc", ""}, {"sh", "-c", "  "}} {
		if p := policyCheck(t, home, ws, "on-request", argv); p.Decision != "prompt" {
			t.Errorf("blank script %q under on-request: %s, want prompt", argv, p.Decision)
		}
	}
	twins := [][]string{
		{"sed", "-n", "1,5p", "f"},
		{"uniq", "f"},
		{"uniq", "-c", "f"},
		{"find", ".", "-name", "*.o"},
		{"ls", "build"},
		{"env", "ls"},
		{"env", "-i", "ls"},
		{"env", "-S", "ls -la"},
		{"timeout", "5", "ls"},
		{"nice", "-n", "5", "ls"},
		{"stdbuf", "-oL", "cat", "f"},
		{"command", "-v", "ls"},
		{"bash", "-lc", "ls"},
		{"bash", "-ec", "ls build"},
		{"bash", "--norc", "-c", "cat f"},
		{"bash", "-lc", "echo {a,b}"},
		{"bash", "-c", "[[ -f f ]] && cat f"},
		{"bash", "-c", "ls build | xargs cat"},
		{"timeout", "5", "bash", "-c", "ls"},
		{"zsh", "-c", "ls"},
	}
	for _, argv := range twins {
		for _, approval := range []string{"on-request", "untrusted"} {
			p := policyCheck(t, home, ws, approval, argv)
			if p.Decision != "allow" || !p.KnownSafe || p.Dangerous || p.Risk.Level != "low" {
				t.Errorf("twin %q under %s: decision %s known-safe %v dangerous %v risk %s; want a known-safe allow (%s)", argv, approval, p.Decision, p.KnownSafe, p.Dangerous, p.Risk.Level, p.Reason)
			}
		}
	}
	// Twins that are not known-safe but not dangerous either: they run in
	// the sandbox unasked under on-request, as the plain command does.
	for _, argv := range [][]string{
		{"env", "FOO=1", "ls"},
		{"rm", "build/a.o"},
		{"timeout", "5", "rm", "build/a.o"},
		{"bash", "-ec", "rm build/a.o"},
	} {
		if p := policyCheck(t, home, ws, "on-request", argv); p.Decision != "allow" || p.Dangerous {
			t.Errorf("twin %q under on-request: decision %s dangerous %v; want allow (%s)", argv, p.Decision, p.Dangerous, p.Reason)
		}
	}
}

// TestDisguiseExecRefusesDisguisedRm runs disguised `rm -rf build` through
// `warden exec` under never (refused outright: dangerous) and untrusted
// with --deny (asked, denied); nothing is deleted. The harmless twins run.
func TestDisguiseExecRefusesDisguisedRm(t *testing.T) {
	home, ws := disguiseWorkspace(t)
	attacks := [][]string{
		{"bash", "-lc", "{rm,-rf,build}"},
		{"bash", "-ec", "rm -rf build"},
		{"env", "-S", "rm -rf build"},
		{"timeout", "5", "sh", "-xc", "rm -rf build"},
		{"sh", "-c", "\"$@\"", "sh", "rm", "-rf", "build"},
	}
	for _, approval := range []string{"never", "untrusted"} {
		for _, argv := range attacks {
			args := append([]string{"exec", "--cwd", ws, "--approval", approval, "--deny", "--"}, argv...)
			_, stderr, code := runWardenEnv(t, home, "", args...)
			if code != 77 {
				t.Errorf("%s %q: exit %d, want 77 (refused); %s", approval, argv, code, stderr)
			}
			if _, err := os.Stat(filepath.Join(ws, "build", "a.o")); err != nil {
				t.Fatalf("%s %q deleted build/: %v", approval, argv, err)
			}
		}
	}
	// The twins run: a known-safe look under untrusted with --deny, and
	// a non-dangerous disguised command under never (in the sandbox).
	for _, c := range []struct {
		approval string
		argv     []string
		out      string
	}{
		{"untrusted", []string{"bash", "-ec", "{ls,build}"}, "a.o"},
		{"untrusted", []string{"timeout", "5", "sed", "-n", "2p", "f"}, "line 2"},
		{"never", []string{"env", "-S", "rm build/b.o"}, ""},
	} {
		args := append([]string{"exec", "--cwd", ws, "--approval", c.approval, "--deny", "--"}, c.argv...)
		stdout, stderr, code := runWardenEnv(t, home, "", args...)
		if code != 0 || !strings.Contains(stdout, c.out) {
			t.Errorf("twin %s %q: exit %d, stdout %q, want %q; %s", c.approval, c.argv, code, stdout, c.out, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "build", "b.o")); !os.IsNotExist(err) {
		t.Errorf("the non-dangerous twin `env -S 'rm build/b.o'` did not run: %v", err)
	}
}

// TestDisguisePolicyCheckMoreWrappers drives `warden policy check` with
// `rm -rf build` and smuggled scripts through su, runuser, flock, watch,
// script, parallel, namespaces, chroot, systemd-run, tracers and other
// shells: each dangerous (asked, refused under never); the privileged ones
// high risk and never known-safe even around `ls`. Each has a harmless twin
// that still runs unasked under on-request.
func TestDisguisePolicyCheckMoreWrappers(t *testing.T) {
	home, ws := disguiseWorkspace(t)
	for _, argv := range [][]string{
		{"flock", "/tmp/l", "rm", "-rf", "build"},
		{"flock", "-n", "/tmp/l", "-c", "rm -rf build"},
		{"watch", "-n", "1", "rm", "-rf", "build"},
		{"watch", "echo", "$(rm -rf build)"},
		{"script", "-qc", "rm -rf build", "/dev/null"},
		{"unshare", "-r", "rm", "-rf", "build"},
		{"nsenter", "-t", "1", "-m", "rm", "-rf", "build"},
		{"chroot", "/", "rm", "-rf", "build"},
		{"parallel", "-j4", "rm -rf {}", ":::", "build"},
		{"systemd-run", "--user", "--wait", "rm", "-rf", "build"},
		{"strace", "-f", "-o", "/dev/null", "rm", "-rf", "build"},
		{"valgrind", "--tool=none", "rm", "-rf", "build"},
		{"bwrap", "--bind", "/", "/", "rm", "-rf", "build"},
		{"fish", "-c", "rm -rf build"},
		{"mksh", "-c", "rm -rf build"},
		{"su", "-", "root", "-c", "rm -rf build"},
		{"runuser", "-u", "root", "--", "rm", "-rf", "build"},
	} {
		for approval, want := range map[string]string{"on-request": "prompt", "never": "forbidden"} {
			p := policyCheck(t, home, ws, approval, argv)
			if p.Decision != want || !p.Dangerous || p.KnownSafe {
				t.Errorf("attack %q under %s: decision %s dangerous %v known-safe %v; want %s, dangerous", argv, approval, p.Decision, p.Dangerous, p.KnownSafe, want)
			}
		}
	}
	for _, argv := range [][]string{
		{"su", "-c", "ls"},
		{"su", "root", "-c", "ls"},
		{"runuser", "-l", "root", "-c", "ls"},
		{"systemd-run", "ls"},
		{"pkexec", "ls"},
	} {
		p := policyCheck(t, home, ws, "on-request", argv)
		if p.Decision != "prompt" || p.KnownSafe || p.Risk.Level != "high" {
			t.Errorf("privileged %q: decision %s known-safe %v risk %s; want a high-risk prompt (%s)", argv, p.Decision, p.KnownSafe, p.Risk.Level, p.Reason)
		}
	}
	for _, c := range []struct {
		argv      []string
		knownSafe bool
	}{
		{[]string{"watch", "-n", "1", "ls", "build"}, true},
		{[]string{"mksh", "-c", "ls build"}, true},
		{[]string{"flock", "/tmp/l", "ls", "build"}, false}, // creates the lock file
		{[]string{"script", "-qc", "ls", "/dev/null"}, false},
		{[]string{"parallel", "ls", ":::", "build"}, false},
		{[]string{"systemd-run", "--user", "ls"}, false},
		{[]string{"strace", "-f", "ls"}, false},
		{[]string{"fish", "-c", "ls"}, false},
	} {
		p := policyCheck(t, home, ws, "on-request", c.argv)
		if p.Decision != "allow" || p.Dangerous || p.KnownSafe != c.knownSafe || p.Risk.Level == "high" {
			t.Errorf("twin %q: decision %s dangerous %v known-safe %v risk %s; want allow, known-safe %v (%s)", c.argv, p.Decision, p.Dangerous, p.KnownSafe, p.Risk.Level, c.knownSafe, p.Reason)
		}
	}
}

// TestDisguiseExecMoreWrappers: `warden exec` refuses `rm -rf build`
// handed to a shell by flock -c or su -c under never, and nothing is
// deleted; the twin `flock LOCK cat f` runs (sandboxed) and prints f.
func TestDisguiseExecMoreWrappers(t *testing.T) {
	home, ws := disguiseWorkspace(t)
	lock := filepath.Join(ws, ".lock")
	for _, argv := range [][]string{
		{"flock", lock, "-c", "rm -rf build"},
		{"script", "-qc", "rm -rf build", "/dev/null"},
		{"su", "-c", "rm -rf build"},
	} {
		args := append([]string{"exec", "--cwd", ws, "--approval", "never", "--"}, argv...)
		_, stderr, code := runWardenEnv(t, home, "", args...)
		if code != 77 {
			t.Errorf("%q: exit %d, want 77 (refused); %s", argv, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(ws, "build", "a.o")); err != nil {
			t.Fatalf("%q deleted build/: %v", argv, err)
		}
	}
	args := []string{"exec", "--cwd", ws, "--approval", "never", "--", "flock", lock, "cat", "f"}
	stdout, stderr, code := runWardenEnv(t, home, "", args...)
	if code != 0 || !strings.Contains(stdout, "line 2") {
		t.Errorf("twin flock LOCK cat f: exit %d, stdout %q; %s", code, stdout, stderr)
	}
}
