package approvals

import (
	"reflect"
	"testing"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/approvals/safe"
)

// TestDisguiseMoreWrappers: a command run through su/runuser-free wrappers
// that hand it to another namespace, root, lock, tracer, unit or shell gets
// the same dangerous flag, known-safe flag, risk and decision as the plain
// command, under every policy.
func TestDisguiseMoreWrappers(t *testing.T) {
	ws, home := riskWorkspace(t, 200)
	plain := []string{"rm", "-rf", "build"}
	disguises := [][]string{
		{"flock", "/tmp/l", "rm", "-rf", "build"},
		{"flock", "-n", "-w", "5", "/tmp/l", "rm", "-rf", "build"},
		{"flock", "-x", "/tmp/l", "-c", "rm -rf build"},
		{"flock", "--timeout=5", "/tmp/l", "--command", "rm -rf build"},
		{"watch", "rm", "-rf", "build"},
		{"watch", "-n", "1", "rm -rf build"},
		{"watch", "-n1", "-t", "-x", "rm", "-rf", "build"},
		{"watch", "--interval", "2", "--exec", "rm", "-rf", "build"},
		{"watch", "echo", "$(rm -rf build)"},
		{"script", "-qc", "rm -rf build", "/dev/null"},
		{"script", "-q", "/dev/null", "-c", "rm -rf build"},
		{"script", "--command=rm -rf build", "log"},
		{"unshare", "-r", "rm", "-rf", "build"},
		{"unshare", "--mount", "--map-root-user", "-w", ".", "rm", "-rf", "build"},
		{"unshare", "-mUf", "--", "rm", "-rf", "build"},
		{"nsenter", "-t", "1", "-m", "-u", "rm", "-rf", "build"},
		{"nsenter", "--target=1", "--mount", "--", "rm", "-rf", "build"},
		{"chroot", "/", "rm", "-rf", "build"},
		{"chroot", "--userspec=1000:1000", "/", "rm", "-rf", "build"},
		{"parallel", "rm", "-rf", ":::", "build"},
		{"parallel", "-j", "4", "rm -rf {}", ":::", "build"},
		{"parallel", "rm", "-rf", ":::", "build"},
		{"parallel", ":::", "rm -rf build"},
		{"systemd-run", "--user", "rm", "-rf", "build"},
		{"systemd-run", "--user", "--scope", "-p", "CPUQuota=10%", "--wait", "rm", "-rf", "build"},
		{"dbus-run-session", "--", "rm", "-rf", "build"},
		{"dbus-run-session", "--config-file=x", "rm", "-rf", "build"},
		{"strace", "-f", "-o", "/dev/null", "rm", "-rf", "build"},
		{"strace", "-e", "trace=file", "-s128", "rm", "-rf", "build"},
		{"ltrace", "-o", "x", "rm", "-rf", "build"},
		{"valgrind", "--tool=none", "-q", "rm", "-rf", "build"},
		{"catchsegv", "rm", "-rf", "build"},
		{"firejail", "--noprofile", "--net=none", "rm", "-rf", "build"},
		{"bwrap", "--bind", "/", "/", "--dev", "/dev", "--unshare-net", "rm", "-rf", "build"},
		{"bwrap", "--overlay", "a", "b", "/", "--setenv", "A", "B", "rm", "-rf", "build"},
		{"ksh", "-c", "rm -rf build"},
		{"mksh", "-ec", "rm -rf build"},
		{"ash", "-c", "rm -rf build"},
		{"busybox", "sh", "-c", "rm -rf build"},
		{"nice", "flock", "/tmp/l", "timeout", "5", "sh", "-c", "rm -rf build"},
		{"bash", "-c", "flock /tmp/l -c 'rm -rf build'"},
		{"bash", "-c", "watch -n 5 'rm -rf build'"},
		// Foreign shells: read as bash, never understood in full.
		{"fish", "-c", "rm -rf build"},
		{"fish", "--command=rm -rf build"},
		{"fish", "-C", "rm -rf build", "-c", "true"},
		{"csh", "-c", "rm -rf build"},
		{"tcsh", "-fc", "rm -rf build"},
	}
	// Arguments that arrive at run time (stdin, files) leave the target
	// unknown, so only the dangerous flag and the decision can match.
	appended := [][]string{
		{"parallel", "-j4", "--will-cite", "rm", "-rf", "::::", "list"},
		{"bash", "-c", "find . -name build | parallel rm -rf"},
		{"parallel", "rm", "-rf", ":::", "build", ":::", "x"},
	}
	for _, ask := range []AskForApproval{OnRequest, Untrusted, Never} {
		want := judge(t, plain, ws, home, ask)
		if !want.dangerous {
			t.Fatalf("the plain %q is not dangerous", plain)
		}
		for _, d := range appended {
			if got := judge(t, d, ws, home, ask); got.dangerous != want.dangerous || got.decision != want.decision || got.knownSafe {
				t.Errorf("%s: %q judged %+v, but the plain %q is %+v", ask, d, got, plain, want)
			}
		}
		for _, d := range disguises {
			if got := judge(t, d, ws, home, ask); got != want {
				t.Errorf("%s: %q judged %+v, but the plain %q is %+v", ask, d, got, plain, want)
			}
		}
	}
}

