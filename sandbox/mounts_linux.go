package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// devices are bound from the host into the sandbox's fresh /dev.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// buildMountView turns the helper's copy of the mount tree into the
// sandbox's view: everything read-only and nosuid, the writable roots
// writable, their protected subpaths read-only again (placeholders masked
// too, so they cannot be removed and recreated), existing unix sockets
// outside masked, a fresh /proc for the new pid namespace and a minimal /dev.
func buildMountView(spec *helperSpec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	// Take the device nodes before a tmpfs covers /dev.
	devFDs := map[string]int{}
	for _, d := range devices {
		fd, err := unix.OpenTree(unix.AT_FDCWD, "/dev/"+d, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			if d == "tty" {
				continue
			}
			return fmt.Errorf("clone /dev/%s: %w", d, err)
		}
		devFDs[d] = fd
	}
	sockets := findSockets(spec.Env)

	for _, r := range spec.Roots {
		if err := bind(r.Path, r.Path); err != nil {
			return err
		}
	}
	var protected []string
	for _, r := range spec.Roots {
		for _, p := range r.Protected {
			if _, err := os.Lstat(p); err != nil {
				if filepath.Dir(p) == r.Path {
					// The launcher made a placeholder here; without it the
					// name could be created unmasked. Refuse, never skip.
					return fmt.Errorf("protected path %s vanished before it could be masked: %w", p, err)
				}
				continue // inside a gitdir target: nothing there to protect
			}
			if err := bind(p, p); err != nil {
				return err
			}
			protected = append(protected, p)
		}
	}
	for _, s := range sockets {
		// connect() ignores read-only mounts, so cover the socket itself.
		err := unix.Mount("/dev/null", s, "", unix.MS_BIND, "")
		if errors.Is(err, unix.ENOENT) {
			// Its server went away after the scan: there is nothing left to
			// reach there, as with any socket created after this point.
			continue
		}
		if err != nil {
			return fmt.Errorf("mask socket %s: %w", s, err)
		}
	}

	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount a fresh /proc: %w", err)
	}
	limitPids(spec.Processes)
	if err := buildDev(devFDs); err != nil {
		return err
	}

	all := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, all); err != nil {
		return fmt.Errorf("make / read-only: %w", err)
	}
	writable := append([]string{"/dev/shm", "/dev/pts"}, rootPaths(spec.Roots)...)
	for _, w := range writable {
		if err := unix.MountSetattr(unix.AT_FDCWD, w, unix.AT_RECURSIVE, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
			// A mount under the root that the host made read-only stays so.
			if err := unix.MountSetattr(unix.AT_FDCWD, w, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
				return fmt.Errorf("make %s writable: %w", w, err)
			}
		}
	}
	for _, p := range protected {
		if err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE|unix.AT_SYMLINK_NOFOLLOW, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	// The old working directory is under the mounts now; enter the new view.
	if err := unix.Chdir(spec.Cwd); err != nil {
		return fmt.Errorf("enter %s: %w", spec.Cwd, err)
	}
	return nil
}

func bind(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", dst, err)
	}
	return nil
}

func rootPaths(roots []Root) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = r.Path
	}
	return out
}

// buildDev mounts a small tmpfs on /dev with the basic devices, a private
// devpts and a private /dev/shm.
func buildDev(devFDs map[string]int) error {
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, d := range devices {
		fd, ok := devFDs[d]
		if !ok {
			continue
		}
		target := "/dev/" + d
		f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
		if err != nil {
			return fmt.Errorf("create %s: %w", target, err)
		}
		f.Close()
		if err := unix.MoveMount(fd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("mount %s: %w", target, err)
		}
		unix.Close(fd)
	}
	for name, target := range map[string]string{
		"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
		"stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx",
	} {
		if err := os.Symlink(target, "/dev/"+name); err != nil {
			return err
		}
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount /dev/pts: %w", err)
	}
	if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=64m"); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	return nil
}

// serviceSocketDirs are the /tmp subdirectories where services keep their
// sockets (X11, ICE, tmux, ssh-agent, screen, editors, D-Bus, PulseAudio).
var serviceSocketDirs = []string{".X11-unix", ".ICE-unix", ".font-unix", "tmux-*", "ssh-*", "screen*", "S-*",
	"nvim*", "emacs*", "kitty*", "wezterm*", "dbus-*", "pulse-*"}

