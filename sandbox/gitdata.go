package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A repository's git dir holds two kinds of files. Its data (objects, refs,
// logs, the index, HEAD and the other state files, their locks) is what
// add, commit, branch, checkout, stash and merge write: the sandbox lets a
// command write it. What git executes or obeys (config, hooks, the files
// that point git at another git dir) stays read-only, and the names that
// are missing are masked so they cannot be created: otherwise the next git
// the user runs on the host would run the command's code.
//
// git also obeys the state of an interrupted rebase or cherry-pick
// (rebase-merge/git-rebase-todo and sequencer/todo hold `exec` lines). They
// stay writable so that a sandboxed rebase works; the host refuses to take
// git out of the sandbox while such state exists (approvals).

// GitObeyed are the entries of a git dir held read-only when they exist
// (approvals trusts them on the host for that reason).
// info/ (attributes, exclude, sparse-checkout) runs nothing the work tree's
// .gitattributes and .gitignore could not say, and an alternate names
// objects, which the command may write anyway: a missing one is not masked
// (a mask git cannot read would break git).
var GitObeyed = []string{
	"config", "config.worktree", "commondir", "gitdir", "hooks", "info",
	"objects/info/alternates", "objects/info/http-alternates", "branches", "remotes",
}

// gitMasked are the entries of GitObeyed made when missing, with the content
// git reads from the mask: an empty config, a commondir naming the git dir
// itself (git refuses an empty one), an empty hooks directory.
var gitMasked = map[string]string{"config": "", "config.worktree": "", "commondir": ".\n", "hooks": dirMask}

// GitNested hold the git dirs of submodules and linked worktrees: read-only
// (made when missing) so that no new git dir appears there, with each
// existing git dir inside writable again and split the same way.
var GitNested = []string{"modules", "worktrees"}

const (
	dirMask = "\x00dir"
	// gitMaskMode marks the masks Warden makes inside a git dir, so cleanup
	// can tell them from the user's files: sticky (which nothing in a git
	// dir is) and, for files, read-only. git reads them as an absent entry.
	gitMaskFileMode = os.ModeSticky | 0o444
	gitMaskDirMode  = os.ModeSticky | 0o755
	gitMaxDepth     = 4
)

// GitPath is one entry of a git dir's split: Writable says whether it is
// data (the git dir itself, a nested git dir) or held read-only. Mask is
// set when Warden makes (and later removes) the entry.
type GitPath struct {
	Path     string
	Writable bool   `json:",omitempty"`
	Mask     string `json:",omitempty"` // the mask's content, dirMask for a directory
	IsMask   bool   `json:",omitempty"` // Warden made the entry (Mask says with what)
}

// gitLayout splits the git dir dir: first dir itself (writable), then its
// read-only entries, then each nested git dir the same way, in an order in
// which applying each entry's access in turn gives the split.
func gitLayout(dir string) []GitPath {
	var out []GitPath
	addGitLayout(&out, dir, 0)
	return out
}

func addGitLayout(out *[]GitPath, dir string, depth int) {
	*out = append(*out, GitPath{Path: dir, Writable: true})
	for _, n := range GitObeyed {
		p := filepath.Join(dir, n)
		_, err := os.Lstat(p)
		mask, masked := gitMasked[n]
		switch {
		case err == nil && masked && isGitMask(p):
			*out = append(*out, GitPath{Path: p, Mask: mask, IsMask: true}) // left by a crashed run
		case err == nil:
			*out = append(*out, GitPath{Path: p})
		case masked:
			*out = append(*out, GitPath{Path: p, Mask: mask, IsMask: true})
		}
	}
	for _, p := range gitIncludes(dir) {
		// An included file not made yet is masked as an empty config (or
		// its first missing parent as an empty directory).
		point, missing := maskPoint(dir, p)
		switch {
		case missing && point == p:
			*out = append(*out, GitPath{Path: p, IsMask: true})
		case missing:
			*out = append(*out, GitPath{Path: point, Mask: dirMask, IsMask: true})
		case isGitMask(point):
			mask := ""
			if st, err := os.Lstat(point); err == nil && st.IsDir() {
				mask = dirMask
			}
			*out = append(*out, GitPath{Path: point, Mask: mask, IsMask: true})
		default:
			*out = append(*out, GitPath{Path: point})
		}
	}
	for _, n := range GitNested {
		p := filepath.Join(dir, n)
		if _, err := os.Lstat(p); err != nil {
			*out = append(*out, GitPath{Path: p, Mask: dirMask, IsMask: true})
			continue
		}
		*out = append(*out, GitPath{Path: p, Mask: dirMask, IsMask: isGitMask(p)})
		if depth < gitMaxDepth {
			for _, sub := range nestedGitDirs(p) {
				addGitLayout(out, sub, depth+1)
			}
		}
	}
}