// TestDisguisePrivilegedWrappers: su, runuser, sudo, pkexec and
// systemd-run (system manager) run the command as root: it stays
// dangerous, is never known-safe, and is high risk even when the command
// only reads.
func TestDisguisePrivilegedWrappers(t *testing.T) {
	ws, home := riskWorkspace(t, 200)
	for _, inner := range [][]string{{"rm", "-rf", "build"}, {"ls", "-la"}} {
		dangerous := inner[0] == "rm"
		script := inner[0] + " " + inner[1] + " " + inner[len(inner)-1]
		if !dangerous {
			script = "ls -la"
		}
		for _, d := range [][]string{
			{"su", "-c", script},
			{"su", "root", "-c", script},
			{"su", "-", "root", "-c", script},
			{"su", "-l", "-s", "/bin/bash", "-c", script, "root"},
			{"su", "--command=" + script},
			{"su", "-pc", script},
			{"runuser", "-l", "root", "-c", script},
			{"runuser", "-u", "root", "--", "sh", "-c", script},
			{"runuser", "--user=root", "sh", "-c", script},
			{"systemd-run", "sh", "-c", script},
			{"systemd-run", "-t", "--wait", "sh", "-c", script},
			{"pkexec", "sh", "-c", script},
			{"sudo", "-u", "bob", "sh", "-c", script},
			{"nice", "su", "-c", script},
		} {
			for _, ask := range []AskForApproval{OnRequest, Never} {
				got := judge(t, d, ws, home, ask)
				wantDecision := rules.Prompt
				if ask == Never {
					// High risk needs a person; under never nobody can be asked.
					wantDecision = rules.Forbidden
				}
				if got.dangerous != dangerous || got.knownSafe || got.risk != risk.High || got.decision != wantDecision {
					t.Errorf("%s %q: %+v, want dangerous %v, not known-safe, high risk, %s", ask, d, got, dangerous, wantDecision)
				}
			}
		}
	}
	// The twin: systemd-run --user runs as the user, not as root.
	if r := risk.Assess(command.Analyze([]string{"systemd-run", "--user", "ls"}), risk.Context{Cwd: ws, Home: home}); r.Level == risk.High {
		t.Errorf("systemd-run --user ls: %s risk: %s", r.Level, r.Summary)
	}
}

// TestDisguiseMoreWrappersHarmlessTwins: the harmless form of each wrapper
// keeps working: not dangerous, and allowed (sandboxed) under on-request.
// Only watch, which just repeats the command, stays known-safe: flock
// creates its lock file, script writes a typescript, tracers write logs or
// inject faults, and the others change the namespace, root or unit.
func TestDisguiseMoreWrappersHarmlessTwins(t *testing.T) {
	ws, home := riskWorkspace(t, 0)
	cases := []struct {
		argv      []string
		knownSafe bool
	}{
		{[]string{"watch", "ls", "-la"}, true},
		{[]string{"watch", "-n", "1", "ls -la"}, true},
		{[]string{"watch", "-x", "ls", "-la"}, true},
		{[]string{"flock", "/tmp/l", "ls", "-la"}, false},
		{[]string{"flock", "/tmp/l", "-c", "ls -la"}, false},
		{[]string{"script", "-qc", "ls -la", "/dev/null"}, false},
		{[]string{"unshare", "-r", "ls", "-la"}, false},
		{[]string{"chroot", "/", "ls", "-la"}, false},
		{[]string{"parallel", "ls", ":::", "a", "b"}, false},
		{[]string{"systemd-run", "--user", "ls", "-la"}, false},
		{[]string{"strace", "-f", "ls", "-la"}, false},
		{[]string{"valgrind", "--tool=none", "ls"}, false},
		{[]string{"bwrap", "--ro-bind", "/", "/", "ls", "-la"}, false},
		{[]string{"ksh", "-c", "ls -la"}, true},
		{[]string{"mksh", "-c", "ls -la"}, true},
		{[]string{"fish", "-c", "ls -la"}, false},
		{[]string{"csh", "-c", "ls -la"}, false},
	}
	for _, c := range cases {
		got := judge(t, c.argv, ws, home, OnRequest)
		if got.dangerous || got.knownSafe != c.knownSafe || got.decision != rules.Allow || got.risk == risk.High {
			t.Errorf("%q: %+v, want not dangerous, known-safe %v, allowed, not high risk", c.argv, got, c.knownSafe)
		}
	}
}

