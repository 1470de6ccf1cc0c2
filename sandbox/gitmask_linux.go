package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A git dir's missing hooks/, config or config.worktree must not be
// created by the command at all: one made and moved away a moment later
// (quarantine) could still be run by a git the user starts on the host in
// that moment, or stay behind if Warden is killed. So the launcher puts an
// empty one there for the run (an empty directory, an empty file: git
// reads them as no hooks and no settings), which the helper holds
// read-only like an existing entry. It is inside the git dir, where git
// status, grep and find in the work tree do not look, and it goes away
// when the last run that holds it ends.
//
// Runs share them: each run holds a shared lock on the placeholder while
// it runs, the run that ends last (an exclusive lock succeeds) removes it
// if it is still an untouched placeholder. A placeholder is known by its
// modification time (gitMaskTime): one the user wrote to, or a hook added
// to the directory, changes it, and it is the user's from then on.
//
// config.worktree gets one only where git reads it (extensions.worktreeConfig):
// elsewhere git ignores one the command makes, which is moved away, and a
// placeholder would be one more entry find shows inside the sandbox. A
// hooks/ is there in every repository git init made with its templates.
//
// commondir gets none: git refuses to start with an empty one. Its
// creation is moved away (quarantine).

// gitMaskTime marks a placeholder.
var gitMaskTime = time.Unix(19, 0)

// gitMasked are the missing entries given a placeholder, and whether it is
// a directory.
var gitMasked = map[string]bool{"hooks": true, "config": false, "config.worktree": false}

// gitMask is one placeholder the run holds.
type gitMask struct {
	path string
	f    *os.File    // holds the shared lock
	info os.FileInfo // which file it is, after the run too
}

// holdGitMasks puts a placeholder at each missing entry of the roots' git
// dirs that gets one, takes the one another run put there, and marks
// the entry as existing, so the helper holds it read-only and the guard
// does not watch it. An entry that cannot get one stays missing: the guard
// moves away what the command makes there.
func holdGitMasks(roots []Root) []gitMask {
	var out []gitMask
	for i := range roots {
		for j := range roots[i].Git {
			gp := &roots[i].Git[j]
			dir, ok := gitMasked[filepath.Base(gp.Path)]
			gitDir := filepath.Dir(gp.Path)
			if !ok || gp.Writable || !(gp.Missing || isGitMask(gp.Path, dir)) || !IsGitDir(gitDir) {
				continue // the user's own entry, or not a git dir's
			}
			if filepath.Base(gp.Path) == "config.worktree" && !worktreeConfigOn(gitDir) {
				continue // git does not read it: moved away if made (no entry find would see)
			}
			if f := holdGitMask(gp.Path, dir); f != nil {
				info, err := f.Stat()
				if err != nil {
					f.Close()
					continue
				}
				out = append(out, gitMask{gp.Path, f, info})
				gp.Missing, gp.Masked = false, true
			}
		}
	}
	return out
}

// holdGitMask makes or takes the placeholder at p and locks it shared.
func holdGitMask(p string, dir bool) *os.File {
	for range 8 {
		made := false
		var err error
		if dir {
			err = unix.Mkdir(p, 0o755)
		} else {
			var fd int
			fd, err = unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
			if err == nil {
				unix.Close(fd)
			}
		}
		switch {
		case err == nil:
			made = true
			if err := os.Chtimes(p, gitMaskTime, gitMaskTime); err != nil {
				os.Remove(p)
				return nil
			}
		case !errors.Is(err, unix.EEXIST):
			return nil
		}
		if !made && !isGitMask(p, dir) {
			if st, err := os.Lstat(p); err == nil && time.Since(st.ModTime()) < time.Second {
				// Perhaps another run's, made a moment ago and not marked yet.
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return nil // the user's entry: held read-only as it is
		}
		flags := os.O_RDONLY | unix.O_NOFOLLOW
		if dir {
			flags |= unix.O_DIRECTORY
		}
		f, err := os.OpenFile(p, flags, 0)
		if err != nil {
			continue // removed by the run that held it last: make it again
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil {
			f.Close()
			return nil
		}
		// The last holder may have removed it between the open and the lock.
		if sameFile(f, p) && isGitMask(p, dir) {
			return f
		}
		f.Close()
	}
	return nil
}

// releaseGitMasks drops the run's hold on each placeholder and removes
// those no other run holds that are still untouched.
func releaseGitMasks(masks []gitMask) {
	for _, m := range masks {
		if unix.Flock(int(m.f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			st, err := m.f.Stat()
			if err == nil && sameFile(m.f, m.path) && isGitMask(m.path, st.IsDir()) {
				os.Remove(m.path)
			}
		}
		m.f.Close()
	}
}

// isGitMask says whether p is an untouched placeholder: an empty directory
// or file carrying the mark.
func isGitMask(p string, dir bool) bool {
	st, err := os.Lstat(p)
	if err != nil || !st.ModTime().Equal(gitMaskTime) {
		return false
	}
	if !dir {
		return st.Mode().IsRegular() && st.Size() == 0
	}
	if !st.IsDir() {
		return false
	}
	entries, err := os.ReadDir(p)
	return err == nil && len(entries) == 0
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

// worktreeConfigOn says whether the git dir's config sets
// extensions.worktreeConfig, with which git reads config.worktree.
func worktreeConfigOn(gitDir string) bool {
	data, err := os.ReadFile(filepath.Join(gitDir, "config"))
	if err != nil {
		return false
	}
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Trim(line, "[] \t"))
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || section != "extensions" || !strings.EqualFold(strings.TrimSpace(k), "worktreeconfig") {
			continue
		}
		switch strings.ToLower(strings.Trim(strings.TrimSpace(v), `"`)) {
		case "true", "yes", "on", "1":
			return true
		}
	}
	return false
}

// untouchedMask says whether p is a git dir's placeholder (any run's)
// still empty and marked: nothing the command made, and nothing git would
// obey.
func untouchedMask(p string) bool {
	dir, ok := gitMasked[filepath.Base(p)]
	return ok && isGitMask(p, dir)
}
