package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func sandboxName() string { return "linux" }

// nsState remembers that this kernel refused the namespaces, so later runs go
// straight to the fallback.
var nsState struct {
	sync.Mutex
	unavailable error
}

// noNamespacesForTest forces the namespace-less fallback in tests.
var noNamespacesForTest bool

// namespacesUsable says whether a sandboxed run tries namespaces: not once
// the kernel has refused them.
func namespacesUsable() bool {
	nsState.Lock()
	defer nsState.Unlock()
	return nsState.unavailable == nil && !noNamespacesForTest
}

const nsFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC

// launch starts the helper, which builds the sandbox and starts the command.
func (p *Process) launch(c Command, path string, env []string) error {
	helper := c.Helper
	spec := helperSpec{
		Path: path, Argv: c.Argv, Cwd: c.Cwd, Mode: c.Policy.mode(), Network: c.Policy.Network,
		FileSize: c.Limits.FileSize, Processes: c.Limits.Processes,
	}
	if spec.FileSize == 0 {
		spec.FileSize = 8 << 30
	}
	if spec.Processes == 0 {
		spec.Processes = 1024
	}

	useNS := false
	if c.Policy.Sandboxed() {
		roots, err := p.writableRoots(c.Policy)
		if err != nil {
			return refuse("%v", err)
		}
		spec.Roots = roots
		if spec.Secrets, err = c.Policy.HiddenPaths(roots); err != nil {
			return err
		}
		if err := checkCwd(c.Cwd, spec.Secrets); err != nil {
			return err
		}
		p.secrets = secretNames(c.Policy, spec.Secrets)
		if spec.Readable = c.Policy.RestrictedReadable(); spec.Readable != nil {
			if Probe().LandlockABI < 1 {
				return refuse("read_access \"restricted\" needs Landlock, which this kernel lacks; use \"deny-secrets\"")
			}
			// Only what the command can read at all needs a mask.
			spec.Secrets = reachable(spec.Secrets, append(slices.Clone(spec.Readable), rootPaths(roots)...))
		}
		useNS = namespacesUsable()
		if !useNS {
			if err := readsNeedNamespaces(c.Policy, spec.Secrets); err != nil {
				return err
			}
		}
		probe := Probe()
		if probe.LandlockABI < 1 && !useNS {
			return refuse("this kernel has neither user namespaces nor Landlock, so the filesystem policy cannot be enforced; run with --sandbox danger-full-access only if you accept no sandbox")
		}
		if !probe.Seccomp {
			return refuse("this kernel has no seccomp filter support (CONFIG_SECCOMP_FILTER), so the syscall policy cannot be enforced")
		}
		spec.Layers = layers{Namespaces: useNS, Landlock: probe.LandlockABI >= 1, Seccomp: true, DropCaps: true}
		spec.MediateSockets = mediateFor(spec.Layers)
	}

	for attempt := 0; ; attempt++ {
		err := p.startHelper(helper, spec, env)
		if err == nil {
			break
		}
		var refused *RefusedError
		if spec.Layers.Namespaces && attempt == 0 && isNamespaceError(err) && !errors.As(err, &refused) {
			// The kernel (or a container around us) refuses the namespaces:
			// fall back to Landlock + seccomp and say what that loses.
			nsState.Lock()
			nsState.unavailable = err
			nsState.Unlock()
			if Probe().LandlockABI < 1 {
				return refuse("user namespaces are unavailable (%v) and Landlock is missing: the filesystem policy cannot be enforced", err)
			}
			if err := readsNeedNamespaces(c.Policy, spec.Secrets); err != nil {
				return err
			}
			spec.Layers.Namespaces = false
			spec.MediateSockets = false
			continue
		}
		return err
	}
	if spec.Layers.Namespaces {
		p.kind = "linux"
	} else if c.Policy.Sandboxed() {
		p.kind = "linux-landlock"
		p.gaps = fallbackGaps(c.Policy)
	} else {
		p.kind = "none"
	}
	return nil
}

func isNamespaceError(err error) bool {
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSPC) ||
		errors.Is(err, unix.EUSERS) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOSYS)
}

// fallbackGaps says exactly what Landlock + seccomp without namespaces leave
// open, for the run's result and for doctor.
func fallbackGaps(p Policy) []string {
	gaps := []string{
		"protected paths (.git, .warden, .vscode, ...) inside writable roots are writable: Landlock cannot exempt a subdirectory",
		"chmod, chown and utime work on files outside the writable roots: Landlock does not cover them",
		"pathname unix sockets outside the sandbox (docker.sock, D-Bus, tmux) can be connected to: Landlock ABI < 9 does not cover them",
		"other processes of the same user are visible in /proc (no pid namespace); orphans are reaped by the helper as subreaper, which the command could kill",
	}
	if p.readAccess() != ReadFull {
		gaps = append(gaps, "the read policy's credential stores were not present at start: one created during the run would be readable (hiding needs a mount namespace)")
	}
	if !p.Network {
		gaps = append(gaps, "network: no network namespace; socket families other than AF_UNIX are blocked by seccomp and TCP by Landlock")
	}
	return gaps
}

