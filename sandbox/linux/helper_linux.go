package linux

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The helper's pipes: status out (ExtraFiles[0]) and spec in (ExtraFiles[1]).
const (
	statusFD = 3
	specFD   = 4
)

// init takes the helper entry point before the packages that import sandbox
// are initialised (Go initialises a package's dependencies first): every
// command would otherwise pay for the whole binary's package set-up, which
// measured several milliseconds. cmd/warden's main checks too, for builds
// where this runs later.
func init() {
	if len(os.Args) > 1 && os.Args[1] == HelperArg {
		HelperMain(os.Args[2:])
	}
}

// The helper's arguments after HelperArg: whether it runs in fresh
// namespaces, and whether the command gets the network.
const (
	ArgNamespaced = "ns"
	ArgFlat       = "flat"
	ArgNetwork    = "net"
	ArgNoNetwork  = "nonet"
	ArgAskNetwork = "ask"
)

// helperNetworks maps the helper's network argument to its mode.
var helperNetworks = map[string]Network{ArgNetwork: NetworkOn, ArgNoNetwork: NetworkOff, ArgAskNetwork: NetworkAsk}

// prepared is what the helper readies before it knows the command.
type prepared struct {
	namespaced bool
	network    Network
	filter     []unix.SockFilter // the seccomp program
	lastCap    int
	hostDev    int  // a detached clone of the host's /dev (-1: none), see prepareMountView
	mediate    bool // the filter sends socket addresses to the supervisor
	record     bool // the filter sends the calls that change files to the supervisor
	listener   int  // its notification descriptor once installed (-1: none)
	// landlock is the ruleset for the default read policy, built ahead
	// (nil: built when the spec comes, as for any other read policy).
	landlock *landlockBase
}

