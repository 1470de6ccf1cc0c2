package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/pathmemo"
)

func TestNewPolicyParsesConfigStrings(t *testing.T) {
	p, err := NewPolicy("read-only", "true", nil)
	if err != nil || p.Mode != ReadOnly || p.Network != NetworkOn {
		t.Fatalf("read-only: %+v %v", p, err)
	}
	p, err = NewPolicy("", "false", []string{"/srv/data"})
	if err != nil || p.Mode != WorkspaceWrite || p.WritableRoots[0] != "/srv/data" {
		t.Fatalf("default: %+v %v", p, err)
	}
	if _, err := NewPolicy("workspace", "", nil); err == nil || !strings.Contains(err.Error(), "want read-only") {
		t.Fatalf("bad mode accepted: %v", err)
	}
	if _, err := NewPolicy("workspace-write", "off", []string{"rel/dir"}); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Fatalf("relative root accepted: %v", err)
	}
	for _, m := range []Mode{DangerFullAccess, External} {
		if p, _ := NewPolicy(string(m), "", nil); p.Sandboxed() {
			t.Errorf("%s should not be sandboxed", m)
		}
	}
}

func TestRootsIncludeWorkspaceExtrasTmpAndProtectedPaths(t *testing.T) {
	ws, extra, tmpdir := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmpdir)
	p := Policy{Mode: WorkspaceWrite, Workspace: []string{ws}, WritableRoots: []string{extra}}
	roots, err := p.Roots()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, r := range roots {
		paths = append(paths, r.Path)
		if !slices.Contains(r.Protected, filepath.Join(r.Path, ".git")) || !slices.Contains(r.Protected, filepath.Join(r.Path, ".vscode")) {
			t.Errorf("root %s protects %v", r.Path, r.Protected)
		}
		// mise's config is protected where the user works; a shared
		// temporary directory's top keeps only what git, agents and
		// editors obey there.
		worked := r.Path == resolved(t, ws) || r.Path == resolved(t, extra)
		if got := slices.Contains(r.Protected, filepath.Join(r.Path, "mise.toml")); got != worked {
			t.Errorf("root %s (worked in: %v) protects mise.toml: %v", r.Path, worked, got)
		}
	}
	for _, want := range []string{ws, extra, tmpdir, "/tmp"} {
		rw, _ := filepath.EvalSymlinks(want)
		if !slices.Contains(paths, rw) {
			t.Errorf("roots %v lack %s", paths, rw)
		}
	}
	p.ExcludeTmpdir, p.ExcludeSlashTmp = true, true
	roots, _ = p.Roots()
	if len(roots) != 2 {
		t.Errorf("with exclusions want the workspace and extra, got %v", roots)
	}
	if _, err := (Policy{Mode: WorkspaceWrite, WritableRoots: []string{filepath.Join(ws, "missing")}}).Roots(); err == nil {
		t.Error("a missing writable root should be an error")
	}
	if _, err := (Policy{Mode: WorkspaceWrite, Workspace: []string{filepath.Join(ws, "missing")}}).Roots(); err == nil {
		t.Error("a missing workspace root should be an error")
	}
	if err := (Policy{Workspace: []string{"relative"}}).Validate(); err == nil {
		t.Error("a relative workspace root should be invalid")
	}
	if roots, _ := (Policy{Mode: ReadOnly, Workspace: []string{ws}}).Roots(); len(roots) != 0 {
		t.Errorf("read-only has roots %v", roots)
	}
}

func TestGitdirFileTargetIsProtected(t *testing.T) {
	ws, real := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: "+real+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	roots, err := (Policy{Workspace: []string{ws}, ExcludeSlashTmp: true, ExcludeTmpdir: true}).Roots()
	if err != nil {
		t.Fatal(err)
	}
	realResolved, _ := filepath.EvalSymlinks(real)
	if !slices.Contains(roots[0].Protected, realResolved) {
		t.Errorf("gitdir target %s not protected: %v", realResolved, roots[0].Protected)
	}
}

