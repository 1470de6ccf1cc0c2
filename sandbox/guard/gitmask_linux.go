package guard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wardenhq/warden/sandbox/protect"
	"golang.org/x/sys/unix"
)

// A git dir's missing hooks/, config, config.worktree, commondir,
// modules/ or worktrees/, or a file its config includes (at the top of the
// git dir), must not be created by the command at all: one made and moved
// away a moment later (quarantine) could still be obeyed by a git the user
// starts on the host in that moment, or stay behind if Warden is killed.
// So the launcher puts a placeholder there for the run, which the helper
// holds read-only like an existing entry, and which git reads as if
// nothing were there: an empty hooks/ (no hooks); an empty config,
// config.worktree or included file (no settings); a commondir naming its
// own git dir ("."; git refuses an empty one); an empty modules/ or
// worktrees/ (no submodule or linked worktree git dirs, and a new one
// cannot be made in it). It is inside the git dir, where git status does
// not look (find and grep -r list it while a run lasts: a name cannot be
// held without an entry there), and it goes away when the last run that
// holds it ends.
//
// Runs share them: each run holds a shared lock on the placeholder while
// it runs, the run that ends last (an exclusive lock succeeds) removes it
// if it is still an untouched placeholder. A placeholder is known by its
// modification time (gitMaskTime) and its content: one the user wrote to,
// or a hook or a git dir added to the directory, changes them, and it is
// the user's from then on. A file appears whole (made unnamed, then
// linked), so a git on the host never reads a half-made one.

// gitMaskTime marks a placeholder.
var gitMaskTime = time.Unix(19, 0)

// gitMaskKind is what a placeholder is: a directory, or a file holding
// content.
type gitMaskKind struct {
	dir     bool
	content string
}

// gitMasked are the missing entries given a placeholder.
var gitMasked = map[string]gitMaskKind{
	"hooks": {dir: true}, "modules": {dir: true}, "worktrees": {dir: true},
	"config": {}, "config.worktree": {}, "commondir": {content: ".\n"},
}

// maskKindFor says whether the git dir entry p gets a placeholder, and
// which: one of gitMasked, or a file the git dir's config includes, at the
// top of the git dir (an empty config; not one of git's own state files,
// where an empty file would mean something).
func maskKindFor(p string) (gitMaskKind, bool) {
	base := filepath.Base(p)
	if kind, ok := gitMasked[base]; ok {
		return kind, true
	}
	switch base {
	case "index", "packed-refs", "shallow", "description", "HEAD":
		return gitMaskKind{}, false
	}
	if strings.ToUpper(base) == base || strings.HasSuffix(base, ".lock") {
		return gitMaskKind{}, false // ORIG_HEAD, MERGE_MSG...: git's state
	}
	dir := filepath.Dir(p)
	return gitMaskKind{}, protect.IsGitDir(dir) && slices.Contains(protect.GitIncludes(dir, nil), p)
}

// gitMask is one placeholder the run holds.
type gitMask struct {
	path string
	kind gitMaskKind
	f    *os.File    // holds the shared lock
	info os.FileInfo // which file it is, after the run too
}

// holdGitMasks puts a placeholder at each missing entry of the roots' git
// dirs that gets one, takes the one another run put there, and marks the
// entry as existing (Masked), so the helper holds it read-only; the guard
// watches it in case it goes away. One the user made since the layout was
// read is held read-only as theirs. A placeholder that cannot be made where
// the command could make the entry refuses the run: what the command made
// there would only be undone, not prevented.
func holdGitMasks(roots []protect.Root) ([]gitMask, error) {
	var out []gitMask
	for i := range roots {
		for j := range roots[i].Git {
			gp := &roots[i].Git[j]
			if gp.Writable || gp.VCS != "" {
				continue // data, or no git dir's
			}
			if !gp.Missing && !marked(gp.Path) {
				if _, err := os.Lstat(gp.Path); !errors.Is(err, os.ErrNotExist) {
					continue // the user's own entry
				}
				// Gone since the layout was read: another run's placeholder,
				// released as its result went out. This run holds its own.
				gp.Missing = true
			}
			kind, ok := maskKindFor(gp.Path)
			if !ok || !(gp.Missing || isGitMask(gp.Path, kind)) || !protect.IsGitDir(filepath.Dir(gp.Path)) {
				continue // the user's own entry, or not a git dir's
			}
			f, err := holdGitMask(gp.Path, kind)
			var info os.FileInfo
			if err == nil {
				if info, err = f.Stat(); err != nil {
					f.Close()
				}
			}
			switch {
			case errors.Is(err, errTheirs):
				gp.Missing = false // made by the user meanwhile: held read-only
				continue
			case err != nil && unix.Access(filepath.Dir(gp.Path), unix.W_OK) != nil:
				continue // the command cannot make it either
			case err != nil:
				releaseGitMasks(out)
				return nil, fmt.Errorf("cannot hold %s read-only for the run: %v", gp.Path, err)
			}
			out = append(out, gitMask{gp.Path, kind, f, info})
			gp.Missing, gp.Masked = false, true
		}
	}
	return out, nil
}

// errTheirs says an entry is there that is no placeholder: the user's.
var errTheirs = errors.New("not a placeholder")