// HelperMain is the sandbox helper: `warden __sandbox-helper ns|flat
// net|nonet`. It runs in the process the launcher started (in fresh
// namespaces for "ns"), does the part of the set-up that does not depend on
// the command, says "idle" and waits for its spec (a spare helper waits here
// until a command needs it), builds the rest of the sandbox around itself,
// starts the command as its child, and once the command and everything it
// started are gone says "exit CODE" and exits. It never returns.
func HelperMain(args []string) {
	// Credentials, Landlock and seccomp are per thread: the set-up and the
	// fork that starts the command must happen on one thread.
	runtime.LockOSThread()
	status := os.NewFile(statusFD, "status")
	// Whatever warden's own parent left open without close-on-exec would
	// otherwise reach the command: only stdio may cross into the sandbox.
	if err := unix.CloseRange(statusFD, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		for fd := statusFD; fd < 1024; fd++ {
			unix.CloseOnExec(fd)
		}
	}
	fail := func(format string, a ...any) {
		msg := strings.ReplaceAll(fmt.Sprintf(format, a...), "\n", " ")
		fmt.Fprintf(status, "error %s\n", msg)
		os.Exit(125)
	}
	if len(args) != 2 || (args[0] != ArgNamespaced && args[0] != ArgFlat) || helperNetworks[args[1]] == "" {
		fail("sandbox helper: want arguments %s|%s %s|%s|%s, got %q", ArgNamespaced, ArgFlat, ArgNetwork, ArgNoNetwork, ArgAskNetwork, args)
	}
	pre, err := prepare(args[0] == ArgNamespaced, helperNetworks[args[1]])
	if err != nil {
		fail("%v", err)
	}
	// Decoding the first spec costs a fresh process most of a millisecond
	// (reflection caches, code paged in): a spare pays it while it waits.
	// A helper whose spec is already in the pipe goes straight to it.
	if n, err := unix.IoctlGetInt(specFD, unix.TIOCINQ); err != nil || n == 0 {
		json.Unmarshal([]byte(warmSpec), new(Spec))
	}
	fmt.Fprintln(status, "idle")

	var spec Spec
	specFile := os.NewFile(specFD, "spec")
	dec := json.NewDecoder(specFile)
	if err := dec.Decode(&spec); err != nil {
		if errors.Is(err, io.EOF) {
			os.Exit(0) // a spare the launcher no longer needs
		}
		fail("sandbox helper: bad spec: %v", err)
	}
	if spec.Layers.Namespaces != pre.namespaced || spec.Network != pre.network {
		fail("sandbox helper: started as %q for a spec with namespaces=%v network=%v", args, spec.Layers.Namespaces, spec.Network)
	}
	if err := matchFilter(&spec, pre); err != nil {
		fail("%v", err)
	}
	record, err := recordFor(&spec)
	if err != nil {
		fail("%v", err)
	}
	if err := setup(&spec, pre); err != nil {
		fail("%v", err)
	}
	var term chan os.Signal
	if !pre.namespaced {
		// The launcher ends a run without namespaces with SIGTERM, which the
		// helper turns into killing everything the command started. Catch
		// it before the child starts so a timeout that lands now still
		// kills the child. (In a pid namespace the launcher kills the
		// helper, init, and the kernel kills the rest.)
		term = make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	}
	// The sandbox is built: the command starts on the launcher's go.
	if !awaitGo(io.MultiReader(dec.Buffered(), specFile)) {
		fail("sandbox helper: the launcher withdrew the command")
	}
	specFile.Close()
	// syscall's fork, not os's: the helper needs only the pid, and os's
	// first start in a process probes pidfd support with a fork of its own
	// (0.3 ms of every run).
	child, err := syscall.ForkExec(spec.Path, spec.Argv, &syscall.ProcAttr{
		Dir:   spec.Cwd,
		Env:   spec.Env,
		Files: []uintptr{0, 1, 2},
		// Its own session: no controlling terminal to inject input into.
		Sys: &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		fail("start %s: %v", spec.Argv[0], &os.PathError{Op: "fork/exec", Path: spec.Path, Err: err})
	}
	// A call the command makes before this waits in the kernel's queue;
	// so would the helper's own open of /dev/null below (this thread is
	// filtered like the command).
	startSupervisor(pre, record)
	// The launcher knows the output is complete when every writer has
	// closed it: the helper must not be one of them.
	releaseStdio()
	fmt.Fprintln(status, "ready")
	var code int
	if pre.namespaced {
		code = reapNamespace(child)
	} else {
		code = reap(child, term)
	}
	// Nothing is left to report a change: the launcher reads what is
	// still in the record socket, then the end.
	record.close()
	// Everything the command started is gone: report now, so the launcher
	// need not wait for this process's exit, which tears the namespaces
	// down and costs the kernel milliseconds.
	if code >= 128+1 && code < 128+65 {
		fmt.Fprintf(status, "signal %d\n", code-128)
	}
	fmt.Fprintf(status, "exit %d\n", code)
	status.Close()
	if fd, err := strconv.Atoi(os.Getenv(HoldEnv)); err == nil && fd > statusFD {
		awaitLauncherExit(fd)
	}
	os.Exit(min(code, 255))
}

// HoldEnv, in the helper's own environment (never the command's, which
// comes from the spec), names the descriptor of the launcher's pidfd when
// the helper was started holding the launcher's notification group
// (holdGroup): a property of the helper's start, not of any one command.
const HoldEnv = "WARDEN_HELPER_HOLD_FD"

// maxHold bounds how long a helper that holds the launcher's notification
// group waits for the launcher to end: a one-shot launcher exits
// milliseconds after the result, and one that lives on only loses the
// speed-up, not a guarantee.
const maxHold = 30 * time.Second

// awaitLauncherExit waits, the command and everything it started being
// gone, until the launcher whose pidfd is fd has exited (or maxHold), so
// that this process drops the last reference to the launcher's
// notification group and its exit, which nobody waits for, frees it. A
// pidfd becomes readable once its process has exited and released its
// files; the end of a pipe would come while it still does. The parent-death
// signal would kill this process as the launcher's exit begins: cleared.
func awaitLauncherExit(fd int) {
	unix.Prctl(unix.PR_SET_PDEATHSIG, 0, 0, 0, 0)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	deadline := time.Now().Add(maxHold)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n > 0 {
			return // the launcher has exited, or nothing to wait on
		}
	}
}