func (p *Process) startHelper(helper string, spec helperSpec, env []string) error {
	key := spareKey{helper: helper, namespaced: spec.Layers.Namespaces, network: spec.Network}
	var repos func([]Root)
	if spec.Layers.Namespaces {
		// The scan for nested repositories, the longest of the set-up in a
		// large /tmp, runs while the helper starts and the sockets are found.
		repos = startRepoScan(spec.Roots, env)
	}
	h, spare := spares.take(key), true
	if h == nil {
		// Start the helper first: the launcher's share of the set-up below
		// runs while the helper starts.
		var err error
		if h, err = spawnHelper(key); err != nil {
			return err
		}
		spare = false
	}
	ph, raw, err := finishSpec(spec, env, repos)
	if err != nil {
		h.kill()
		return err
	}
	err = h.start(raw)
	if err != nil && spare && h.status.silent {
		// The spare died while it waited: start afresh.
		h.kill()
		if h, err = spawnHelper(key); err == nil {
			err = h.start(raw)
		}
	}
	if err != nil {
		if h != nil {
			h.kill()
		}
		ph.release()
		return err
	}
	p.cmd, p.status = h.cmd, h.status
	p.namespaced = spec.Layers.Namespaces
	p.outputs = startCopying(p.cap, h.stdout, h.stderr)
	p.cleanup = func() {
		ph.release()
		// Start the next spare once this command is done, so a short
		// command does not share the CPU with it.
		spares.fill(key)
	}
	return nil
}

// finishSpec does the launcher's share of the set-up that depends on the
// moment of the run: the unix sockets to mask and the placeholders for
// missing protected paths. It returns the spec as the helper reads it.
func finishSpec(spec helperSpec, env []string, repos func([]Root)) (*placeholders, []byte, error) {
	var ph *placeholders
	if spec.Layers.Namespaces {
		var err error
		if spec.MediateSockets {
			// The supervisor decides every connect: nothing to mask.
		} else if spec.Sockets, spec.Hidden, err = socketsToMask(env, spec.Cwd, spec.Roots); err != nil {
			return nil, nil, err
		}
		repos(spec.Roots)
		splitGitDirs(spec.Roots)
		if ph, err = makePlaceholders(spec.Roots); err != nil {
			return nil, nil, err
		}
	}
	spec.Env = env
	raw, err := json.Marshal(spec)
	if err != nil {
		ph.release()
		return nil, nil, err
	}
	return ph, raw, nil
}

// helperProc is a started helper: cold, or a spare started ahead of need.
type helperProc struct {
	cmd            *exec.Cmd
	specW          *os.File
	status         *helperStatus
	stdout, stderr *os.File // read ends of the command's output
}

// spawnHelper starts a helper for key. It runs the part of the set-up no
// command decides on, then waits for its spec on fd 4.
func spawnHelper(key spareKey) (*helperProc, error) {
	var pipes [4][2]*os.File // spec, status, stdout, stderr: read, write
	closeAll := func() {
		for _, pp := range pipes {
			for _, f := range pp {
				if f != nil {
					f.Close()
				}
			}
		}
	}
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("sandbox helper pipes: %w", err)
		}
		pipes[i] = [2]*os.File{r, w}
	}
	specR, specW := pipes[0][0], pipes[0][1]
	statusR, statusW := pipes[1][0], pipes[1][1]
	exe, err := pinnedHelper(key.helper)
	if err != nil {
		closeAll()
		return nil, err
	}
	name := key.helper
	if name == "" {
		name = "warden"
	}
	cmd := &exec.Cmd{Path: exe, Args: append([]string{name}, helperArgs(key)...)}
	// The helper's own environment: one thread of Go scheduler and no
	// garbage collector make it start faster. The command gets its
	// environment from the spec.
	cmd.Env = []string{"GOMAXPROCS=1", "GOGC=off"}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = pipes[2][1], pipes[3][1]
	cmd.ExtraFiles = []*os.File{statusW, specR}
	if diag := hostSockDiag(key); diag != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, diag) // hostDiagFD
		defer diag.Close()
	}
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if key.namespaced {
		attr.Cloneflags = nsFlags
		if !key.network {
			attr.Cloneflags |= unix.CLONE_NEWNET
		}
		uid, gid := os.Getuid(), os.Getgid()
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.GidMappingsEnableSetgroups = false
		// exec gives a non-root uid no capabilities, even in its own user
		// namespace: carry the two the helper needs across it as ambient
		// capabilities (it drops every capability before the command runs).
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		closeAll()
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("start the sandbox helper %s: %w", name, err)
		}
		return nil, fmt.Errorf("start the sandbox helper: %w", err)
	}
	// The helper holds the other ends now.
	for _, f := range []*os.File{specR, statusW, pipes[2][1], pipes[3][1]} {
		f.Close()
	}
	return &helperProc{cmd: cmd, specW: specW, status: newHelperStatus(statusR),
		stdout: pipes[2][0], stderr: pipes[3][0]}, nil
}

