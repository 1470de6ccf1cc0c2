package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wardenhq/warden/internal/envlist"
	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/sandbox/protect"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

// Command is one command to run under a policy.
type Command struct {
	// Argv is the program and its arguments, run without a shell.
	Argv []string
	// Shell runs Argv joined with spaces as a script: /bin/sh -c "...".
	Shell bool
	// Cwd is the working directory. It grants nothing: the writable roots
	// are the Policy's alone. Empty means the current directory.
	Cwd    string
	Policy Policy
	Env    EnvPolicy
	// BaseEnv is what Env inherits from; nil means os.Environ().
	BaseEnv []string
	// Timeout bounds the run; 0 means none. Clock, when set, replaces it so
	// the caller can pause the countdown while a human is asked.
	Timeout time.Duration
	Clock   *Clock
	// OutputLimit caps the bytes kept of each stream (and of both
	// interleaved); 0 means 1 MiB. Output past the cap is still read and
	// streamed, only not kept.
	OutputLimit int
	// OnOutput, when set, receives every chunk of output as it arrives.
	// It is called from the copying goroutines and must not block long.
	OnOutput func(Stream, []byte)
	Limits   Limits
	// Helper is the warden binary that re-executes itself as the sandbox
	// helper; empty means this executable, the safe choice: its running
	// file is used, which no sandboxed command can replace or modify. A
	// binary named here is held open from its first use, so renaming
	// another over it changes nothing, but keep it out of writable roots:
	// while no process runs it, it can be written in place.
	Helper string
	// Proxy serves the connections the command makes through its proxy
	// variables under NetworkAsk; a run under NetworkAsk without one is
	// refused (never given the network instead). Ignored otherwise.
	Proxy ProxyHandler
	// Ready, when set, is called once the sandbox is prepared and before the
	// command can start; an error refuses the run. It lets the caller finish
	// work the command must wait for (making its audit lines durable) while
	// the sandbox is being prepared, instead of before.
	Ready func() error
	// Record, when set, hears each path in its roots the command is
	// about to change (where RecordsWrites; a run that cannot report is
	// refused).
	Record *WriteRecord
}

// Limits are resource limits set on the command (core dumps are always off).
type Limits struct {
	// FileSize caps the size of any file the command writes (RLIMIT_FSIZE);
	// 0 means 8 GiB, negative means unlimited.
	FileSize int64
	// Processes caps the processes of the sandbox's user (RLIMIT_NPROC);
	// 0 means 1024, negative means unlimited.
	Processes int64
}

const defaultOutputLimit = 1 << 20

// Removed is a protected path a command created, moved to the quarantine
// (protect.Removed).
type Removed = protect.Removed

// Result is what happened to a command that ran.
type Result struct {
	// ExitCode is the command's exit status, or 128+signal when a signal
	// killed it (as shells report it).
	ExitCode int
	Signal   int // the killing signal, 0 if it exited
	Stdout   []byte
	Stderr   []byte
	Output   []byte // stdout and stderr interleaved as they arrived
	// Truncated says output passed OutputLimit and was cut.
	Truncated bool
	TimedOut  bool
	Canceled  bool
	Duration  time.Duration
	// SandboxDenied says the failure looks like the sandbox's doing, so an
	// orchestrator may offer to retry without it; DenialReason says why.
	SandboxDenied bool
	DenialReason  string
	// Sandbox names the mechanism: "linux" (namespaces + Landlock +
	// seccomp), "linux-landlock" (no namespaces), "seatbelt" or "none".
	Sandbox string
	// NotEnforced lists what the policy asks for but this machine could not
	// enforce for this run (empty in the full sandbox).
	NotEnforced []string
	// Network is the network the command had; NetworkNotes what the proxy
	// had to say about it (NetworkNoter), e.g. the hosts it refused.
	Network      NetworkMode
	NetworkNotes []string
	// Removed are the protected paths the command created (a .git, .envrc
	// or .vscode that did not exist), which the sandbox moved away to the
	// quarantine directory. Callers show each (Removed.String) to the user
	// and the model.
	Removed []Removed
}

// Success reports a zero exit status with no timeout or cancellation.
func (r Result) Success() bool { return r.ExitCode == 0 && !r.TimedOut && !r.Canceled }

// RefusedError means Warden would not run the command: the policy cannot be
// enforced here, or the command line is unusable. The command did not start.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "sandbox refused to run the command: " + e.Reason }

func refuse(format string, a ...any) error { return &RefusedError{Reason: fmt.Sprintf(format, a...)} }

// Env variables the command sees so tools can tell they are sandboxed.
const (
	EnvSandbox         = "WARDEN_SANDBOX"
	EnvNetworkDisabled = "WARDEN_SANDBOX_NETWORK_DISABLED"
)

// Run runs c to completion. The error is non-nil only when the command
// could not be started (a *RefusedError when the sandbox refused); a command
// that ran and failed is a Result with its exit code.
func Run(ctx context.Context, c Command) (Result, error) {
	p, err := Start(ctx, c)
	if err != nil {
		return Result{}, err
	}
	return p.Wait(), nil
}