// HelperGo is the byte the launcher sends after the spec once the command
// may start (helperProc.start).
const HelperGo = 'g'

// awaitGo reads the launcher's go from the spec pipe: false if the pipe
// closes without it (the run was refused meanwhile).
func awaitGo(r io.Reader) bool {
	var b [1]byte
	for {
		n, err := r.Read(b[:])
		if n == 1 {
			return b[0] == HelperGo
		}
		if err != nil {
			return false
		}
	}
}

// prepare does the set-up that is the same for every command.
func prepare(namespaced bool, network Network) (*prepared, error) {
	pre := &prepared{namespaced: namespaced, network: network, lastCap: lastCap(), hostDev: -1, listener: -1,
		mediate: namespaced && SocketMediation(), record: RecordSupported()}
	// The helper keeps capabilities in its user namespace until the command
	// starts: nobody may read or trace its memory.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("set non-dumpable: %w", err)
	}
	if namespaced {
		var err error
		if pre.hostDev, err = prepareMountView(); err != nil {
			return nil, fmt.Errorf("build the filesystem view: %w", err)
		}
	}
	var err error
	if pre.filter, err = seccompProgram(filterOptions{network: network, mediateUnix: pre.mediate, recordWrites: pre.record}); err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	if network == NetworkAsk {
		if !namespaced {
			return nil, fmt.Errorf("network_access \"ask\" needs a network namespace")
		}
		if err := startForwarder(); err != nil {
			return nil, err
		}
	}
	prepareSupervisor(pre)
	// After the mount view's /dev exists. Failing here only means the run
	// builds its ruleset itself, which reports what is wrong.
	if EffectiveLandlockABI() >= 1 {
		pre.landlock, _ = newLandlockBase(network, namespaced, nil, nil)
	}
	return pre, nil
}

// warmSpec exercises every field type of helperSpec.
const warmSpec = `{"path":"/","argv":["a"],"env":["A=1"],"cwd":"/","mode":"read-only","net":"on",` +
	`"roots":[{"Path":"/","Protected":["/.git"]}],"layers":{"ns":true},"fsize":1,"nproc":1}`

// releaseStdio points the helper's own stdout and stderr at /dev/null.
func releaseStdio() {
	null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(1)
		unix.Close(2)
		return
	}
	unix.Dup3(null, 1, 0)
	unix.Dup3(null, 2, 0)
	unix.Close(null)
}

// reapNamespace waits for the command, the helper being init of the pid
// namespace: orphans are reparented to it. Once the command has exited it
// kills every other process in the namespace (kill(-1) from init reaches
// them all) and reaps them, so nothing the command started outlives it. It
// returns the command's status in shell form.
func reapNamespace(pid int) int {
	code := -1
	for {
		var ws unix.WaitStatus
		wpid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil { // ECHILD: nothing left
			if code < 0 {
				code = 128 + int(unix.SIGKILL)
			}
			return code
		}
		if wpid == pid {
			code = exitCode(ws)
		}
		if code >= 0 {
			// Again after every reap: a process may have forked just
			// before the previous kill.
			unix.Kill(-1, unix.SIGKILL)
		}
	}
}

func exitCode(ws unix.WaitStatus) int {
	switch {
	case ws.Exited():
		return ws.ExitStatus()
	case ws.Signaled():
		return 128 + int(ws.Signal())
	}
	return 128 + int(unix.SIGKILL)
}

