package gitconfig

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTargets(t *testing.T) {
	home := t.TempDir()
	cases := []struct {
		name   string
		config string            // the repository's .git/config
		files  map[string]string // more files, relative to the work tree
		global string            // the user's global config
		want   []string          // relative to the work tree; ~/ for home
	}{
		{name: "none", config: "[core]\n\tbare = false\n"},
		{name: "hooksPath relative to the work tree", config: "[core]\n\thooksPath = .githooks\n", want: []string{".githooks"}},
		{name: "husky's stubs run the hooks one level up", config: "[core]\n\thooksPath = .husky/_\n", want: []string{".husky/_", ".husky"}},
		{name: "hooksPath in home", config: "[core]\n\thooksPath = ~/hooks\n", want: []string{"~/hooks"}},
		{name: "absolute", config: "[core]\n\thooksPath = /srv/hooks\n", want: []string{"/srv/hooks"}},
		{name: "quoted with a comment", config: "[core]\n\thooksPath = \".git hooks\" # the team's\n", want: []string{".git hooks"}},
		{name: "section on the key's line, any case", config: "[CORE] HooksPath = h\n", want: []string{"h"}},
		{name: "a byte order mark first, as Windows editors write", config: "\ufeff[core]\n\thooksPath = .githooks\n", want: []string{".githooks"}},
		{name: "include relative to the git dir", config: "[include]\n\tpath = ../shared.gitconfig\n", want: []string{"shared.gitconfig"}},
		{
			name:   "includeIf whatever the condition, and what it includes",
			config: "[includeIf \"onbranch:release\"]\n\tpath = ../a.cfg\n",
			files:  map[string]string{"a.cfg": "[include]\n\tpath = conf/b.cfg\n", "conf/b.cfg": "[core]\n\thooksPath = hooks\n"},
			want:   []string{"a.cfg", "conf/b.cfg", "hooks"},
		},
		{name: "an include of itself ends", config: "[include]\n\tpath = config\n", want: []string{".git/config"}},
		{name: "%(prefix) is git's to expand", config: "[include]\n\tpath = %(prefix)/etc/x\n"},
		{name: "another user's home", config: "[include]\n\tpath = ~bob/x\n"},
		{name: "the global config's relative hooksPath is each work tree's", global: "[core]\n\thooksPath = .hooks\n", want: []string{".hooks"}},
		{name: "the global config's include in home", global: "[include]\n\tpath = ~/.gitconfig.local\n", want: []string{"~/.gitconfig.local"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			git := filepath.Join(ws, ".git")
			write(t, filepath.Join(git, "config"), c.config)
			for name, content := range c.files {
				write(t, filepath.Join(ws, name), content)
			}
			var global []string
			if c.global != "" {
				g := filepath.Join(t.TempDir(), "global")
				write(t, g, c.global)
				global = []string{g}
			}
			var want []string
			for _, w := range c.want {
				switch {
				case filepath.IsAbs(w):
					want = append(want, w)
				case w[0] == '~':
					want = append(want, filepath.Join(home, w[2:]))
				default:
					want = append(want, filepath.Join(ws, w))
				}
			}
			got := Targets(git, global, home)
			if !slices.Equal(got, want) {
				t.Errorf("Targets = %q, want %q", got, want)
			}
		})
	}
}

// A submodule's git dir (.git/modules/lib) has its work tree elsewhere,
// named by core.worktree: its relative hooksPath is relative to that.
func TestTargetsFollowCoreWorktree(t *testing.T) {
	ws := t.TempDir()
	git := filepath.Join(ws, ".git", "modules", "lib")
	write(t, filepath.Join(git, "config"), "[core]\n\tworktree = ../../../lib\n\thooksPath = .husky\n")
	got := Targets(git, nil, "")
	if want := []string{filepath.Join(ws, "lib", ".husky")}; !slices.Equal(got, want) {
		t.Errorf("Targets = %q, want %q", got, want)
	}
	// Without a work tree, git runs no hooks relative to one.
	write(t, filepath.Join(git, "config"), "[core]\n\thooksPath = .husky\n")
	if got := Targets(git, nil, ""); len(got) != 0 {
		t.Errorf("Targets without a work tree = %q", got)
	}
}

