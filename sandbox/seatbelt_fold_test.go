package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wardenhq/warden/sandbox/protect"
	"github.com/wardenhq/warden/sandbox/seatbelt"
)

// Every protected name, spelled in upper, mixed case or with the Unicode
// letters APFS folds to its own, cannot be written (nor anything under it),
// on a case-insensitive volume where that spelling is the protected file;
// the workspace's ordinary files with similar names stay writable.
func TestSeatbeltProtectedNamesDeniedInAnyCase(t *testing.T) {
	ws := "/Users/dev/project"
	home := "/Users/dev"
	roots := []protect.Root{
		{Path: ws, Protected: protectedFor(ws), Found: []string{ws + "/vendor/dep/.git"}},
		{Path: home, Protected: append(protectedFor(home), home+"/.config/warden", home+"/.local/state/warden")},
	}
	profile, params := SeatbeltProfile(Policy{Mode: WorkspaceWrite, Reads: ReadPolicy{Home: home}}, roots, 1)
	s := parseSBPL(t, profile, params)
	attacks := 0
	for _, r := range roots {
		for _, prot := range append(slices.Clone(r.Protected), r.Found...) {
			rel := strings.TrimPrefix(prot, r.Path+"/")
			for _, sp := range append(spellings(rel), rel) {
				for _, p := range []string{r.Path + "/" + sp, r.Path + "/" + sp + "/hooks/pre-commit", strings.ToUpper(r.Path) + "/" + sp} {
					attacks++
					if s.allowed("file-write*", p) {
						t.Errorf("write to %q allowed (protected %s)", p, prot)
					}
				}
			}
		}
	}
	// The directories above Warden's config may not be renamed in any case
	// (or the config would be moved away, changed, and moved back).
	for _, p := range []string{home + "/.CONFIG", home + "/.Local", home + "/.local/STATE", home + "/.local/\u017Ftate"} {
		attacks++
		if s.allowed("file-write*", p) {
			t.Errorf("rename of %q allowed", p)
		}
	}
	twins := []string{
		ws + "/.gitignore", ws + "/.github/workflows/ci.yml", ws + "/.gitattributes", ws + "/.envrc.example",
		ws + "/.envrc.d/x", ws + "/.vscode-test/run.js", ws + "/.claudeignore", ws + "/.mcp.json.bak",
		ws + "/docs/.Git-notes", ws + "/src/main.go", ws + "/vendor/dep/README", ws + "/vendor/dep/.github/x",
		home + "/.config/nvim/init.lua", home + "/.CONFIG/nvim/init.lua", home + "/.local/share/x", home + "/.wardenrc",
		home + "/.Config-backup", ws + "/IDEAS.md", ws + "/.zedignore",
	}
	for _, p := range twins {
		if !s.allowed("file-write*", p) {
			t.Errorf("ordinary file %q is not writable", p)
		}
	}
	if attacks < 400 || len(twins) < 15 {
		t.Fatalf("%d attacks, %d twins", attacks, len(twins))
	}
	t.Logf("%d attacks denied, %d twins writable", attacks, len(twins))
}

// A read-only git entry (missing ones above all, which only a path rule can
// stop) is denied in any spelling and everything under it, after the allow
// of its git dir; the data beside it stays writable; a git dir cannot be
// renamed in any case.
func TestSeatbeltGitEntriesDeniedInAnyCase(t *testing.T) {
	ws := "/Users/dev/project"
	root := gitSplitRoot(ws)
	profile, params := SeatbeltProfile(Policy{Mode: WorkspaceWrite, Reads: ReadPolicy{Home: "/Users/dev"}}, []protect.Root{root}, 1)
	s := parseSBPL(t, profile, params)
	for _, g := range root.Git {
		rel := strings.TrimPrefix(g.Path, ws)
		if g.Writable {
			for _, p := range []string{g.Path, strings.ToUpper(g.Path), ws + mixCase(rel)} {
				if s.allowed("file-write*", p) {
					t.Errorf("git dir %q can be renamed or removed", p)
				}
			}
			continue
		}
		for _, p := range append(spellings(rel), rel, rel+"/post-checkout", strings.ToUpper(rel)+"/x/config") {
			if s.allowed("file-write*", ws+p) {
				t.Errorf("write to %q allowed (entry %s)", ws+p, g.Path)
			}
		}
	}
	for _, p := range []string{ws + "/.git/objects/ab/cd", ws + "/.git/refs/heads/main", ws + "/.git/HOOKS-notes", ws + "/.git/configs",
		ws + "/.git/index.lock", ws + "/.GIT/index", ws + "/vendor/dep/.git/HEAD", ws + "/.git/modules/lib/objects/x", ws + "/config"} {
		if !s.allowed("file-write*", p) {
			t.Errorf("git data %q is not writable", p)
		}
	}
}