// setup applies the layers in the order that lets each one still work:
// mounts need capabilities and no Landlock; Landlock and seccomp need
// no_new_privs; capabilities go last because the earlier steps use them.
func setup(spec *Spec, pre *prepared) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if spec.Layers.Namespaces {
		if err := finishMountView(spec, pre.hostDev); err != nil {
			return fmt.Errorf("build the filesystem view: %w", err)
		}
	} else if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		// Without a pid namespace the helper adopts orphans so it can kill them.
		return fmt.Errorf("become subreaper: %w", err)
	}
	if err := setLimits(spec); err != nil {
		return err
	}
	if spec.Layers.Landlock {
		err := applyLandlock(spec, pre.landlock)
		pre.landlock = nil // applied or closed
		if err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	pre.landlock.close() // not used: no Landlock for this spec
	if spec.Layers.Seccomp {
		if err := loadFilter(pre); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
	}
	if spec.Layers.DropCaps {
		if err := dropCapabilities(pre.lastCap); err != nil {
			return fmt.Errorf("drop capabilities: %w", err)
		}
	}
	return nil
}

func setLimits(spec *Spec) error {
	set := func(res int, v int64, name string) error {
		lim := unix.Rlimit{Cur: uint64(v), Max: uint64(v)}
		if v < 0 {
			lim = unix.Rlimit{Cur: unix.RLIM_INFINITY, Max: unix.RLIM_INFINITY}
			var cur unix.Rlimit
			if unix.Getrlimit(res, &cur) == nil {
				lim = cur
			}
		}
		if err := unix.Setrlimit(res, &lim); err != nil {
			return fmt.Errorf("set %s limit: %w", name, err)
		}
		return nil
	}
	if err := set(unix.RLIMIT_CORE, 0, "core size"); err != nil {
		return err
	}
	if err := set(unix.RLIMIT_FSIZE, spec.FileSize, "file size"); err != nil {
		return err
	}
	return set(unix.RLIMIT_NPROC, spec.Processes, "process count")
}

// reap waits for the command, adopting and reaping orphans (the helper is a
// subreaper when there is no pid namespace), and once the command is gone
// (or the launcher asks) kills whatever it left behind.
// It returns the command's exit status in shell form. Everything runs on
// the locked main thread: only this thread is in the command's Landlock
// domain, which may be signalled only from inside.
func reap(pid int, term chan os.Signal) int {
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	killAll := killDescendants
	code := -1
	for {
		// Reap everything that has exited so far.
		for {
			var ws unix.WaitStatus
			wpid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.ECHILD) {
				// No child left: as a subreaper every orphan of the command
				// would have become ours, so nothing it started survives.
				if code < 0 {
					code = 128 + int(unix.SIGKILL)
				}
				return code
			}
			if err != nil || wpid <= 0 {
				break
			}
			if wpid == pid {
				code = exitCode(ws)
			}
		}
		if code >= 0 {
			// The command is done but something it started lives on.
			killAll()
		}
		select {
		case <-chld:
		case <-term:
			killAll()
		case <-time.After(100 * time.Millisecond):
			// SIGCHLDs coalesce; look again now and then.
		}
	}
}

// killDescendants SIGKILLs every descendant of this process. As a subreaper
// the helper inherits orphans, so they stay its descendants; it repeats
// until a pass finds nothing (a process may fork while the pass runs).
func killDescendants() {
	self := os.Getpid()
	for range 50 {
		children := parentMap()
		found := false
		queue := []int{self}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			for _, c := range children[p] {
				unix.Kill(c, unix.SIGKILL)
				queue = append(queue, c)
				found = true
			}
		}
		if !found {
			return
		}
	}
}

// parentMap maps each pid to its children, from /proc/PID/stat (the
// per-task children files need CONFIG_PROC_CHILDREN, which kernels omit).
func parentMap() map[int][]int {
	out := map[int][]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			out[ppid] = append(out[ppid], pid)
		}
	}
	return out
}