// findSockets lists the unix sockets a sandboxed command must not reach:
// everything under /run (docker.sock, D-Bus, systemd) and
// $XDG_RUNTIME_DIR, sockets at the top of /tmp and $TMPDIR and in the
// service directories there, those in ~/.ssh, ~/.gnupg and ~/.docker, and
// the ones the environment points at ($SSH_AUTH_SOCK, $TMUX, $NVIM,
// $DOCKER_HOST, $DBUS_SESSION_BUS_ADDRESS). A full walk of /tmp would cost
// every command tens of milliseconds; doctor says what this leaves open.
func findSockets(env []string) []string {
	seen := map[string]bool{}
	var out []string
	budget := 5000
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	var walk func(dir string, depth int, match func(string) bool)
	walk = func(dir string, depth int, match func(string) bool) {
		f, err := os.Open(dir)
		if err != nil {
			return
		}
		entries, _ := f.ReadDir(-1) // unsorted: cheaper
		f.Close()
		for _, e := range entries {
			if budget--; budget < 0 {
				return
			}
			p := filepath.Join(dir, e.Name())
			switch t := e.Type(); {
			case t&os.ModeSocket != 0:
				add(p)
			case t.IsDir() && depth > 1 && (match == nil || match(e.Name())):
				walk(p, depth-1, nil)
			}
		}
	}
	resolved := func(p string) string {
		if !filepath.IsAbs(p) {
			return ""
		}
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return ""
		}
		return r
	}
	if r := resolved("/run"); r != "" {
		walk(r, 5, nil)
	}
	if r := resolved("/var/run"); r != "" && r != resolved("/run") {
		walk(r, 5, nil)
	}
	if r := resolved(getEnv(env, "XDG_RUNTIME_DIR")); r != "" {
		walk(r, 4, nil)
	}
	isService := func(name string) bool {
		for _, pat := range serviceSocketDirs {
			if ok, _ := filepath.Match(pat, name); ok {
				return true
			}
		}
		return false
	}
	for _, tmp := range []string{"/tmp", getEnv(env, "TMPDIR")} {
		if r := resolved(tmp); r != "" {
			walk(r, 3, isService)
		}
	}
	if home := getEnv(env, "HOME"); home != "" {
		for _, d := range []string{".ssh", ".gnupg", ".docker"} {
			if r := resolved(filepath.Join(home, d)); r != "" {
				walk(r, 3, nil)
			}
		}
	}
	for _, p := range envSocketPaths(env) {
		if st, err := os.Stat(p); err == nil && st.Mode()&os.ModeSocket != 0 {
			add(resolved(p))
		}
	}
	return out
}

// envSocketPaths are the socket paths named by well-known variables.
func envSocketPaths(env []string) []string {
	var out []string
	out = append(out, getEnv(env, "SSH_AUTH_SOCK"), getEnv(env, "NVIM"), getEnv(env, "NVIM_LISTEN_ADDRESS"))
	if t := getEnv(env, "TMUX"); t != "" { // socket,pid,session
		out = append(out, strings.SplitN(t, ",", 2)[0])
	}
	if d, ok := strings.CutPrefix(getEnv(env, "DOCKER_HOST"), "unix://"); ok {
		out = append(out, d)
	}
	for _, part := range strings.Split(getEnv(env, "DBUS_SESSION_BUS_ADDRESS"), ",") {
		if p, ok := strings.CutPrefix(strings.TrimPrefix(part, "unix:"), "path="); ok {
			out = append(out, p)
		}
	}
	return out
}

// limitPids caps the pid numbers of the sandbox's pid namespace (Linux 6.14
// made pid_max per namespace; the kernel's minimum is 301). RLIMIT_NPROC
// does not bind processes whose real user is host root, so for root this is
// what stops a fork bomb. Older kernels refuse the write; RLIMIT_NPROC then
// remains the only bound.
func limitPids(processes int64) {
	if processes <= 0 {
		return
	}
	n := max(processes, 301)
	os.WriteFile("/proc/sys/kernel/pid_max", []byte(strconv.FormatInt(n, 10)), 0)
}