// A workspace opened as /Users/Dev/Project is /Users/dev/project on a
// case-insensitive volume: its protected paths are denied whatever the
// spelling, the root's own files stay writable as opened.
func TestSeatbeltRootOpenedInAnotherCase(t *testing.T) {
	ws := "/Users/Dev/Project"
	profile, params := SeatbeltProfile(Policy{Mode: WorkspaceWrite, Reads: ReadPolicy{Home: "/Users/Dev"}}, []protect.Root{{Path: ws, Protected: protectedFor(ws)}}, 1)
	s := parseSBPL(t, profile, params)
	for _, p := range []string{"/users/dev/project/.git/config", "/USERS/DEV/PROJECT/.ENVRC", "/Users/dev/project/.vscode/tasks.json", "/Users/Dev/Project/.Claude/settings.json"} {
		if s.allowed("file-write*", p) {
			t.Errorf("write to %q allowed", p)
		}
	}
	if !s.allowed("file-write*", ws+"/src/main.go") {
		t.Error("the root as opened is not writable")
	}
}

// Every credential store, spelled in any case, stays hidden; a read_allow
// exception shows only its own spelling; files with similar names are
// readable.
func TestSeatbeltSecretsHiddenInAnyCase(t *testing.T) {
	home := "/Users/dev"
	p := Policy{Mode: WorkspaceWrite, Reads: ReadPolicy{Home: home, Deny: []string{home + "/project/.env.production"}, Allow: []string{home + "/.aws/config"}}}
	profile, params := SeatbeltProfile(p, []protect.Root{{Path: home + "/project", Protected: protectedFor(home + "/project")}}, 1)
	s := parseSBPL(t, profile, params)
	attacks := 0
	for _, d := range append(slices.Clone(BuiltinReadDeny), "project/.env.production") {
		rel := strings.ReplaceAll(d, "*", ".toml")
		for _, sp := range append(spellings(rel), rel) {
			for _, path := range []string{home + "/" + sp, home + "/" + sp + "/key", strings.ToUpper(home) + "/" + sp} {
				attacks++
				if s.allowed("file-read*", path) {
					t.Errorf("read of %q allowed (%s)", path, d)
				}
			}
		}
	}
	for _, path := range []string{home + "/.AWS/credentials", home + "/.aws/CONFIG/../credentials", home + "/.AWS/config"} {
		attacks++
		if s.allowed("file-read*", path) {
			t.Errorf("read of %q allowed", path)
		}
	}
	twins := []string{home + "/.aws/config", home + "/.sshrc", home + "/.ssh-notes.txt", home + "/.awsume", home + "/.npmrc.bak",
		home + "/project/.env.example", home + "/project/README.md", home + "/.cargo/config.toml", home + "/.gitconfig"}
	for _, path := range twins {
		if !s.allowed("file-read*", path) {
			t.Errorf("%q is not readable", path)
		}
	}
	if attacks < 100 {
		t.Fatalf("%d attacks", attacks)
	}
	t.Logf("%d attacks denied, %d twins readable", attacks, len(twins))
}