// nestedGitDirs lists the git dirs below a modules or worktrees directory:
// a submodule's name may hold slashes, so directories that are not git dirs
// are entered (a few levels deep).
func nestedGitDirs(dir string) []string {
	var out []string
	var walk func(d string, level int)
	walk = func(d string, level int) {
		entries, err := readDirNames(d)
		if err != nil {
			return
		}
		for _, e := range entries {
			if !e.dir {
				continue
			}
			p := filepath.Join(d, e.name)
			if IsGitDir(p) {
				out = append(out, p)
			} else if level < 3 {
				walk(p, level+1)
			}
		}
	}
	walk(dir, 0)
	return out
}

// IsGitDir says whether dir looks like a git dir: HEAD, objects, refs
// (or commondir for a linked worktree's).
func IsGitDir(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil {
		return false
	}
	for _, n := range []string{"objects", "commondir"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// gitIncludes are the files the git dir's config includes by a path
// relative to the config, inside the git dir: git obeys them as it obeys
// the config.
func gitIncludes(dir string) []string {
	f, err := os.Open(filepath.Join(dir, "config"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	include := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			sec := strings.ToLower(strings.TrimLeft(line, "[ \t"))
			include = strings.HasPrefix(sec, "include")
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !include || !ok || !strings.EqualFold(strings.TrimSpace(k), "path") {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		if v == "" || filepath.IsAbs(v) || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "%(") {
			continue
		}
		if p := filepath.Join(dir, v); within(dir, p) && p != dir {
			out = append(out, p)
		}
	}
	return out
}

// isGitMask reports whether p is a mask Warden made in a git dir.
func isGitMask(p string) bool {
	st, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if st.IsDir() {
		if st.Mode()&(os.ModeSticky|os.ModePerm) != gitMaskDirMode {
			return false
		}
		entries, err := os.ReadDir(p)
		return err == nil && len(entries) == 0
	}
	if !st.Mode().IsRegular() || st.Mode()&(os.ModeSticky|os.ModePerm) != gitMaskFileMode || st.Size() > 2 {
		return false
	}
	b, err := os.ReadFile(p)
	return err == nil && (len(b) == 0 || string(b) == ".\n")
}

// makeGitMask creates the mask for p (missing) with its content.
func makeGitMask(p, content string) error {
	if content == dirMask {
		if err := os.Mkdir(p, 0o755); err != nil {
			return err
		}
		return os.Chmod(p, gitMaskDirMode)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(p, gitMaskFileMode)
	}
	if err != nil {
		os.Remove(p)
	}
	return err
}

// removeGitMask removes p if it is still a mask Warden made.
func removeGitMask(p string) {
	if isGitMask(p) {
		os.Remove(p)
	}
}

// gitDirs lists the git dirs of root whose data the sandbox may write: the
// top .git when it is a directory (or the target of a .git file, inside
// the root), and the repositories found below (directories only: a .git
// file stays read-only). Those inside another one's nested dirs are
// covered by its layout.
func gitDirs(r Root) []string {
	var out []string
	top := filepath.Join(r.Path, ".git")
	if st, err := os.Lstat(top); err == nil && st.IsDir() && !IsPlaceholder(top) {
		out = append(out, top)
	} else if t, ok := gitdirTarget(top); ok && within(r.Path, t) && t != r.Path {
		out = append(out, t)
	}
	if isScratch(r.Path) {
		// Everyone's scratch: a repository found there stays read-only as
		// a whole, and Warden writes no masks into it.
		return out
	}
	for _, f := range r.Found {
		if st, err := os.Lstat(f); err == nil && st.IsDir() && IsGitDir(f) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	// Drop those below another (a submodule's git dir under .git/modules).
	kept := out[:0]
	for _, d := range out {
		if len(kept) == 0 || !within(kept[len(kept)-1], d) {
			kept = append(kept, d)
		}
	}
	return kept
}

// splitGitDirs fills each root's Git with the layouts of its git dirs and
// drops those git dirs from Protected and Found, which hold the rest
// read-only as a whole.
func splitGitDirs(roots []Root) {
	for i := range roots {
		r := &roots[i]
		r.Git = nil
		dirs := gitDirs(*r)
		for _, d := range dirs {
			r.Git = append(r.Git, gitLayout(d)...)
		}
		if len(dirs) == 0 {
			continue
		}
		inDirs := func(p string) bool {
			for _, d := range dirs {
				if within(d, p) {
					return true
				}
			}
			return false
		}
		r.Protected = slices.DeleteFunc(slices.Clone(r.Protected), inDirs)
		r.Found = slices.DeleteFunc(slices.Clone(r.Found), inDirs)
	}
}
