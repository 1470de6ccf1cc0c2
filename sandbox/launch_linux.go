package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/guard"
	"github.com/wardenhq/warden/sandbox/linux"
	"github.com/wardenhq/warden/sandbox/protect"
)

func sandboxName() string { return "linux" }

// launchWaitsReady: on Linux the helper prepares the sandbox while Ready
// runs, and starts the command only on the launcher's go, sent once Ready
// has returned (helperProc.start).
const launchWaitsReady = true

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
	spec := linux.Spec{
		Path: path, Argv: c.Argv, Cwd: c.Cwd, Mode: string(c.Policy.mode()), Network: linux.Network(c.Policy.network()),
		FileSize: c.Limits.FileSize, Processes: c.Limits.Processes,
	}
	if spec.FileSize == 0 {
		spec.FileSize = 8 << 30
	}
	if spec.Processes == 0 {
		spec.Processes = 1024
	}

	useNS := false
	plainEnv := env // without the proxy variables, should ask fall back to off
	if c.Policy.Sandboxed() {
		roots, err := p.writableRoots(c.Policy)
		if err != nil {
			return refuse("%v", err)
		}
		spec.Roots = roots
		if spec.Secrets, err = c.Policy.hiddenPaths(roots, p.memo); err != nil {
			return err
		}
		if err := checkCwd(c.Cwd, spec.Secrets, p.memo); err != nil {
			return err
		}
		p.secrets = secretNames(c.Policy, spec.Secrets)
		if spec.Readable = c.Policy.RestrictedReadable(); spec.Readable != nil {
			if linux.Probe().LandlockABI < 1 {
				return refuse("read_access \"restricted\" needs Landlock, which this kernel lacks; use \"deny-secrets\"")
			}
			// Only what the command can read at all needs a mask.
			spec.Secrets = reachable(spec.Secrets, append(slices.Clone(spec.Readable), linux.RootPaths(roots)...))
		}
		p.guardCfg = protect.GuardConfig{Dir: c.Policy.quarantineDir(), Cwd: c.Cwd, Nested: nestedRoots(roots, c.Policy, p.memo), Memo: p.memo}
		useNS = namespacesUsable()
		if !useNS {
			if err := readsWithoutNamespaces(c.Policy, spec.Roots, spec.Secrets); err != nil {
				return err
			}
		}
		probe := linux.Probe()
		if probe.LandlockABI < 1 && !useNS {
			return refuse("this kernel has neither user namespaces nor Landlock, so the filesystem policy cannot be enforced; run with --sandbox danger-full-access only if you accept no sandbox")
		}
		if !probe.Seccomp {
			return refuse("this kernel has no seccomp filter support (CONFIG_SECCOMP_FILTER), so the syscall policy cannot be enforced")
		}
		spec.Layers = linux.Layers{Namespaces: useNS, Landlock: probe.LandlockABI >= 1, Seccomp: true, DropCaps: true}
		if useNS && p.layers != nil {
			readable := spec.Readable
			if readable != nil {
				readable = append(slices.Clone(readable), linux.RootPaths(spec.Roots)...)
			}
			spec.CacheLayers = readableLayers(p.layers.Layers, spec.Secrets, readable)
		}
		if !useNS && spec.Network == linux.NetworkAsk {
			env = p.askFallsBackToOff(&spec, env)
		}
		plainEnv = env
		if env, err = p.askNetwork(c, spec, env); err != nil {
			return err
		}
		spec.MediateSockets = linux.MediateFor(spec.Layers)
		if c.Record != nil {
			if !RecordsWrites(c.Policy) {
				return refuse("this kernel cannot report a sandboxed command's changes as they happen (seccomp user notification)")
			}
			spec.RecordRoots, p.record = c.Record.Roots, c.Record
		}
	}

	for attempt := 0; ; attempt++ {
		err := p.startHelper(helper, spec, env)
		if err == nil {
			break
		}
		var refused *RefusedError
		if errors.As(err, &refused) && strings.Contains(refused.Reason, linux.Vanished) && attempt < 3 {
			// Looked at again, past the memo of the first look: now
			// missing, and watched.
			p.guardCfg.Memo = pathmemo.New()
			continue
		}
		if spec.Layers.Namespaces && attempt == 0 && isNamespaceError(err) && !errors.As(err, &refused) {
			// The kernel (or a container around us) refuses the namespaces:
			// fall back to Landlock + seccomp and say what that loses.
			nsState.Lock()
			nsState.unavailable = err
			nsState.Unlock()
			if linux.Probe().LandlockABI < 1 {
				return refuse("user namespaces are unavailable (%v) and Landlock is missing: the filesystem policy cannot be enforced", err)
			}
			if err := readsWithoutNamespaces(c.Policy, spec.Roots, spec.Secrets); err != nil {
				return err
			}
			if spec.Network == linux.NetworkAsk {
				env = p.askFallsBackToOff(&spec, plainEnv)
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
		p.gaps = fallbackGaps(c.Policy, p.askFellBack)
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
func fallbackGaps(p Policy, askFellBack bool) []string {
	var gaps []string
	if askFellBack {
		gaps = append(gaps, AskFallbackGap)
	}
	gaps = append(gaps,
		"protected paths (.git, .warden, .vscode, ...) inside writable roots are writable: Landlock cannot exempt a subdirectory",
		"chmod, chown and utime work on files outside the writable roots: Landlock does not cover them",
		"pathname unix sockets outside the sandbox (docker.sock, D-Bus, tmux) can be connected to: Landlock ABI < 9 does not cover them",
		"other processes of the same user are visible in /proc (no pid namespace); orphans are reaped by the helper as subreaper, which the command could kill",
	)
	if p.readAccess() != ReadFull {
		gaps = append(gaps, "the read policy hides its credential stores by Landlock rules made at start around those present: one created during the run may be readable, the names inside a hidden directory can be listed, and an entry created during the run in a directory on the way to one (such as the home directory) cannot be read (hiding them as with namespaces needs a mount namespace)")
	}
	if p.network() == NetworkOff || askFellBack {
		gaps = append(gaps, "network: no network namespace; socket families other than AF_UNIX are blocked by seccomp and TCP by Landlock")
	}
	return gaps
}

func (p *Process) startHelper(helper string, spec linux.Spec, env []string) error {
	key := spareKey{helper: helper, namespaced: spec.Layers.Namespaces, network: spec.Network}
	var repos func([]protect.Root) protect.Scanned
	if spec.Layers.Namespaces {
		// The scan for nested repositories, the longest of the set-up in a
		// large /tmp, runs while the helper starts and the sockets are found.
		// A process that keeps its helpers keeps an index of the workspace
		// roots instead (treeindex_linux.go).
		var indexed map[string]bool
		if keepingSpares() {
			indexed = p.guardCfg.Nested
		}
		repos = protect.StartRepoScan(spec.Roots, env, indexed)
	}
	h, spare := spares.take(key), true
	if h == nil {
		h = takeEarly(key) // PrepareRun's, if any
	}
	if h == nil {
		// Start the helper first: the launcher's share of the set-up below
		// runs while the helper starts.
		var err error
		if h, err = spawnHelper(key); err != nil {
			return err
		}
		spare = false
	}
	g, cutGaps, raw, err := finishSpec(spec, env, repos, p.guardCfg)
	if err != nil {
		h.kill()
		return err
	}
	// The helper builds the sandbox while the guard's watches take hold;
	// the command starts once both they and the caller are ready.
	ready := func() error {
		g.WaitArmed()
		return p.waitReady()
	}
	p.serveRecord(h)
	err = h.start(raw, ready)
	if err != nil && spare && h.status.silent {
		// The spare died while it waited: start afresh.
		h.kill()
		if h, err = spawnHelper(key); err == nil {
			p.serveRecord(h)
			err = h.start(raw, ready)
		}
	}
	if err != nil {
		if h != nil {
			h.kill()
		}
		g.Stop()
		return err
	}
	if h.forward != nil {
		err := errors.New("no proxy for this run")
		if p.proxy != nil {
			err = receiveForwarded(h.forward, p.proxy)
		}
		if err != nil {
			h.kill()
			g.Stop()
			return refuse("network ask: %v", err)
		}
		h.forward = nil
	}
	p.cmd, p.status = h.cmd, h.status
	p.namespaced = spec.Layers.Namespaces
	p.outputs = startCopying(p.cap, h.stdout, h.stderr)
	if g != nil {
		p.protect = func() []Removed {
			removed, gaps := g.Finish(afterReport)
			p.gaps = append(p.gaps, gaps...)
			return removed
		}
		if gap := g.Gap(); gap != "" {
			p.gaps = append(p.gaps, gap)
		}
		p.gaps = append(p.gaps, cutGaps...)
	}
	p.cleanup = func() {
		// Start the next spare once this command is done and reported,
		// so neither shares the CPU with it.
		spares.fillAfterReport(key)
	}
	return nil
}

// finishSpec does the launcher's share of the set-up that depends on the
// moment of the run: the unix sockets to mask, and the guard of the missing
// protected paths, whose watches take hold in the background (the command
// starts only after Guard.WaitArmed). It returns the guard, what the
// repository scan's bounds left unchecked, and the spec as the helper reads
// it.
func finishSpec(spec linux.Spec, env []string, repos func([]protect.Root) protect.Scanned, gc protect.GuardConfig) (g *guard.Guard, cutGaps []string, raw []byte, err error) {
	if spec.Layers.Namespaces {
		if spec.MediateSockets {
			// The supervisor decides every connect: nothing to mask.
		} else if spec.Sockets, spec.Hidden, err = socketsToMask(env, spec.Cwd, spec.Roots); err != nil {
			return nil, nil, nil, err
		}
		s := repos(spec.Roots)
		gc.Indexed, gc.Before = s.Indexed, s.Before
		protect.SplitGitDirs(spec.Roots)
		if g, err = guard.Start(spec.Roots, gc); err != nil {
			return nil, nil, nil, refuse("%v", err)
		}
		cutGaps = protect.CutGaps(spec.Roots, gc.Indexed)
	}
	spec.Env = env
	spec.Roots = helperRoots(spec.Roots)
	if raw, err = json.Marshal(spec); err != nil {
		g.Stop()
		return nil, nil, nil, err
	}
	return g, cutGaps, raw, nil
}

// helperRoots is what the helper needs of roots: it mounts nothing at a
// missing protected path, so those are left out. In a workspace that has
// few of the protected names that is most of the list, and a shorter spec
// is decoded sooner by a helper on the run's path.
func helperRoots(roots []protect.Root) []protect.Root {
	out := slices.Clone(roots)
	for i := range out {
		r := &out[i]
		if len(r.Missing) > 0 {
			missing := r.Missing
			r.Protected = slices.DeleteFunc(slices.Clone(r.Protected), func(p string) bool { return slices.Contains(missing, p) })
			r.Missing = nil
		}
	}
	return out
}

// nestedRoots are the roots whose new .git entries one and two levels down
// are moved away after a run: not /tmp and $TMPDIR, where everyone's tests
// and tools make repositories at any moment, nor the toolchain caches.
func nestedRoots(roots []protect.Root, pol Policy, m *pathmemo.Memo) map[string]bool {
	out := map[string]bool{}
	set := pol.cacheSetWith(m)
	if set != "" {
		set = m.ResolveExisting(set)
	}
	for _, r := range roots {
		if !protect.IsScratch(r.Path) && (set == "" || !pathutil.Within(set, r.Path)) {
			out[r.Path] = true
		}
	}
	return out
}

// helperProc is a started helper: cold, or a spare started ahead of need.
type helperProc struct {
	cmd            *exec.Cmd
	specW          *os.File
	status         *helperStatus
	stdout, stderr *os.File // read ends of the command's output
	forward        *os.File // the launcher's end of the forwarding socketpair (NetworkAsk)
	record         *os.File // the launcher's end of the record socket
}

// spawnHelper starts a helper for key. It runs the part of the set-up no
// command decides on, then waits for its spec on fd 4.
func spawnHelper(key spareKey) (*helperProc, error) { return spawnWith(key, nil) }

// spawnWith starts a helper for key that also inherits group, a descriptor
// it keeps open until this process is gone (nil: none; see holdGroup).
func spawnWith(key spareKey, group *os.File) (*helperProc, error) {
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
	var forward, forwardHelper *os.File
	if key.network == linux.NetworkAsk {
		if forward, forwardHelper, err = forwardPair(); err != nil {
			closeAll()
			return nil, err
		}
		cmd.ExtraFiles = append(cmd.ExtraFiles, forwardHelper) // forwardFD
	}
	if diag := hostSockDiag(key); diag != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, diag) // hostDiagFD(key.network)
		defer diag.Close()
	}
	// After the descriptors the helper knows by number: the record
	// socket, named in its environment.
	record, recordHelper, err := recordPair()
	if err != nil {
		closeAll()
		if forward != nil {
			forward.Close()
			forwardHelper.Close()
		}
		return nil, err
	}
	defer recordHelper.Close()
	cmd.ExtraFiles = append(cmd.ExtraFiles, recordHelper)
	cmd.Env = append(cmd.Env, linux.RecordEnv+"="+strconv.Itoa(3+len(cmd.ExtraFiles)-1))
	if group != nil {
		// After the descriptors the helper knows by number: the group, which
		// it never reads, and this process's pidfd, on which it waits for
		// this process's end (holdEnv names it). The command inherits
		// neither (close-on-exec in the helper).
		if self, err := selfPidfd(); err == nil {
			cmd.ExtraFiles = append(cmd.ExtraFiles, group, self)
			cmd.Env = append(cmd.Env, linux.HoldEnv+"="+strconv.Itoa(3+len(cmd.ExtraFiles)-1))
		}
	}
	attr := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	if key.namespaced {
		attr.Cloneflags = nsFlags
		if key.network != linux.NetworkOn {
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
		if key.network == linux.NetworkAsk {
			attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_NET_ADMIN) // to bring up lo
		}
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		closeAll()
		if forward != nil {
			forward.Close()
			forwardHelper.Close()
		}
		record.Close()
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("start the sandbox helper %s: %w", name, err)
		}
		return nil, fmt.Errorf("start the sandbox helper: %w", err)
	}
	// The helper holds the other ends now.
	for _, f := range []*os.File{specR, statusW, pipes[2][1], pipes[3][1]} {
		f.Close()
	}
	if forwardHelper != nil {
		forwardHelper.Close()
	}
	return &helperProc{cmd: cmd, specW: specW, status: newHelperStatus(statusR),
		stdout: pipes[2][0], stderr: pipes[3][0], forward: forward, record: record}, nil
}

