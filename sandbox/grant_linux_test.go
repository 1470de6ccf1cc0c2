package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func (w grantWorld) run(t *testing.T, p Policy, script string) Result {
	t.Helper()
	res, err := Run(context.Background(), Command{
		Argv: []string{"/bin/sh", "-c", script}, Cwd: w.ws, Policy: p, Helper: testHelper,
		Env:     EnvPolicy{Set: map[string]string{"HOME": w.home}},
		Timeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatalf("run %q: %v", script, err)
	}
	return res
}

// TestGrantWriteEscapes: a write grant for A lets the command write in A
// (the twin) and nowhere else: not A's parent, a sibling, through a link in
// A pointing out, A/.git, or through A after A's own entry became a link.
func TestGrantWriteEscapes(t *testing.T) {
	w := newGrantWorld(t)
	out := filepath.Dir(w.a)
	target := filepath.Join(w.base, "target") // stands for /etc or ~: writable by the user
	for _, d := range []string{target, filepath.Join(w.a, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(target, filepath.Join(w.a, "link")); err != nil {
		t.Fatal(err)
	}
	g, err := w.pol.ResolveGrant(Grant{Write: []string{w.a}}, w.ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := w.pol.WithGrant(g)
	if err != nil {
		t.Fatal(err)
	}

	// Without the grant the twin's write is blocked: the grant is what
	// makes it land.
	if res := w.run(t, w.pol, `echo x > "`+w.a+`/without"`); res.ExitCode == 0 {
		t.Fatalf("wrote into A without a grant")
	}
	res := w.run(t, p, `echo granted > "`+w.a+`/new" && mkdir -p "`+w.a+`/sub/dir" && echo y > "`+w.a+`/sub/dir/f"`)
	if res.ExitCode != 0 {
		t.Fatalf("granted write failed: %s", res.Output)
	}
	if b, _ := os.ReadFile(filepath.Join(w.a, "new")); string(b) != "granted\n" {
		t.Fatalf("granted write did not land: %q", b)
	}

	attacks := map[string]string{
		"parent":           out + "/parent-file",
		"sibling":          out + "/B/sibling-file",
		"link out":         w.a + "/link/escaped",
		"A/.git":           w.a + "/.git/config",
		"A/.git new":       w.a + "/.git/hooks",
		"workspace parent": w.base + "/ws-parent-file",
	}
	for name, path := range attacks {
		res := w.run(t, p, `mkdir "`+path+`" 2>/dev/null || echo pwned > "`+path+`"`)
		if _, err := os.Lstat(path); err == nil {
			t.Errorf("%s: %s was created under a grant for A (exit %d: %s)", name, path, res.ExitCode, res.Output)
		}
		// A missing entry of an existing .git may be created, but it is
		// moved to the quarantine as the run ends (checked above); every
		// other write must fail outright.
		if res.ExitCode == 0 && !strings.Contains(name, ".git") {
			t.Errorf("%s: the write succeeded", name)
		}
	}
	// During the run, a directory inside A becomes a link out: the link is
	// made (A is writable), the write through it is not.
	res = w.run(t, p, `rm -rf "`+w.a+`/sub" && ln -s "`+target+`" "`+w.a+`/sub" && echo made-link && echo pwned > "`+w.a+`/sub/escaped"`)
	if !strings.Contains(string(res.Stdout), "made-link") || res.ExitCode == 0 {
		t.Errorf("link swapped during the run: exit %d: %s", res.ExitCode, res.Output)
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("the link target was written: %v", ents)
	}

	// A becomes a link to its parent between approval and the next run:
	// the approved grant is refused, not followed.
	if err := os.Rename(w.a, w.a+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, w.a); err != nil {
		t.Fatal(err)
	}
	if _, err := w.pol.WithGrant(g); err == nil {
		t.Fatal("a grant whose directory became a link was applied")
	}
}

// TestGrantWriteDenialDerivesTheGrant: a real blocked write names its
// directory, and the derived grant lets the retry write exactly there.
func TestGrantWriteDenialDerivesTheGrant(t *testing.T) {
	w := newGrantWorld(t)
	script := `touch "` + w.a + `/made"`
	res := w.run(t, w.pol, script)
	if res.ExitCode == 0 || !res.SandboxDenied {
		t.Fatalf("the write was not blocked: %+v", res)
	}
	g, ok := w.pol.DeriveGrant(w.ws, res.Stderr)
	if !ok || !slices.Equal(g.Write, []string{w.a}) || len(g.Read) != 0 {
		t.Fatalf("derived %+v, %v from %q; want write access to %s", g, ok, res.Stderr, w.a)
	}
	p, err := w.pol.WithGrant(g)
	if err != nil {
		t.Fatal(err)
	}
	if res := w.run(t, p, script); res.ExitCode != 0 {
		t.Fatalf("retry with the derived grant failed: %s", res.Output)
	}
	if _, err := os.Stat(filepath.Join(w.a, "made")); err != nil {
		t.Fatal(err)
	}
}

// TestGrantReadExposesOnlyTheNamedSecret: a read grant for one file of
// ~/.ssh makes it readable and leaves its siblings hidden; the twin
// without the grant cannot read it, and the denial derives that grant.
func TestGrantReadExposesOnlyTheNamedSecret(t *testing.T) {
	w := newGrantWorld(t)
	secret := filepath.Join(w.home, ".ssh", "id_deploy")
	res := w.run(t, w.pol, `cat "`+secret+`"`)
	if res.ExitCode == 0 || strings.Contains(string(res.Stdout), "SECRET") {
		t.Fatalf("the secret was readable without a grant: %s", res.Output)
	}
	g, ok := w.pol.DeriveGrant(w.ws, res.Stderr)
	if !ok || !slices.Equal(g.Read, []string{secret}) || len(g.Write) != 0 {
		t.Fatalf("derived %+v, %v from %q; want read access to %s", g, ok, res.Stderr, secret)
	}
	p, err := w.pol.WithGrant(g)
	if err != nil {
		t.Fatal(err)
	}
	res = w.run(t, p, `cat "`+secret+`"`)
	if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "SECRET") {
		t.Fatalf("granted read failed: %s", res.Output)
	}
	for _, attack := range []string{
		`cat "` + w.home + `/.ssh/id_other"`,
		`ls -a "` + w.home + `/.ssh" | grep -q id_other`,
		`cat "` + w.home + `/.ssh/../.ssh/id_other"`,
	} {
		if res := w.run(t, p, attack); res.ExitCode == 0 {
			t.Errorf("%s succeeded under a grant for id_deploy only: %s", attack, res.Output)
		}
	}
}
