package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
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

// HelperMain is the sandbox helper: `warden __sandbox-helper SPEC`. It runs
// in the process the launcher started (in fresh namespaces when it could),
// builds the sandbox around itself, starts the command as its only child,
// reaps everything, and exits with the command's status. It never returns.
func HelperMain(args []string) {
	// Credentials are per thread: the setup and the fork that starts the
	// command must happen on one thread.
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
	if len(args) != 0 {
		fail("sandbox helper: unexpected arguments %q", args)
	}
	var spec helperSpec
	specFile := os.NewFile(specFD, "spec")
	if err := json.NewDecoder(specFile).Decode(&spec); err != nil {
		fail("sandbox helper: bad spec: %v", err)
	}
	specFile.Close()
	if err := setup(&spec); err != nil {
		fail("%v", err)
	}
	if spec.Layers.Namespaces {
		// Become the command: it is init of the pid namespace, so when it
		// exits, or the launcher kills it, the kernel kills everything it
		// started, setsid and double forks included. One process fewer to
		// start and reap makes the sandbox start faster. The status pipe is
		// close-on-exec: the launcher sees "ready" and then end of file.
		fmt.Fprintln(status, "ready")
		err := unix.Exec(spec.Path, spec.Argv, spec.Env)
		fmt.Fprintf(os.Stderr, "warden: cannot run %s: %v\n", spec.Argv[0], err)
		os.Exit(126)
	}
	// Catch the launcher's SIGTERM before starting the child, so a timeout
	// that lands now still kills the child.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	child, err := os.StartProcess(spec.Path, spec.Argv, &os.ProcAttr{
		Dir:   spec.Cwd,
		Env:   spec.Env,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		// Its own session: no controlling terminal to inject input into.
		Sys: &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		fail("start %s: %v", spec.Argv[0], err)
	}
	fmt.Fprintln(status, "ready")
	code := reap(child.Pid, term)
	if code >= 128+1 && code < 128+65 {
		fmt.Fprintf(status, "signal %d\n", code-128)
	}
	status.Close()
	os.Exit(code)
}

// setup applies the layers in the order that lets each one still work:
// mounts need capabilities and no Landlock; Landlock and seccomp need
// no_new_privs; capabilities go last because the earlier steps use them.
func setup(spec *helperSpec) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	// The helper keeps capabilities in its user namespace; nobody may read
	// or trace its memory.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("set non-dumpable: %w", err)
	}
	if spec.Layers.Namespaces {
		if err := buildMountView(spec); err != nil {
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
		if err := applyLandlock(spec); err != nil {
			return fmt.Errorf("landlock: %w", err)
		}
	}
	if spec.Layers.Seccomp {
		if err := installSeccomp(spec.Network); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
	}
	if spec.Layers.DropCaps {
		if err := dropCapabilities(); err != nil {
			return fmt.Errorf("drop capabilities: %w", err)
		}
	}
	return nil
}

func setLimits(spec *helperSpec) error {
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
// the locked main thread: go-landlock restricts each thread separately
// below ABI 8, so only this thread shares the command's Landlock domain and
// may signal into it.
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
				switch {
				case ws.Exited():
					code = ws.ExitStatus()
				case ws.Signaled():
					code = 128 + int(ws.Signal())
				}
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