// A linked worktree's git dir (.git/worktrees/NAME) holds no config of its
// own: git reads the common dir's config and the worktree's
// config.worktree, and runs a relative hooksPath in the linked work tree
// (its own checkout of .husky), which its gitdir file names. Before, the
// linked work tree's hooks were nobody's target, and a sandboxed command
// opened there rewrote what the user's next commit in it runs.
func TestTargetsOfALinkedWorktree(t *testing.T) {
	base := t.TempDir()
	main, feat := filepath.Join(base, "main"), filepath.Join(base, "feat")
	common := filepath.Join(main, ".git")
	wt := filepath.Join(common, "worktrees", "feat")
	write(t, filepath.Join(common, "config"), "[core]\n\thooksPath = .husky/_\n")
	write(t, filepath.Join(wt, "commondir"), "../..\n")
	write(t, filepath.Join(wt, "gitdir"), filepath.Join(feat, ".git")+"\n")
	write(t, filepath.Join(wt, "config.worktree"), "[include]\n\tpath = ../../../../feat/local.cfg\n")
	write(t, filepath.Join(feat, ".git"), "gitdir: "+wt+"\n")
	want := []string{filepath.Join(feat, ".husky", "_"), filepath.Join(feat, ".husky"), filepath.Join(feat, "local.cfg")}
	for _, from := range []string{wt, filepath.Join(feat, ".git")} {
		got := Targets(from, nil, "")
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("Targets(%s) = %q, want %q", from, got, want)
		}
	}
	// Twin: the main work tree's own hooks for its git dir.
	if got, want := Targets(common, nil, ""), []string{filepath.Join(main, ".husky", "_"), filepath.Join(main, ".husky")}; !slices.Equal(got, want) {
		t.Errorf("Targets(main) = %q, want %q", got, want)
	}
	// A relative gitdir (worktree.useRelativePaths) is relative to the git dir.
	write(t, filepath.Join(wt, "gitdir"), "../../../../feat/.git\n")
	if got := Targets(wt, nil, ""); !slices.Contains(got, filepath.Join(feat, ".husky", "_")) {
		t.Errorf("Targets with a relative gitdir file = %q", got)
	}
}

func TestRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config")
	write(t, p, "# comment\n[core]\n\tfsmonitor = \"a;b\" ; trailing\n\tbool\n[remote \"origin\"]\n\turl = x\\\n  y\n[section.sub]\n\tk = v\n")
	got, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Section: "core", Key: "fsmonitor", Value: "a;b"},
		{Section: "core", Key: "bool"},
		{Section: "remote", Sub: "origin", Key: "url", Value: "x  y"},
		{Section: "section", Sub: "sub", Key: "k", Value: "v"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Read = %+v\nwant %+v", got, want)
	}
	if e, err := Read(filepath.Join(t.TempDir(), "missing")); e != nil || err != nil {
		t.Errorf("a missing file: %v, %v", e, err)
	}
}

// Without a repository, what the user's config names that needs none: its
// includes and an absolute hooksPath; a relative hooksPath is each work
// tree's, so none here.
func TestTargetsOfTheGlobalConfigAlone(t *testing.T) {
	dir := t.TempDir()
	global := filepath.Join(dir, "gitconfig")
	write(t, global, "[include]\n\tpath = dotfiles/git.inc\n[core]\n\thooksPath = .hooks\n")
	write(t, filepath.Join(dir, "dotfiles", "git.inc"), "[core]\n\thooksPath = /srv/hooks\n")
	got := Targets("", []string{global}, "")
	if want := []string{filepath.Join(dir, "dotfiles", "git.inc"), "/srv/hooks"}; !slices.Equal(got, want) {
		t.Errorf("Targets = %q, want %q", got, want)
	}
}

// The programs config values name by a path are targets: a relative one in
// the work tree (where git runs it), ~/ in home, an absolute one as it is;
// so is init.templateDir. Twin: a program found on PATH, a boolean
// fsmonitor, an alias (the user runs it by name), and a program reached
// through a symbolic link (a virtualenv's python) are not.
func TestTargetsOfProgramsTheConfigNames(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	git := filepath.Join(ws, ".git")
	write(t, filepath.Join(ws, ".venv", "real", "python"), "#!/bin/sh\n")
	if err := os.Symlink("real/python", filepath.Join(ws, ".venv", "python")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(ws, ".venv", "real"), filepath.Join(ws, "venvlink")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(git, "config"), `[core]
	fsmonitor = ./tools/fsmon.sh
	pager = less -R
[filter "strip"]
	clean = "\"./tools/clean me.sh\" --in-place"
	smudge = ~/bin/smudge
[diff "nb"]
	textconv = .venv/python -m nbconv
	command = venvlink/python
[merge "ours"]
	driver = true
[credential]
	helper = /opt/helper/git-credential-x get
[alias]
	sync = !./scripts/sync.sh
[init]
	templateDir = ~/.git-template
[sequence]
	editor = true
`)
	got := Targets(git, nil, home)
	want := []string{
		filepath.Join(ws, "tools", "fsmon.sh"), filepath.Join(ws, "tools", "clean me.sh"),
		filepath.Join(home, "bin", "smudge"), "/opt/helper/git-credential-x", filepath.Join(home, ".git-template"),
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Targets = %q\nwant %q", got, want)
	}
}

// Targets follows every variable ProgramKey names, as the approval policy
// grades them: a transport proxy and a remote's upload-pack too.
func TestTargetsFollowEveryProgramKey(t *testing.T) {
	ws := t.TempDir()
	git := filepath.Join(ws, ".git")
	write(t, filepath.Join(git, "config"), "[core]\n\tgitProxy = ./tools/proxy\n[remote \"origin\"]\n\tuploadpack = ./tools/up\n\turl = ./x\n")
	got := Targets(git, nil, "")
	want := []string{filepath.Join(ws, "tools", "proxy"), filepath.Join(ws, "tools", "up")}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("Targets = %q, want %q", got, want)
	}
}
