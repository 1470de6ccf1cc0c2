package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// processesWith lists host processes whose command line contains marker.
func processesWith(marker string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// orphanScript leaves a setsid'd child, a double-forked grandchild and a
// plain background job behind, then blocks.
func orphanScript(tag string) string {
	return fmt.Sprintf(`setsid sleep 301.%[1]s & (sleep 302.%[1]s &) ; sleep 303.%[1]s & sleep 304.%[1]s`, tag)
}

// orphanTag marks one test's sleeps, unique among concurrent test
// processes (the pid) and within this one (n and the clock). It ends up
// after the decimal point of a sleep's argument, so it is all digits.
func orphanTag(n int) string {
	return fmt.Sprintf("%d%05d%d", os.Getpid(), time.Now().UnixNano()%100000, n)
}

// orphansOf lists the live processes carrying tag.
func orphansOf(tag string) []string {
	var ours []string
	for _, l := range processesWith("30") {
		if strings.Contains(l, "."+tag) {
			ours = append(ours, l)
		}
	}
	return ours
}

func checkNoOrphans(t *testing.T, tag string) {
	t.Helper()
	// The kernel finishes tearing the namespace down asynchronously.
	deadline := time.Now().Add(20 * time.Second)
	for {
		ours := orphansOf(tag)
		if len(ours) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphans survived: %v", ours)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestTimeoutKillsOrphans(t *testing.T) {
	tag := orphanTag(0)
	res := run(t, t.TempDir(), Command{Argv: sh(orphanScript(tag)), Timeout: 500 * time.Millisecond})
	if !res.TimedOut {
		t.Fatalf("not timed out: %+v", res)
	}
	checkNoOrphans(t, tag)
	// The twin: a background job that finishes on its own is waited for.
	res = run(t, t.TempDir(), Command{Argv: sh(`sleep 0.1 & wait; echo done`)})
	if strings.TrimSpace(string(res.Stdout)) != "done" || res.ExitCode != 0 {
		t.Errorf("background job: %+v", res)
	}
}

func TestExitKillsBackgroundProcesses(t *testing.T) {
	tag := orphanTag(1)
	res := run(t, t.TempDir(), Command{Argv: sh(fmt.Sprintf(`setsid sleep 305.%[1]s & (sleep 306.%[1]s &); exit 0`, tag))})
	if res.ExitCode != 0 {
		t.Fatalf("%+v", res)
	}
	checkNoOrphans(t, tag)
}

func TestCancelKillsOrphans(t *testing.T) {
	tag := orphanTag(2)
	ctx, cancel := context.WithCancel(context.Background())
	p, err := Start(ctx, Command{Argv: sh(orphanScript(tag)), Cwd: t.TempDir(), Helper: testHelper})
	if err != nil {
		t.Fatal(err)
	}
	// Cancel once all four sleeps run, so there are orphans to kill.
	sleeps := func() (n int) {
		for _, l := range orphansOf(tag) {
			if strings.Contains(l, ": sleep 30") {
				n++
			}
		}
		return n
	}
	for deadline := time.Now().Add(20 * time.Second); sleeps() < 4; {
		if time.Now().After(deadline) {
			t.Fatalf("the script's sleeps never all started: %v", orphansOf(tag))
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if res := p.Wait(); !res.Canceled {
		t.Fatalf("%+v", res)
	}
	checkNoOrphans(t, tag)
}

// The namespace-less fallback: Landlock + seccomp only. It must say what it
// does not enforce, still stop the basic escapes, and still reap orphans.
func TestFallbackWithoutNamespaces(t *testing.T) {
	noNamespacesForTest = true
	defer func() { noNamespacesForTest = false }()
	shared := startEscapeFixtures(t)
	e := &escEnv{ws: t.TempDir(), out: t.TempDir(), shared: shared}
	os.WriteFile(filepath.Join(e.out, "file"), []byte("outside\n"), 0o644)
	// A home with no credential stores: nothing for the read policy to
	// hide (TestReadPolicyWithoutNamespaces covers hiding them).
	emptyHome := t.TempDir()
	noSecrets := func(p *Policy) { p.Reads.Home = emptyHome }

	res := escapeRun(t, e, `echo hi`, noSecrets, Limits{})
	if res.Sandbox != "linux-landlock" || len(res.NotEnforced) == 0 || res.ExitCode != 0 {
		t.Fatalf("fallback result: %+v", res)
	}
	if !strings.Contains(strings.Join(res.NotEnforced, "\n"), "protected paths") {
		t.Errorf("gaps do not mention protected paths: %v", res.NotEnforced)
	}
	for _, c := range []struct{ attack, twin string }{
		{`echo x > "$OUT/new"`, `echo x > "$WS/new"`},
		{`"$PROBE" dial-tcp "$TCP"`, `"$PROBE" socketpair`},
		{`"$PROBE" dial-mptcp "$TCP"`, `"$PROBE" socketpair`},
		{`"$PROBE" send-udp "$UDP"`, `"$PROBE" socketpair`},
		{`"$PROBE" dial-unix "$ABSTRACT"`, `"$PROBE" unix-roundtrip "@warden-fallback-$NONCE"`},
		{`"$PROBE" kill "$VICTIM"`, `sleep 30 & kill $!`},
		{`"$PROBE" io_uring`, `cat /dev/null`},
		{`"$PROBE" ptrace "$VICTIM"`, `"$PROBE" caps`},
		{`cat "/proc/$VICTIM/environ"`, `cat /proc/self/environ > /dev/null`},
	} {
		if r := escapeRun(t, e, c.attack, noSecrets, Limits{}); r.ExitCode == 0 {
			t.Errorf("fallback: attack succeeded: %s\n%s", c.attack, r.Output)
		}
		if r := escapeRun(t, e, c.twin, noSecrets, Limits{}); r.ExitCode != 0 {
			t.Errorf("fallback: twin failed: %s\n%s", c.twin, r.Output)
		}
	}

	tag := orphanTag(3)
	empty := Policy{Reads: ReadPolicy{Home: emptyHome}}
	res = run(t, t.TempDir(), Command{Argv: sh(orphanScript(tag)), Policy: empty, Timeout: 500 * time.Millisecond})
	if !res.TimedOut {
		t.Fatalf("not timed out: %+v", res)
	}
	checkNoOrphans(t, tag)
	tag = orphanTag(4)
	run(t, t.TempDir(), Command{Argv: sh(fmt.Sprintf(`setsid sleep 305.%[1]s & (sleep 306.%[1]s &); exit 0`, tag)), Policy: empty})
	checkNoOrphans(t, tag)
}

// TestAskRunsOfflineFollowsTheFallback: AskRunsOffline is true exactly when
// runs fall back without namespaces (what approvals' dialog line says).
func TestAskRunsOfflineFollowsTheFallback(t *testing.T) {
	if AskRunsOffline() {
		t.Skip("this kernel refuses the namespaces: the fallback is on for every run")
	}
	noNamespacesForTest = true
	defer func() { noNamespacesForTest = false }()
	if !AskRunsOffline() {
		t.Error("AskRunsOffline is false in the namespace-less fallback")
	}
	noNamespacesForTest = false
	if AskRunsOffline() {
		t.Error("AskRunsOffline is true where namespaces work")
	}
}
