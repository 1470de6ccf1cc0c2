package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// grantWorld is a workspace, a home with a credential store, and
// directories outside both.
type grantWorld struct {
	base, ws, home, a string
	pol               Policy
}

func newGrantWorld(t *testing.T) grantWorld {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := grantWorld{base: base, ws: filepath.Join(base, "ws"), home: filepath.Join(base, "home"), a: filepath.Join(base, "out", "A")}
	for _, d := range []string{w.ws, w.a, filepath.Join(w.home, ".ssh"), filepath.Join(w.home, ".cache", "pip"), filepath.Join(w.ws, ".git", "hooks"), filepath.Join(base, "out", "B")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(w.home, ".ssh", "id_deploy"), filepath.Join(w.home, ".ssh", "id_other"), filepath.Join(w.a, "file")} {
		if err := os.WriteFile(f, []byte("SECRET\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w.pol = Policy{Mode: WorkspaceWrite, ExcludeTmpdir: true, ExcludeSlashTmp: true, Workspace: []string{w.ws},
		ProtectedPaths: []string{filepath.Join(w.home, ".config", "warden")}, Reads: ReadPolicy{Home: w.home}}
	return w
}

// TestResolveGrantRefuses: what a grant must never name is refused, with
// the path in the message; each has a twin that is accepted.
func TestResolveGrantRefuses(t *testing.T) {
	w := newGrantWorld(t)
	if err := os.MkdirAll(filepath.Join(w.home, ".config", "warden", "rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	attacks := []struct {
		name string
		g    Grant
		want string
	}{
		{"root", Grant{Write: []string{"/"}}, "danger-full-access"},
		{"a file", Grant{Write: []string{filepath.Join(w.a, "file")}}, "not a directory"},
		{"the workspace .git", Grant{Write: []string{filepath.Join(w.ws, ".git")}}, "protected .git"},
		{"inside .git", Grant{Write: []string{".git/hooks"}}, "protected .git"},
		{"dot-dot into .git", Grant{Write: []string{"out/../ws/.git/hooks"}}, "protected .git"},
		{"warden's own config", Grant{Write: []string{filepath.Join(w.home, ".config", "warden", "rules")}}, "stays read-only"},
		{"a hidden store", Grant{Write: []string{"~/.ssh"}}, "read policy hides"},
		{"missing", Grant{Write: []string{filepath.Join(w.base, "nope")}}, "does not exist"},
		{"missing read", Grant{Read: []string{"~/.ssh/nope"}}, "does not exist"},
		{"empty", Grant{Read: []string{" "}}, "empty path"},
		{"control characters", Grant{Read: []string{"/tmp\n/etc"}}, "control characters"},
		{"a URL as host", Grant{Network: []string{"https://pypi.org/simple"}}, "not a URL"},
	}
	for _, tc := range attacks {
		t.Run(tc.name, func(t *testing.T) {
			cwd := w.ws
			if tc.name == "dot-dot into .git" {
				cwd = w.base
			}
			_, err := w.pol.ResolveGrant(tc.g, cwd)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ResolveGrant(%+v) = %v, want an error with %q", tc.g, err, tc.want)
			}
		})
	}
	// Twins: a directory outside, a relative one, ~/, a link resolved to its
	// target, a read inside the hidden store, a host.
	if err := os.Symlink(w.a, filepath.Join(w.ws, "link-to-A")); err != nil {
		t.Fatal(err)
	}
	g, err := w.pol.ResolveGrant(Grant{
		Write:   []string{w.a, "link-to-A", "~/.cache/pip", "../out/B"},
		Read:    []string{"~/.ssh/id_deploy", "~/.ssh/id_deploy"},
		Network: []string{"PyPI.org:443"},
	}, w.ws)
	if err != nil {
		t.Fatal(err)
	}
	want := Grant{
		Write:   []string{filepath.Join(w.home, ".cache", "pip"), w.a, filepath.Join(w.base, "out", "B")},
		Read:    []string{filepath.Join(w.home, ".ssh", "id_deploy")},
		Network: []string{"pypi.org:443"},
	}
	slices.Sort(want.Write)
	if !slices.Equal(g.Write, want.Write) || !slices.Equal(g.Read, want.Read) || !slices.Equal(g.Network, want.Network) {
		t.Fatalf("resolved %+v, want %+v", g, want)
	}
	if d := strings.Join(g.Describe(w.home), "; "); !strings.Contains(d, "write access to ~/.cache/pip") || !strings.Contains(d, "read access to ~/.ssh/id_deploy") || !strings.Contains(d, "network to pypi.org:443") {
		t.Errorf("Describe = %s", d)
	}
}

// TestWithGrantWidensExactly: the write grant becomes a writable root, the
// read grant of a hidden file an exception for exactly it; a network grant
// is refused for now; a path swapped for a link since approval is refused.
func TestWithGrantWidensExactly(t *testing.T) {
	w := newGrantWorld(t)
	g, err := w.pol.ResolveGrant(Grant{Write: []string{w.a}, Read: []string{"~/.ssh/id_deploy", w.ws}}, w.ws)
	if err != nil {
		t.Fatal(err)
	}
	p, err := w.pol.WithGrant(g)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.WritableRoots, []string{w.a}) {
		t.Errorf("writable roots %v, want only %s", p.WritableRoots, w.a)
	}
	if !slices.Equal(p.Reads.Allow, []string{filepath.Join(w.home, ".ssh", "id_deploy")}) {
		t.Errorf("read exceptions %v, want only the granted secret (the workspace is not hidden)", p.Reads.Allow)
	}
	if len(w.pol.WritableRoots) != 0 || len(w.pol.Reads.Allow) != 0 {
		t.Error("WithGrant changed the policy it was called on")
	}
	// A read grant of the home directory does not unhide what is in it.
	g, err = w.pol.ResolveGrant(Grant{Read: []string{"~"}}, w.ws)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = w.pol.WithGrant(g); err != nil || len(p.Reads.Allow) != 0 {
		t.Errorf("a read grant for ~ added exceptions %v (%v): it would expose ~/.ssh", p.Reads.Allow, err)
	}
	if _, err := w.pol.WithGrant(Grant{Network: []string{"pypi.org"}}); !errors.Is(err, ErrNetworkGrant) {
		t.Errorf("network grant with the network off: %v, want ErrNetworkGrant", err)
	}
	ask := w.pol
	ask.Network = NetworkAsk
	if p, err := ask.WithGrant(Grant{Network: []string{"pypi.org"}}); err != nil || p.NetworkMode() != NetworkAsk || len(p.WritableRoots) != len(ask.WritableRoots) {
		t.Errorf("network grant under ask: %v (it must widen nothing but the proxy's hosts)", err)
	}
	// Approved for A; A becomes a link to the workspace's parent.
	g, _ = w.pol.ResolveGrant(Grant{Write: []string{w.a}}, "")
	if err := os.Rename(w.a, w.a+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.base, w.a); err != nil {
		t.Fatal(err)
	}
	if p, err := w.pol.WithGrant(g); err == nil {
		t.Fatalf("a grant whose directory became a link was applied: roots %v", p.WritableRoots)
	}
	// Read-only: only the granted directory becomes writable.
	ro := w.pol
	ro.Mode = ReadOnly
	os.Remove(w.a)
	os.Rename(w.a+".old", w.a)
	p, err = ro.WithGrant(g)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := p.Roots()
	if err != nil || len(roots) != 1 || roots[0].Path != w.a {
		t.Errorf("read-only + write grant: roots %+v (%v), want only %s", roots, err, w.a)
	}
}

// TestGrantCovers: a subset or a path below is covered; more, or a parent,
// is not.
func TestGrantCovers(t *testing.T) {
	g := Grant{Write: []string{"/a", "/c"}, Read: []string{"/r"}}
	for _, h := range []Grant{{}, {Write: []string{"/a"}}, {Write: []string{"/a/b"}}, {Read: []string{"/a/x", "/r"}}} {
		if !g.Covers(h) {
			t.Errorf("%+v should cover %+v", g, h)
		}
	}
	for _, h := range []Grant{{Write: []string{"/"}}, {Write: []string{"/ab"}}, {Write: []string{"/r"}}, {Read: []string{"/s"}}, {Network: []string{"x"}}} {
		if g.Covers(h) {
			t.Errorf("%+v must not cover %+v", g, h)
		}
	}
}

// TestDeriveGrant: the denial texts of common tools give the narrowest
// grant; output naming a protected or already writable path, or a hidden
// one as a write, gives none.
func TestDeriveGrant(t *testing.T) {
	w := newGrantWorld(t)
	secret := filepath.Join(w.home, ".ssh", "id_deploy")
	cases := []struct {
		out  string
		want Grant
	}{
		{"touch: cannot touch '" + w.a + "/new': Read-only file system", Grant{Write: []string{w.a}}},
		{"mkdir: cannot create directory ‘" + w.a + "/x/y’: Read-only file system", Grant{Write: []string{w.a}}},
		{"sh: 1: cannot create " + w.a + "/f: Permission denied", Grant{Write: []string{w.a}}},
		{"OSError: [Errno 30] Read-only file system: '" + w.home + "/.cache/pip/http'", Grant{Write: []string{filepath.Join(w.home, ".cache", "pip")}}},
		{"cat: " + secret + ": Permission denied", Grant{Read: []string{secret}}},
		{"some noise\nrm: cannot remove '" + w.ws + "/.git/hooks/pre-commit': Read-only file system", Grant{}},
		{"touch: cannot touch '" + w.ws + "/f': Permission denied", Grant{}},
		{"touch: cannot touch '" + secret + "': Read-only file system", Grant{}},
		{"error: something else failed", Grant{}},
		// A refused connection or device names no directory to grant.
		{"bash: connect: Permission denied\nbash: /dev/tcp/1.1.1.1/80: Permission denied", Grant{}},
		{"bash: /dev/udp/10.0.0.1/53: Operation not permitted", Grant{}},
		{"dd: failed to open '/dev/sda': Permission denied", Grant{}},
		{"sh: 1: cannot create /dev/new-device: Read-only file system", Grant{}},
	}
	for _, tc := range cases {
		g, ok := w.pol.DeriveGrant(w.ws, []byte(tc.out))
		if ok != !tc.want.IsZero() || !slices.Equal(g.Write, tc.want.Write) || !slices.Equal(g.Read, tc.want.Read) {
			t.Errorf("DeriveGrant(%q) = %+v, %v; want %+v", tc.out, g, ok, tc.want)
		}
	}
}