// start sends the spec and waits until the command has started. The
// helper builds the sandbox at once but starts the command only on the go
// byte, sent once ready (Command.Ready) returns nil: the caller's own
// barrier runs beside the sandbox's set-up. Without the go the helper
// starts nothing.
func (h *helperProc) start(spec []byte, ready func() error) error {
	gate := make(chan error, 1)
	// A large environment may not fit the pipe's buffer: write while the
	// helper reads.
	go func(w *os.File) {
		defer w.Close()
		if _, err := w.Write(spec); err != nil {
			gate <- nil // the helper is gone: waitReady says so
			return
		}
		var err error
		if ready != nil {
			err = ready()
		}
		if err == nil {
			w.Write([]byte{linux.HelperGo})
		}
		gate <- err
	}(h.specW)
	err := h.status.waitReady()
	if gerr := <-gate; gerr != nil {
		return gerr
	}
	return err
}

// selfPidfd is a pidfd of this process, opened once (Linux 5.3).
var selfPidfd = sync.OnceValues(func() (*os.File, error) {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "pidfd"), nil
})

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
	if h.forward != nil {
		h.forward.Close()
	}
	if h.record != nil {
		h.record.Close()
	}
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

// askRunsOffline: once the kernel refused the namespaces, network ask
// runs as off (see the fallback in launch).
func askRunsOffline() bool { return !namespacesUsable() }