// TestDisguiseUnwrapGrammar pins what each wrapper's option grammar says
// runs: the argv, or a shell with the script it is handed.
func TestDisguiseUnwrapGrammar(t *testing.T) {
	cases := []struct {
		argv, want []string
	}{
		{[]string{"su"}, nil},
		{[]string{"su", "-", "postgres"}, nil},
		{[]string{"su", "-", "postgres", "-c", "psql"}, []string{"sh", "-c", "psql"}},
		{[]string{"su", "-s", "/usr/bin/python3", "-c", "print(1)", "bob"}, []string{"/usr/bin/python3", "-c", "print(1)"}},
		{[]string{"su", "-c", "echo \"$1\"", "root", "x", "y"}, []string{"sh", "-c", "echo \"$1\"", "x", "y"}},
		{[]string{"su", "bob", "run.sh"}, []string{"sh", "run.sh"}},
		{[]string{"runuser", "-u", "bob", "--", "ls", "-la"}, []string{"ls", "-la"}},
		{[]string{"runuser", "-g", "wheel", "-u", "bob", "make"}, []string{"make"}},
		{[]string{"flock", "9"}, nil},
		{[]string{"flock", "-w", "5", "/tmp/l", "-c", "make"}, []string{"sh", "-c", "make"}},
		{[]string{"flock", "-E", "3", "l", "make", "-j"}, []string{"make", "-j"}},
		{[]string{"watch", "-n", "2", "ls", "-la"}, []string{"sh", "-c", "ls -la"}},
		{[]string{"watch", "-d", "-x", "ls", "-la"}, []string{"ls", "-la"}},
		{[]string{"watch", "-xn", "2", "ls"}, []string{"ls"}},
		{[]string{"script", "-q", "/dev/null"}, nil},
		{[]string{"script", "out", "-a", "-c", "make"}, []string{"sh", "-c", "make"}},
		{[]string{"unshare", "--map-root-user", "--mount", "ls"}, []string{"ls"}},
		{[]string{"unshare", "-R", "/srv", "--propagation", "private", "ls"}, []string{"ls"}},
		{[]string{"nsenter", "-t", "1", "-m", "--", "ls"}, []string{"ls"}},
		{[]string{"chroot", "/srv", "ls"}, []string{"ls"}},
		{[]string{"chroot", "/srv"}, nil},
		{[]string{"systemd-run", "--user", "--wait", "-p", "X=1", "ls"}, []string{"ls"}},
		{[]string{"systemd-run", "--uid=bob", "ls"}, []string{"ls"}},
		{[]string{"systemd-run", "-S"}, nil},
		{[]string{"strace", "-o", "out", "-e", "trace=open", "ls"}, []string{"ls"}},
		{[]string{"valgrind", "--leak-check=full", "./a.out"}, []string{"./a.out"}},
		{[]string{"bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "ls"}, []string{"ls"}},
		{[]string{"parallel", "-j", "4", "gzip", ":::", "a", "b c"}, []string{"sh", "-c", "gzip a\ngzip 'b c'"}},
		{[]string{"parallel", "mv {} {}.bak", ":::", "a"}, []string{"sh", "-c", "mv a a.bak"}},
		{[]string{"parallel", "gzip", "::::", "list"}, []string{"sh", "-c", "gzip"}},
		{[]string{"parallel", ":::", "ls", "rm -rf x"}, []string{"sh", "-c", "ls\nrm -rf x"}},
	}
	for _, c := range cases {
		if got, _ := command.Unwrap(c.argv); !reflect.DeepEqual(got, c.want) && len(got)+len(c.want) > 0 {
			t.Errorf("Unwrap(%q) = %q, want %q", c.argv, got, c.want)
		}
	}
	// Options a wrapper does not have leave Warden unsure: not known-safe.
	for _, argv := range [][]string{
		{"flock", "--bogus", "l", "ls"},
		{"su", "--bogus", "-c", "ls"},
		{"unshare", "--bogus", "ls"},
		{"parallel", ":::: list"},
		{"bwrap", "--args", "3", "ls"},
	} {
		if u := command.UnwrapFull(argv); !u.Unsure && !u.Transparent {
			continue
		} else if u.Transparent {
			t.Errorf("%q: transparent", argv)
		}
		if safe.KnownSafe(command.Analyze(argv)) {
			t.Errorf("%q: known-safe", argv)
		}
	}
}