// foldRegex writes names holding regex metacharacters, spaces, quotes and
// non-ASCII letters as POSIX ERE without a backslash or a multi-byte
// character in a bracket, matching the name in any case and nothing but
// the name (or, for the characters a profile string cannot hold plainly,
// any one byte but /).
func TestFoldRegexEscapesNames(t *testing.T) {
	for _, name := range []string{"a.b", "a+b", "a(b", "a)b", "a[b", "a]b", "a{b", "a}b", "a$b", "a*b", "a?b", "a|b",
		"a b", "a^b", "a\\b", "a\"b", "a\nb", "café", "Ärger", "日本", "Kelvin\u212A", "über.ß", "a#b", "a;b", "a`b", "-a-"} {
		base := "/Users/dev/w " + name
		path := base + "/.git"
		re := seatbelt.FoldRegex(path, true)
		if strings.ContainsRune(re, '\\') || strings.ContainsRune(re, '"') || strings.ContainsRune(re, '\n') {
			t.Errorf("%q: regex %q holds a backslash, a quote or a newline", name, re)
		}
		for _, class := range regexpBrackets(re) {
			if !utf8.ValidString(class) || strings.IndexFunc(class, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0 {
				t.Errorf("%q: bracket %q holds a multi-byte character", name, class)
			}
		}
		c := sbplRegex(t, re)
		for _, p := range []string{path, path + "/hooks", strings.ToUpper(path), strings.ToLower(path), strings.ToUpper(base) + "/.git/config"} {
			if !c.MatchString(p) {
				t.Errorf("%q: %q does not match %q", name, re, p)
			}
		}
		for _, p := range []string{"/Users/dev/w " + strings.Replace(name, name[len(name)/2:len(name)/2+1], "//", 1) + "/.git",
			base + "x/.git", base + "/.gitx", base + "/.git-x", "/Users/dev/w/.git", base} {
			if c.MatchString(p) {
				t.Errorf("%q: %q matches %q", name, re, p)
			}
		}
	}
	// The ligature spellings: .ssh as .ßh, config as conﬁg, a long run
	// past the bound still matched (by the broader run pattern).
	for path, spelled := range map[string]string{"/h/.ssh": "/h/.\u00DFh", "/h/.git/config": "/h/.git/con\uFB01g", "/h/.password-store": "/h/.pa\u1E9Eword-\uFB05ore",
		"/h/" + strings.Repeat("s", 30): "/h/" + strings.Repeat("\u00DF", 15)} {
		if !sbplRegex(t, seatbelt.FoldRegex(path, true)).MatchString(spelled) {
			t.Errorf("%q does not match %q", seatbelt.FoldRegex(path, true), spelled)
		}
	}
}

// regexpBrackets lists the bracket expressions in re (Warden writes none
// nested and none holding ]).
func regexpBrackets(re string) []string {
	var out []string
	for i := 0; i < len(re); i++ {
		if re[i] != '[' {
			continue
		}
		j := i + 1
		if j < len(re) && re[j] == ']' {
			j++
		}
		end := strings.IndexByte(re[j:], ']')
		out = append(out, re[i:j+end+1])
		i = j + end
	}
	return out
}

// On macOS the profile denies what a repository's config makes git run in
// the work tree (husky's hooks, an included config, missing or not), as it
// denies .git/hooks. Twin: the work tree's source.
func TestSeatbeltDeniesWhatTheRepositoryConfigRuns(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	ws := t.TempDir()
	gitRepo(t, ws, [][2]string{{"core.hooksPath", ".husky/_"}, {"include.path", "../shared.gitconfig"}, {"include.path", "../missing.cfg"}},
		map[string]string{".husky/_/h": "#!/bin/sh\n", ".husky/pre-commit": "npm test\n", "shared.gitconfig": "[user]\n"})
	roots := []protect.Root{{Path: ws, Protected: protectedFor(ws)}}
	protect.SplitGitDirs(roots)
	profile, params := SeatbeltProfile(Policy{Mode: WorkspaceWrite}, roots, 1)
	s := parseSBPL(t, profile, params)
	for _, rel := range []string{".husky/pre-commit", ".husky/_/h", ".husky/_/post-checkout", "shared.gitconfig", "missing.cfg", ".HUSKY/pre-commit"} {
		if s.allowed("file-write*", filepath.Join(ws, rel)) {
			t.Errorf("write to %s allowed", rel)
		}
	}
	if !s.allowed("file-write*", filepath.Join(ws, "src", "main.go")) {
		t.Error("twin: the work tree's source is not writable")
	}
}

// On macOS a protected path reached through a link in the root is held by
// denying writes to the link itself (no refusal needed): a command can
// neither remove ~/.config nor write through it. Twin: the dotfiles
// directory's other files.
func TestSeatbeltDeniesTheLinkAboveAProtectedPath(t *testing.T) {
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "dotfiles", "config", "warden"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dotfiles/config", filepath.Join(ws, ".config")); err != nil {
		t.Fatal(err)
	}
	pol := Policy{Mode: WorkspaceWrite, Workspace: []string{ws}, ExcludeSlashTmp: true, ExcludeTmpdir: true,
		ProtectedPaths: []string{filepath.Join(ws, ".config", "warden")}}
	roots, err := pol.Roots()
	if err != nil {
		t.Fatal(err)
	}
	profile, params := SeatbeltProfile(pol, roots, 1)
	s := parseSBPL(t, profile, params)
	for _, p := range []string{filepath.Join(ws, ".config"), filepath.Join(ws, ".config", "warden", "config.toml"), filepath.Join(ws, "dotfiles", "config", "warden", "x")} {
		if s.allowed("file-write*", p) {
			t.Errorf("write to %s allowed", p)
		}
	}
	if !s.allowed("file-write*", filepath.Join(ws, "dotfiles", "README")) {
		t.Error("twin: the dotfiles directory is not writable")
	}
}