// holdGitMask makes or takes the placeholder at p and locks it shared.
func holdGitMask(p string, kind gitMaskKind) (*os.File, error) {
	for range 8 {
		made := false
		var err error
		if kind.dir {
			if err = unix.Mkdir(p, 0o755); err == nil {
				if err = os.Chtimes(p, gitMaskTime, gitMaskTime); err != nil {
					os.Remove(p)
					return nil, fmt.Errorf("mark the placeholder: %w", err)
				}
			}
		} else {
			err = makeMaskFile(p, kind.content)
		}
		switch {
		case err == nil:
			made = true
		case !errors.Is(err, unix.EEXIST):
			return nil, err
		}
		if !made && !isGitMask(p, kind) {
			if st, err := os.Lstat(p); err == nil && kind.dir && st.IsDir() && time.Since(st.ModTime()) < time.Second {
				// Perhaps another run's, made a moment ago and not marked yet.
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return nil, errTheirs // held read-only as it is
		}
		flags := os.O_RDONLY | unix.O_NOFOLLOW
		if kind.dir {
			flags |= unix.O_DIRECTORY
		}
		f, err := os.OpenFile(p, flags, 0)
		if err != nil {
			continue // removed by the run that held it last: make it again
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock the placeholder: %w", err)
		}
		// The last holder may have removed it between the open and the lock.
		if sameFile(f, p) && isGitMask(p, kind) {
			return f, nil
		}
		f.Close()
	}
	if _, err := os.Lstat(p); err == nil && !isGitMask(p, kind) {
		return nil, errTheirs
	}
	return nil, errors.New("other runs kept making and removing it")
}

// makeMaskFile makes the file placeholder at p whole: written and marked
// unnamed (or, where the filesystem has no unnamed files, under a
// temporary name), then linked at p: EEXIST when p exists.
func makeMaskFile(p, content string) error {
	dir := filepath.Dir(p)
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	tmp := ""
	if err != nil {
		tmp = filepath.Join(dir, fmt.Sprintf(".%s.warden-%d", filepath.Base(p), os.Getpid()))
		if fd, err = unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644); err != nil {
			return fmt.Errorf("make the placeholder %s: %w", p, err)
		}
		defer unix.Unlink(tmp)
	}
	defer unix.Close(fd)
	// The descriptor's magic link names the file, even unnamed (AT_EMPTY_PATH
	// would need CAP_DAC_READ_SEARCH for linkat).
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	if _, err := unix.Write(fd, []byte(content)); err != nil {
		return fmt.Errorf("write the placeholder %s: %w", p, err)
	}
	ts := unix.NsecToTimespec(gitMaskTime.UnixNano())
	if tmp != "" {
		self = tmp
	}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, self, []unix.Timespec{ts, ts}, 0); err != nil {
		return fmt.Errorf("mark the placeholder %s: %w", p, err)
	}
	flags := unix.AT_SYMLINK_FOLLOW
	if tmp != "" {
		flags = 0
	}
	return unix.Linkat(unix.AT_FDCWD, self, unix.AT_FDCWD, p, flags)
}

// releaseGitMasks drops the run's hold on each placeholder and removes
// those no other run holds that are still untouched.
func releaseGitMasks(masks []gitMask) {
	for _, m := range masks {
		if unix.Flock(int(m.f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			if sameFile(m.f, m.path) && isGitMask(m.path, m.kind) {
				removeMask(m)
			}
		}
		m.f.Close()
	}
}

// beforeMaskRemoval, in tests, runs between the checks that found a
// placeholder untouched and its removal.
var beforeMaskRemoval func(path string)

// removeMask removes the placeholder m, which the checks just found
// untouched at its path. A git on the host may rename a file of its own
// onto that name at any moment (config.worktree is written through
// config.worktree.lock), so a file is first renamed aside, checked again
// there by identity and content, and removed only if it is still the
// placeholder; anything else is put back. A directory goes by rmdir, which
// fails once anything is in it.
func removeMask(m gitMask) {
	if beforeMaskRemoval != nil {
		beforeMaskRemoval(m.path)
	}
	if m.kind.dir {
		unix.Rmdir(m.path) // ENOTEMPTY: the user's now
		return
	}
	dir, name := filepath.Split(m.path)
	aside := filepath.Join(dir, "."+name+".warden-"+strconv.Itoa(os.Getpid()))
	err := unix.Renameat2(unix.AT_FDCWD, m.path, unix.AT_FDCWD, aside, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		os.Remove(m.path) // no RENAME_NOREPLACE here: checked just now
		return
	}
	if err != nil {
		return // gone already
	}
	if sameFile(m.f, aside) && isGitMask(aside, m.kind) {
		os.Remove(aside)
		return
	}
	// The user's file: back to its name, unless a newer one took it.
	unix.Renameat2(unix.AT_FDCWD, aside, unix.AT_FDCWD, m.path, unix.RENAME_NOREPLACE)
}

// isGitMask says whether p is an untouched placeholder of that kind: an
// empty directory, or a file holding just the content, carrying the mark.
func isGitMask(p string, kind gitMaskKind) bool {
	st, err := os.Lstat(p)
	if err != nil || !st.ModTime().Equal(gitMaskTime) {
		return false
	}
	if !kind.dir {
		if !st.Mode().IsRegular() || st.Size() != int64(len(kind.content)) {
			return false
		}
		if kind.content == "" {
			return true
		}
		data, err := os.ReadFile(p)
		return err == nil && string(data) == kind.content
	}
	if !st.IsDir() {
		return false
	}
	entries, err := os.ReadDir(p)
	return err == nil && len(entries) == 0
}

// marked says whether p carries a placeholder's mark.
func marked(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.ModTime().Equal(gitMaskTime)
}

// sameFile says whether the open file f is still what the path p names.
func sameFile(f *os.File, p string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(p)
	return err == nil && os.SameFile(a, b)
}

// untouchedMask says whether p is a git dir's placeholder (any run's)
// still empty and marked: nothing the command made, and nothing git would
// obey.
func untouchedMask(p string) bool {
	kind, ok := maskKindFor(p)
	return ok && isGitMask(p, kind)
}