// Process is a started command.
type Process struct {
	cmd        *exec.Cmd
	cap        *capture
	clock      *Clock
	ownClock   bool
	ctx        context.Context
	start      time.Time
	sandboxed  bool
	kind       string
	gaps       []string
	status     *helperStatus
	outputs    *outputCopy // nil when exec.Cmd copies the output itself
	namespaced bool
	cleanup    func()
	// guardCfg and protect: the watch on missing protected paths (Linux);
	// protect ends it after the command and returns what it moved away.
	guardCfg protect.GuardConfig
	protect  func() []Removed
	// evict keeps the toolchain caches within their cap, after the run.
	evict func()
	// layers are the run's lease on its toolchain cache layers (nil: none),
	// released when the run ends.
	layers *toolcache.Lease
	// roots are the writable roots Start already resolved (for the cache
	// variables), so launch does not resolve them again; nil if it did not.
	roots []protect.Root
	// memo is this run's memo of the file system, for the set-up before the
	// command starts (never after: see pathmemo).
	memo *pathmemo.Memo
	// record hears what the command is about to change (nil: nothing);
	// recordDone is closed once it has heard all.
	record     *WriteRecord
	recordDone chan struct{}
	// network is the run's network; proxy serves its proxy connections
	// under NetworkAsk.
	network NetworkMode
	proxy   *proxyRun
	// askFellBack says the run asked for NetworkAsk and got NetworkOff:
	// there is no network namespace here (askFallsBackToOff).
	askFellBack bool
	// ready is Command.Ready (nil: nothing to wait for).
	ready func() error
	// secrets name what the read policy hid (as written and resolved,
	// absolute, with the form to show), for the denial message.
	secrets []secretName

	stopMu   sync.Mutex
	timedOut bool
	canceled bool

	waitOnce sync.Once
	done     chan struct{}
	result   Result
}

// Start starts c and returns at once; Wait collects the result.
func Start(ctx context.Context, c Command) (*Process, error) {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return nil, refuse("empty command")
	}
	if err := c.Policy.Validate(); err != nil {
		return nil, refuse("%v", err)
	}
	cwd := c.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return nil, refuse("working directory %s does not exist or is not a directory", cwd)
	}
	c.Cwd = cwd
	if c.Shell {
		c.Argv = []string{"/bin/sh", "-c", strings.Join(c.Argv, " ")}
	}

	base := c.BaseEnv
	if base == nil {
		base = os.Environ()
	}
	env := c.Env.Build(base)
	if c.Policy.Sandboxed() {
		env = envlist.Set(env, EnvSandbox, sandboxName())
	}
	switch c.Policy.network() {
	case NetworkOff:
		env = envlist.Set(env, EnvNetworkDisabled, "1")
	case NetworkAsk:
		if c.Proxy == nil {
			return nil, refuse("network_access is \"ask\" but no proxy was given to this run: Warden will not give the command the network instead (use network_access \"off\" or \"on\")")
		}
	}
	memo := pathmemo.New()
	cacheSet := c.Policy.cacheSetWith(memo)
	var roots []protect.Root
	var layers *toolcache.Lease
	if cacheSet != "" {
		home := envlist.Get(env, "HOME")
		if err := toolcache.Prepare(cacheSet, c.Policy.Workspace[0], home); err != nil {
			return nil, refuse("toolchain caches %s: %v", cacheSet, err)
		}
		memo.Forget(cacheSet) // just made
		if roots, err = c.Policy.roots(memo); err != nil {
			return nil, refuse("%v", err)
		}
		user := slices.Clone(env) // toolcache.Env sets in place
		env = toolcache.Env(env, cacheSet, c.Policy.Workspace[0], roots, home)
		layers = toolcache.TakeLayers(cacheSet, user, env, home)
	}
	if c.OutputLimit <= 0 {
		c.OutputLimit = defaultOutputLimit
	}

	p := &Process{
		cap:       &capture{limit: c.OutputLimit, onChunk: c.OnOutput},
		clock:     c.Clock,
		ctx:       ctx,
		sandboxed: c.Policy.Sandboxed(),
		network:   c.Policy.network(),
		roots:     roots,
		layers:    layers,
		memo:      memo,
		ready:     onceReady(c.Ready),
		done:      make(chan struct{}),
	}
	if cacheSet != "" {
		p.evict = func() { toolcache.Evict(c.Policy.Caches.Root, c.Policy.Caches.MaxSize, cacheSet) }
	}
	if p.clock == nil && c.Timeout > 0 {
		p.clock, p.ownClock = NewClock(c.Timeout), true
	}

	path, err := lookPath(c.Argv[0], cwd, envlist.Get(env, "PATH"))
	if err != nil {
		// Report it as a shell would, so callers see one shape of failure.
		msg := fmt.Sprintf("warden: %s: %v\n", c.Argv[0], err)
		if c.OnOutput != nil {
			c.OnOutput(Stderr, []byte(msg))
		}
		p.result = Result{ExitCode: 127, Stderr: []byte(msg), Output: []byte(msg), Sandbox: "none", Network: p.network}
		p.layers.Release()
		close(p.done)
		return p, nil
	}
	if !launchWaitsReady {
		if err := p.waitReady(); err != nil {
			p.layers.Release()
			return nil, err
		}
	}
	if err := p.launch(c, path, env); err != nil {
		p.layers.Release()
		if p.ownClock {
			p.clock.Stop()
		}
		if p.proxy != nil {
			p.proxy.stop()
		}
		return nil, err
	}
	p.start = time.Now()
	go p.supervise()
	return p, nil
}