// start sends the spec and waits until the command has started.
func (h *helperProc) start(spec []byte) error {
	// A large environment may not fit the pipe's buffer: write while the
	// helper reads.
	go func(w *os.File) {
		w.Write(spec)
		w.Close()
	}(h.specW)
	return h.status.waitReady()
}

// pinnedHelpers hold the helper binaries open from their first use.
var pinnedHelpers = struct {
	sync.Mutex
	files map[string]*os.File
}{files: map[string]*os.File{}}

// pinnedHelper returns a path to exec the helper binary by (helper, or this
// process's own binary for ""): /proc/self/fd/N of a descriptor opened on
// first use. A sandboxed command may write where the binary lives (a
// workspace, /tmp, a home directory opened as the workspace); a binary it
// renamed over the path is not what the next helper runs. For this
// process's own binary the running inode is taken, not the path, and it
// cannot be written in place while it runs (ETXTBSY).
func pinnedHelper(helper string) (string, error) {
	pinnedHelpers.Lock()
	defer pinnedHelpers.Unlock()
	f := pinnedHelpers.files[helper]
	if f == nil {
		src := helper
		if src == "" {
			src = "/proc/self/exe"
		}
		fd, err := unix.Open(src, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", fmt.Errorf("open the sandbox helper %s: %w", src, err)
		}
		// Above the descriptors a child is given (stdio, status, spec), so
		// setting those up in the child cannot replace it before exec.
		high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 100)
		unix.Close(fd)
		if err != nil {
			return "", fmt.Errorf("keep the sandbox helper %s open: %w", src, err)
		}
		f = os.NewFile(uintptr(high), src)
		pinnedHelpers.files[helper] = f
	}
	return "/proc/self/fd/" + strconv.Itoa(int(f.Fd())), nil
}

// kill ends a helper that will not run a command, and reaps it.
func (h *helperProc) kill() {
	h.specW.Close()
	h.cmd.Process.Kill()
	h.status.r.Close()
	h.stdout.Close()
	h.stderr.Close()
	go h.cmd.Wait()
}

// killTree ends the command and everything it started. In a pid namespace
// the command is its init: killing it makes the kernel kill the rest.
// Without one, the helper (a subreaper) kills its descendants on SIGTERM.
func (p *Process) killTree() {
	if p.namespaced {
		p.cmd.Process.Kill()
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	go func() {
		select {
		case <-p.done:
		case <-time.After(2 * time.Second):
			p.cmd.Process.Kill()
		}
	}()
}

// placeholderMode marks the empty entries Warden creates as mount points for
// protected paths that do not exist, so cleanup can tell them from the
// user's own files.
const placeholderMode = 0o000

// placeholders are the mount points for missing protected paths. A mount
// point is the only way to stop a name from being created, so each missing
// protected path gets an empty, mode-000 entry that the helper masks
// read-only.
//
// Removing a former mount point costs the kernel an RCU grace period (a few
// milliseconds each), so placeholders outlive a run: this process holds a
// shared flock on each writable root while it uses it, and a janitor removes
// the placeholders once the root has been idle for placeholderIdle, and only
// if it can upgrade to an exclusive lock, that is, when no other process has
// a run there. No run ever loses its mask while it runs. FlushPlaceholders
// cleans up at once (warden exec calls it before exiting); placeholders a
// crashed process leaves behind are taken over by the next run's janitor.
type placeholders struct {
	roots []*rootUse
}

const placeholderIdle = 2 * time.Second

// rootUse is this process's hold on one writable root.
type rootUse struct {
	root  Root
	lock  *os.File // shared flock, held while the root is in use or warm
	runs  int
	timer *time.Timer
}

var rootUses = struct {
	sync.Mutex
	m map[string]*rootUse
}{m: map[string]*rootUse{}}

func makePlaceholders(roots []Root) (*placeholders, error) {
	rootUses.Lock()
	defer rootUses.Unlock()
	ph := &placeholders{}
	for _, r := range roots {
		u := rootUses.m[r.Path]
		if u == nil {
			f, err := lockShared(r.Path)
			if err != nil {
				ph.releaseLocked()
				return nil, err
			}
			u = &rootUse{root: r, lock: f}
			rootUses.m[r.Path] = u
		}
		u.root = r // a gitdir: target may have changed
		if u.timer != nil {
			u.timer.Stop()
			u.timer = nil
		}
		u.runs++
		ph.roots = append(ph.roots, u)
	}
	// The roots' placeholders are made all at once (a few system calls per
	// protected name). A name two nested roots share is made once: the
	// other finds it there.
	errs := make([]error, len(roots))
	var wg sync.WaitGroup
	for i, r := range roots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ensurePlaceholders(r)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			ph.releaseLocked()
			return nil, err
		}
	}
	return ph, nil
}