func TestSummaryIsOneLine(t *testing.T) {
	ws := t.TempDir()
	for _, p := range []Policy{{Mode: ReadOnly}, {Mode: WorkspaceWrite, Network: NetworkOn}, {Mode: DangerFullAccess}, {Mode: External}} {
		p.Workspace = []string{ws}
		s := p.Summary()
		if strings.Contains(s, "\n") || !strings.HasPrefix(s, string(p.Mode)) {
			t.Errorf("summary %q", s)
		}
	}
	for mode, want := range map[NetworkMode]string{"": "network off", NetworkOff: "network off", NetworkOn: "network on", NetworkAsk: "network: through Warden's proxy, asked per host"} {
		for _, m := range []Mode{ReadOnly, WorkspaceWrite} {
			if s := (Policy{Mode: m, Network: mode, Workspace: []string{ws}}).Summary(); !strings.HasSuffix(s, ", "+want) {
				t.Errorf("%s network %q: summary %q, want it to end %q", m, mode, s, want)
			}
		}
	}
	if s := (Policy{Mode: DangerFullAccess, Network: NetworkOff}).Summary(); !strings.Contains(s, "network on") {
		t.Errorf("danger-full-access summary %q: it has the network whatever Network says", s)
	}
	wsReal, _ := filepath.EvalSymlinks(ws)
	if s := (Policy{Workspace: []string{ws}}).Summary(); !strings.Contains(s, "network off") || !strings.Contains(s, ".git") || !strings.Contains(s, wsReal) {
		t.Errorf("workspace-write summary %q", s)
	}
}

// The run's memo, which Roots resolves with, names every path as the
// unmemoised pathmemo.ResolveExisting does: links followed (to directories, files,
// and dangling), missing parts kept.
func TestMemoResolutionMatchesResolveExisting(t *testing.T) {
	d := t.TempDir()
	for _, dir := range []string{"a/b", "real/c"} {
		if err := os.MkdirAll(filepath.Join(d, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"link": "real", "rel": "a/../real/c", "flink": "file", "dangling": "nowhere/x", "loop": "loop"} {
		if err := os.Symlink(target, filepath.Join(d, link)); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{"", "a", "a/b", "a/b/missing/deeper", "link", "link/c", "link/c/new", "rel/x", "flink", "flink/x", "dangling", "dangling/y", "loop/z", "missing/a/b"}
	res := pathmemo.New()
	for _, p := range paths {
		p = filepath.Join(d, p)
		if got, want := res.ResolveExisting(p), pathmemo.ResolveExisting(p); got != want {
			t.Errorf("resolve(%s) = %s, pathmemo.ResolveExisting = %s", p, got, want)
		}
	}
	if got := res.ResolveExisting(filepath.Join(d, "link", "c")); got == filepath.Join(d, "link", "c") {
		t.Errorf("a link was not followed: %s", got)
	}
}

func TestNetworkModesParseAndDefault(t *testing.T) {
	for in, want := range map[string]NetworkMode{"off": NetworkOff, "false": NetworkOff, "ask": NetworkAsk, "on": NetworkOn, "TRUE": NetworkOn, "": ""} {
		if got, err := ParseNetworkMode(in); err != nil || got != want {
			t.Errorf("ParseNetworkMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseNetworkMode("proxy"); err == nil || !strings.Contains(err.Error(), "want off, ask or on") {
		t.Errorf("ParseNetworkMode(proxy): %v", err)
	}
	if err := (Policy{Network: "true"}).Validate(); err == nil {
		t.Error("a policy's network must be a mode, not an alias")
	}
	for mode, want := range map[string]NetworkMode{"read-only": NetworkOff, "workspace-write": DefaultWorkspaceNetwork, "danger-full-access": NetworkOn} {
		if p, err := NewPolicy(mode, "", nil); err != nil || p.Network != want {
			t.Errorf("NewPolicy(%s) network %q, %v; want %q", mode, p.Network, err, want)
		}
	}
}

func resolved(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