// outputGrace is how long output may stay open after the command is gone,
// held by something that escaped it, before Warden stops reading.
const outputGrace = 2 * time.Second

// collect waits for the command and returns its exit status. A helper
// reports the status itself once the command and everything it started are
// gone, so the result need not wait for the helper's own exit (tearing down
// its namespaces costs the kernel milliseconds): it is reaped in the
// background. A helper that dies without reporting (killed on timeout or
// cancellation) is waited for.
func (p *Process) collect() Result {
	var r Result
	if p.status != nil {
		if code, sig, ok := p.status.final(); ok {
			p.outputs.wait(outputGrace)
			go p.cmd.Wait()
			r.ExitCode, r.Signal = code, sig
			return r
		}
	}
	err := p.cmd.Wait()
	if p.outputs != nil {
		p.outputs.wait(outputGrace)
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Signal = int(ws.Signal())
			r.ExitCode = 128 + r.Signal
		} else {
			r.ExitCode = exitErr.ExitCode()
		}
	default:
		r.ExitCode = -1
	}
	if p.status != nil {
		if _, sig, _ := p.status.final(); sig != 0 {
			r.Signal, r.ExitCode = sig, 128+sig
		}
	}
	return r
}

// supervise kills the command on timeout or cancellation.
func (p *Process) supervise() {
	select {
	case <-p.done:
		return
	case <-p.clock.Expired():
		p.stopMu.Lock()
		p.timedOut = true
		p.stopMu.Unlock()
	case <-p.ctx.Done():
		p.stopMu.Lock()
		p.canceled = true
		p.stopMu.Unlock()
	}
	p.killTree()
}

// Wait waits for the command and everything it started, and returns the
// result. It may be called more than once.
func (p *Process) Wait() Result {
	if p.cmd == nil { // never started (command not found)
		return p.result
	}
	p.waitOnce.Do(p.wait)
	<-p.done
	return p.result
}

func (p *Process) wait() {
	r := p.collect()
	p.awaitRecord()
	if p.protect != nil {
		r.Removed = p.protect()
	}
	if p.cleanup != nil {
		p.cleanup()
	}
	p.stopMu.Lock()
	r.TimedOut, r.Canceled = p.timedOut, p.canceled
	p.stopMu.Unlock()
	r.Duration, r.Sandbox, r.NotEnforced = time.Since(p.start), p.kind, p.gaps
	r.Network = p.network
	if p.proxy != nil {
		r.NetworkNotes = p.proxy.stop()
	}
	p.cap.mu.Lock()
	r.Stdout, r.Stderr, r.Output, r.Truncated = p.cap.stdout, p.cap.stderr, p.cap.combined, p.cap.truncated
	p.cap.mu.Unlock()
	// A failure after the sandbox moved away what the command created is
	// Warden's doing, not a denial to retry without the sandbox.
	if !r.TimedOut && !r.Canceled && len(r.Removed) == 0 {
		r.SandboxDenied, r.DenialReason = detectDenial(p.sandboxed, r.ExitCode, r.Signal, r.Stdout, r.Stderr)
		if !r.SandboxDenied && p.sandboxed && p.network == NetworkOff {
			r.SandboxDenied, r.DenialReason = offlineDenial(r.ExitCode, r.Stdout, r.Stderr)
		}
		if path, ok := readDenial(p.secrets, r.ExitCode, r.Stdout, r.Stderr); ok {
			r.SandboxDenied, r.DenialReason = true, "read of "+path+" denied by the sandbox's read policy"
		}
	}
	if p.ownClock {
		p.clock.Stop()
	}
	p.layers.Release() // the command and all it started are gone
	if p.evict != nil {
		p.evict()
	}
	p.result = r
	close(p.done)
}

// quarantineDir is where the run keeps what it moves away.
func (p Policy) quarantineDir() string {
	if p.Quarantine != "" {
		return p.Quarantine
	}
	return protect.QuarantineDir()
}

// writableRoots are the policy's resolved writable roots, resolved once per
// run.
func (p *Process) writableRoots(pol Policy) ([]protect.Root, error) {
	if p.roots != nil {
		return p.roots, nil
	}
	return pol.roots(p.memo)
}