func ensurePlaceholders(r Root) error {
	for _, p := range r.Protected {
		if !within(r.Path, p) {
			continue // a gitdir target elsewhere: read-only already, or not there
		}
		point, missing := maskPoint(r.Path, p)
		if !missing {
			st, err := os.Lstat(point)
			if err == nil && st.Mode()&os.ModeSymlink != 0 {
				return refuse("protected path %s is a symbolic link; Warden cannot keep it read-only (replace it with the directory or file itself)", point)
			}
			continue
		}
		// The name itself gets an entry of its kind; a missing parent of a
		// deeper protected path (~/.config of ~/.config/warden) a directory.
		if point == p && protectedFiles[filepath.Base(p)] {
			f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, placeholderMode)
			if err == nil {
				f.Close()
			} else if !os.IsExist(err) {
				return refuse("cannot protect %s: %v", p, err)
			}
			continue
		}
		if err := os.Mkdir(point, placeholderMode); err != nil && !os.IsExist(err) {
			return refuse("cannot protect %s: %v", p, err)
		}
	}
	for _, g := range r.Git {
		if !g.IsMask {
			if st, err := os.Lstat(g.Path); err == nil && st.Mode()&os.ModeSymlink != 0 && !g.Writable {
				return refuse("%s is a symbolic link; Warden cannot keep it read-only (replace it with the file itself)", g.Path)
			}
			continue
		}
		if err := makeGitMask(g.Path, g.Mask); err != nil && !os.IsExist(err) {
			return refuse("cannot protect %s: %v", g.Path, err)
		}
	}
	return nil
}

func lockShared(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, refuse("open writable root: %v", err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, refuse("writable root %s is locked by another process (%v); cannot set up its protected paths", dir, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// release ends this run's use of its roots; idle roots are cleaned later.
func (ph *placeholders) release() {
	if ph == nil {
		return
	}
	rootUses.Lock()
	defer rootUses.Unlock()
	ph.releaseLocked()
}

func (ph *placeholders) releaseLocked() {
	for _, u := range ph.roots {
		u.runs--
		if u.runs == 0 {
			u := u
			u.timer = time.AfterFunc(placeholderIdle, func() {
				rootUses.Lock()
				defer rootUses.Unlock()
				if u.runs == 0 && rootUses.m[u.root.Path] == u {
					u.cleanup()
				}
			})
		}
	}
	ph.roots = nil
}

// cleanup removes the root's placeholders if no other process uses the root,
// and drops this process's lock. Called with rootUses held.
func (u *rootUse) cleanup() {
	if u.timer != nil {
		u.timer.Stop()
	}
	if unix.Flock(int(u.lock.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
		// Each removal of a former mount point waits for an RCU grace
		// period: remove them all at once, so the waits overlap.
		var wg sync.WaitGroup
		for _, p := range u.root.Protected {
			if within(u.root.Path, p) {
				point, missing := maskPoint(u.root.Path, p)
				if !missing && IsPlaceholder(point) {
					wg.Add(1)
					go func() {
						defer wg.Done()
						removePlaceholder(point)
					}()
				}
			}
		}
		for _, g := range u.root.Git {
			if g.IsMask {
				wg.Add(1)
				go func() {
					defer wg.Done()
					removeGitMask(g.Path)
				}()
			}
		}
		wg.Wait()
	}
	u.lock.Close()
	delete(rootUses.m, u.root.Path)
}

// FlushPlaceholders removes at once the placeholders of every root no run
// is using. A short-lived process calls it before it exits.
func FlushPlaceholders() {
	rootUses.Lock()
	defer rootUses.Unlock()
	for _, u := range rootUses.m {
		if u.runs == 0 {
			u.cleanup()
		}
	}
}

// IsPlaceholder reports whether p is an entry Warden made as a mount point
// for a missing protected path (an empty mode-000 file or directory), not
// the user's: a .git placeholder does not make a project root.
func IsPlaceholder(p string) bool {
	st, err := os.Lstat(p)
	if err != nil || st.Mode().Perm() != placeholderMode {
		return false
	}
	return st.IsDir() || (st.Mode().IsRegular() && st.Size() == 0)
}

// removePlaceholder removes p if it is still a placeholder.
func removePlaceholder(p string) {
	if IsPlaceholder(p) {
		os.Remove(p) // a directory that is not empty stays
	}
}
