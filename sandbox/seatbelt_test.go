package sandbox

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/protect"
	"github.com/wardenhq/warden/sandbox/seatbelt"
)

var updateGolden = flag.Bool("update", false, "rewrite the Seatbelt golden files")

// Seatbelt cannot run here: the generated profiles are checked against
// reviewed golden files instead.
func TestSeatbeltProfilesMatchGoldenFiles(t *testing.T) {
	ws := "/Users/dev/project"
	roots := func(paths ...string) []protect.Root {
		var out []protect.Root
		for _, p := range paths {
			out = append(out, protect.Root{Path: p, Protected: protectedFor(p)})
		}
		return out
	}
	// A home that does not exist here, so nothing resolves differently.
	home := ReadPolicy{Home: "/Users/dev"}
	cases := []struct {
		name   string
		policy Policy
		roots  []protect.Root
	}{
		{"workspace-write-no-network", Policy{Mode: WorkspaceWrite, Reads: home}, roots(ws, "/private/tmp")},
		{"workspace-write-network", Policy{Mode: WorkspaceWrite, Network: NetworkOn, Reads: home}, roots(ws)},
		{"workspace-write-network-ask", Policy{Mode: WorkspaceWrite, Network: NetworkAsk, Reads: home}, roots(ws)},
		{"read-only", Policy{Mode: ReadOnly, Reads: home}, nil},
		{"read-full", Policy{Mode: WorkspaceWrite, Reads: ReadPolicy{Access: ReadFull, Home: "/Users/dev"}}, roots(ws)},
		{"read-deny-allow", Policy{Mode: WorkspaceWrite, Reads: ReadPolicy{Home: "/Users/dev",
			Deny: []string{"/Users/dev/project/.env.production"}, Allow: []string{"/Users/dev/.aws/config", "/Users/dev/.npmrc"}}}, roots(ws)},
		{"read-restricted", Policy{Mode: WorkspaceWrite, Workspace: []string{ws}, Reads: ReadPolicy{Access: ReadRestricted, Home: "/Users/dev",
			ReadableRoots: []string{"/Users/dev/shared-docs"}}}, roots(ws, "/private/tmp")},
		{"gitdir-target", Policy{Mode: WorkspaceWrite, Reads: home}, []protect.Root{{Path: ws, Protected: append(protectedFor(ws), "/Users/dev/main/.git/worktrees/project")}}},
		{"home-workspace", Policy{Mode: WorkspaceWrite, Reads: home}, []protect.Root{{Path: "/Users/dev",
			Protected: append(protectedFor("/Users/dev"), "/Users/dev/.config/warden", "/Users/dev/.local/state/warden"),
			Found:     []string{"/Users/dev/src/vendored/.git"}}}},
		{"git-split", Policy{Mode: WorkspaceWrite, Reads: home}, []protect.Root{gitSplitRoot(ws)}},
		{"home-nested-roots", Policy{Mode: WorkspaceWrite, Reads: home, HomeWritable: []string{".cache/foo"}}, []protect.Root{
			{Path: "/Users/dev", Protected: append(protectedFor("/Users/dev"), "/Users/dev/.cache", "/Users/dev/.config", "/Users/dev/.config/warden", "/Users/dev/.zshrc")},
			{Path: "/Users/dev/.cache/foo", Protected: protectedFor("/Users/dev/.cache/foo")},
			{Path: "/Users/dev/.cache/warden/sandbox/dev-1/data", Shared: true, Protected: []string{"/Users/dev/.cache/warden/sandbox/dev-1/data/.git"}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			profile, params := SeatbeltProfile(c.policy, c.roots, 54321)
			got := profile + "\n;; parameters\n" + strings.Join(params, "\n") + "\n"
			path := filepath.Join("testdata", "seatbelt", c.name+".sbpl")
			if *updateGolden {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run Seatbelt -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("profile differs from %s:\n%s", path, got)
			}
			checkSeatbeltShape(t, profile, params, c.policy, c.roots)
		})
	}
}

// checkSeatbeltShape checks the properties the golden files encode, so a
// careless -update cannot bless a broken profile.
func checkSeatbeltShape(t *testing.T, profile string, params []string, p Policy, roots []protect.Root) {
	t.Helper()
	if !strings.HasPrefix(profile, "(version 1)\n(deny default)") {
		t.Error("profile must start by denying everything")
	}
	if strings.Count(profile, "(") != strings.Count(profile, ")") {
		t.Error("unbalanced parentheses")
	}
	if (p.network() == NetworkOn) != strings.Contains(profile, "(allow network-outbound)") {
		t.Errorf("network %v but profile network rules disagree", p.Network)
	}
	// Under ask, the only outbound rule names the proxy's loopback port.
	outbound := regexp.MustCompile(`\(allow network-outbound[^\n]*`).FindAllString(profile, -1)
	if p.network() == NetworkAsk && (len(outbound) != 1 || outbound[0] != `(allow network-outbound (remote tcp "localhost:54321"))`) {
		t.Errorf("network ask: outbound rules %q, want only the proxy's port", outbound)
	}
	if p.network() == NetworkOff && (len(outbound) != 0 || strings.Contains(profile, "AF_INET")) {
		t.Errorf("network off: outbound rules %q or inet sockets allowed", outbound)
	}
	if len(roots) == 0 && strings.Contains(profile, "(allow file-write*\n") {
		t.Error("read-only profile allows writes")
	}
	for _, r := range roots {
		for _, prot := range append(slices.Clone(r.Protected), r.Found...) {
			found := false
			for _, param := range params {
				if strings.HasSuffix(param, "="+prot) && strings.Contains(param, "_PROTECTED_") {
					found = true
				}
			}
			if !found {
				t.Errorf("protected path %s not excluded", prot)
			}
		}
	}
	checkSeatbeltFolds(t, profile, params, p, roots)
	checkSeatbeltReads(t, profile, params, p)
	checkSeatbeltGit(t, profile, params, roots)
	// Every parameter the profile uses is defined, and vice versa.
	for _, param := range params {
		key := strings.TrimPrefix(strings.SplitN(param, "=", 2)[0], "-D")
		if !strings.Contains(profile, `(param "`+key+`")`) {
			t.Errorf("parameter %s unused", key)
		}
	}
}

// checkSeatbeltFolds: each protected path, found repository and read deny
// is also denied in any letter case (foldRegex), the writes' after every
// write allow.
func checkSeatbeltFolds(t *testing.T, profile string, params []string, p Policy, roots []protect.Root) {
	t.Helper()
	at := func(re string) int { // the last deny of re
		last := -1
		for _, param := range params {
			key, v, _ := strings.Cut(strings.TrimPrefix(param, "-D"), "=")
			if strings.HasPrefix(key, "REGEX_") && v == re {
				last = max(last, strings.Index(profile, `(regex (param "`+key+`"))`))
			}
		}
		return last
	}
	// A root inside a held path is reopened by a later allow of its own
	// subtree (the evaluator tests check which paths that opens): what lies
	// inside another root is denied after the last allow, the rest after
	// the roots' first.
	lastAllow := strings.LastIndex(profile, "(allow file-write*")
	firstAllow := strings.Index(profile, "(allow file-write*")
	for _, r := range seatbelt.NewCaseLookup().OnDiskRoots(roots) {
		for _, prot := range append(slices.Clone(r.Protected), r.Found...) {
			bound := firstAllow
			if slices.ContainsFunc(roots, func(n protect.Root) bool { return n.Path != r.Path && pathutil.Within(n.Path, prot) }) {
				bound = lastAllow
			}
			if i := at(seatbelt.FoldRegex(prot, true)); i < bound {
				t.Errorf("protected %s: no any-case deny after the write allows it limits (%d < %d)", prot, i, bound)
			}
		}
	}
	if p.Reads.Access == ReadFull {
		return
	}
	for _, rel := range BuiltinReadDeny {
		if !strings.Contains(rel, "*") && at(seatbelt.FoldRegex(filepath.Join(p.Reads.Home, rel), true)) < 0 {
			t.Errorf("~/%s: no any-case read deny", rel)
		}
	}
}

// checkSeatbeltReads: every credential store is denied after the blanket
// read allow (later rules win), and each read_allow comes after the denies.
func checkSeatbeltReads(t *testing.T, profile string, params []string, p Policy) {
	t.Helper()
	denyAt := strings.Index(profile, "(deny file-read*")
	if p.Reads.Access == ReadFull {
		if denyAt >= 0 {
			t.Error("read_access full still denies reads")
		}
		return
	}
	allow := "\n(allow file-read*)\n"
	if p.Reads.Access == ReadRestricted {
		// No blanket allow: reads of contents only where restricted mode
		// lets them, the platform and the roots among them.
		allow = "\n(allow file-read* (literal \"/\")"
		if strings.Contains(profile, "\n(allow file-read*)\n") {
			t.Fatal("restricted mode allows reading everything")
		}
		for _, want := range append([]string{"/usr", "/System"}, p.Reads.ReadableRoots...) {
			if !slices.Contains(params, "-DREADABLE_"+strconv.Itoa(slices.Index(p.restrictedReadable(seatbelt.PlatformReadable), want))+"="+want) {
				t.Errorf("restricted: %s not readable", want)
			}
		}
	}
	if a := strings.Index(profile, allow); a < 0 || denyAt < a {
		t.Fatal("the read denies are missing or come before the read allow")
	}
	has := func(kind, path string) bool {
		for _, param := range params {
			if strings.Contains(param, kind) && strings.HasSuffix(param, "="+path) {
				return true
			}
		}
		return false
	}
	for _, rel := range append(slices.Clone(BuiltinReadDeny), "") {
		if rel == "" || strings.ContainsAny(rel, "*") {
			continue
		}
		if !has("READ_DENY_", filepath.Join(p.Reads.Home, rel)) {
			t.Errorf("~/%s is not denied", rel)
		}
	}
	if !slices.ContainsFunc(params, func(s string) bool {
		return strings.HasPrefix(s, "-DREGEX_") && strings.HasSuffix(s, "=^"+seatbelt.FoldBody(p.Reads.Home+"/.cargo/credentials")+"[^/]*(/.*)?$")
	}) {
		t.Error("the ~/.cargo/credentials* glob is not denied as a regex (a file created later would be readable)")
	}
	for _, d := range p.Reads.Deny {
		if !has("READ_DENY_", d) {
			t.Errorf("read_deny %s is not denied", d)
		}
	}
	for _, a := range p.Reads.Allow {
		if !has("READ_ALLOW_", a) {
			t.Errorf("read_allow %s is not allowed", a)
		}
	}
	if len(p.Reads.Allow) > 0 && strings.Index(profile, "; Reads shown again") < denyAt {
		t.Error("the read_allow rules come before the denies, so they lose")
	}
}

func protectedFor(root string) []string {
	var out []string
	for _, n := range ProtectedNames {
		out = append(out, filepath.Join(root, n))
	}
	return out
}

func TestSeatbeltArgvUsesAbsoluteSandboxExec(t *testing.T) {
	argv := seatbelt.Argv("(version 1)", []string{"-DWRITABLE_ROOT_0=/w"}, "/bin/ls", []string{"ls", "-l"})
	want := []string{"/usr/bin/sandbox-exec", "-p", "(version 1)", "-DWRITABLE_ROOT_0=/w", "--", "/bin/ls", "-l"}
	if strings.Join(argv, "|") != strings.Join(want, "|") {
		t.Errorf("argv %q", argv)
	}
}

// gitSplitRoot is ws as protect.SplitGitDirs leaves it for a repository with a
// submodule and a nested repository: the git dirs out of Protected and
// Found, their layout in Git (missing entries included).
func gitSplitRoot(ws string) protect.Root {
	git := ws + "/.git"
	sub := git + "/modules/lib"
	nested := ws + "/vendor/dep/.git"
	split := func(dir string) []protect.GitPath {
		return []protect.GitPath{{Path: dir, Writable: true}, {Path: dir + "/config"}, {Path: dir + "/config.worktree", Missing: true},
			{Path: dir + "/commondir", Missing: true}, {Path: dir + "/hooks"}, {Path: dir + "/info"}}
	}
	layout := split(git)
	layout = append(layout, protect.GitPath{Path: git + "/config.local"}, protect.GitPath{Path: git + "/modules"})
	layout = append(layout, split(sub)...)
	layout = append(layout, protect.GitPath{Path: sub + "/modules", Missing: true}, protect.GitPath{Path: sub + "/worktrees", Missing: true})
	layout = append(layout, protect.GitPath{Path: git + "/worktrees", Missing: true})
	layout = append(layout, split(nested)...)
	layout = append(layout, protect.GitPath{Path: nested + "/modules", Missing: true}, protect.GitPath{Path: nested + "/worktrees", Missing: true})
	return protect.Root{Path: ws, Protected: slices.DeleteFunc(protectedFor(ws), func(p string) bool { return p == git }), Git: layout}
}

// checkSeatbeltGit: each git dir's data is allowed after the writes' allow,
// each read-only entry (missing or not) is denied after the allow of the git
// dir it is in, and each git dir and the directories above it in the root
// are pinned last.
func checkSeatbeltGit(t *testing.T, profile string, params []string, roots []protect.Root) {
	t.Helper()
	at := func(path string) (int, string) {
		for _, param := range params {
			key, v, _ := strings.Cut(strings.TrimPrefix(param, "-D"), "=")
			if v != path || !strings.HasPrefix(key, "GIT_") {
				continue
			}
			i := strings.Index(profile, `(subpath (param "`+key+`"))`)
			if i < 0 {
				continue // the pin's literal
			}
			rule := profile[strings.LastIndex(profile[:i], "\n(")+2:]
			return i, rule[:strings.IndexByte(rule, ' ')]
		}
		return -1, ""
	}
	writesAt := strings.Index(profile, "\n(allow file-write*\n")
	for _, r := range roots {
		var dirs []string
		for _, g := range r.Git {
			pos, kind := at(g.Path)
			if pos < 0 || pos < writesAt {
				t.Errorf("git entry %s: not in the profile after the writes' allow", g.Path)
				continue
			}
			if g.Writable {
				if kind != "allow" {
					t.Errorf("git dir %s: %s, want allow", g.Path, kind)
				}
				dirs = append(dirs, g.Path)
				continue
			}
			if kind != "deny" {
				t.Errorf("git entry %s: %s, want deny", g.Path, kind)
			}
			for _, d := range dirs {
				if dpos, _ := at(d); pathutil.Within(d, g.Path) && dpos > pos {
					t.Errorf("git entry %s is denied before %s is allowed", g.Path, d)
				}
			}
		}
		pins := strings.Index(profile, "; The git dirs and the directories above them")
		for _, d := range dirs {
			if !slices.ContainsFunc(params, func(p string) bool {
				return strings.HasSuffix(p, "="+d) && strings.Contains(profile[pins:], strings.Split(strings.TrimPrefix(p, "-D"), "=")[0]+`"))`)
			}) {
				t.Errorf("git dir %s is not pinned", d)
			}
		}
		if len(dirs) > 0 && pins < 0 {
			t.Error("no pins")
		}
	}
}

// mixCase upper-cases every other letter.
func mixCase(s string) string {
	b := []byte(s)
	for i := range b {
		if i%2 == 0 && b[i] >= 'a' && b[i] <= 'z' {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}
