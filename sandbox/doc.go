// Package sandbox runs commands under a Policy: on Linux through a
// re-executed helper that enters namespaces, binds the filesystem view, drops
// capabilities and applies Landlock and seccomp before exec; on macOS through a
// generated Seatbelt profile. It also owns process limits, output capture,
// environment policy and sandbox-denial detection.
//
// # API
//
//	policy, err := sandbox.NewPolicy(cfg.SandboxMode, string(cfg.Network), cfg.WritableRoots)
//	policy.Workspace = []string{workspace}         // the session's roots, never a command's cwd
//	res, err := sandbox.Run(ctx, sandbox.Command{
//		Argv:    []string{"go", "test", "./..."}, // no shell unless Shell is set
//		Cwd:     workspace,                       // where it runs; grants nothing
//		Policy:  policy,
//		Env:     sandbox.EnvPolicy{},            // inherit all, minus secrets (IsSecretEnv)
//		Clock:   sandbox.NewClock(2*time.Minute), // or Timeout; Pause/Resume while a human is asked
//		OnOutput: stream,                         // optional live output
//		Proxy:   handler,                         // under network ask: serves each proxy connection
//	})
//
// Run's error is non-nil only when nothing ran; a *RefusedError means the
// sandbox would not run the command (the policy cannot be enforced here, or
// the command line is unusable). Otherwise Result has the exit code (128+N
// for a signal), the captured output (capped by OutputLimit), TimedOut,
// Canceled, and SandboxDenied with DenialReason when the failure looks like
// the sandbox's doing, so an orchestrator can offer to retry without it.
// Result.Sandbox names the mechanism and Result.NotEnforced lists what this
// machine could not enforce (non-empty only in the namespace-less fallback).
// Start and Process.Wait split Run for callers that need the process while
// it runs. Policy.Summary is the one-line description for approval dialogs.
//
// A timeout or cancellation kills the command and everything it started:
// on Linux the helper is init of the command's pid namespace, so killing it
// makes the kernel kill every process in the namespace, including ones that
// called setsid or double-forked. When the command exits, the helper kills
// and reaps whatever it left behind and reports the status, so Run returns
// without waiting for the kernel to tear the namespaces down.
//
// A process that runs many commands calls KeepSpareHelpers(true): a helper
// is then started ahead of need for each kind of sandbox (namespaces,
// network), does the part of the set-up no command decides on, and waits;
// the next command of that kind only sends its spec. This halves a
// sandboxed start (make bench). The language server and `warden run` do it.
//
// # Linux layers
//
// The binary must call HelperMain when argv[1] is HelperArg (cmd/warden does,
// first thing in main). In order, the helper: runs in new user, mount, pid,
// ipc and (network off) net namespaces; mounts a fresh /proc and a minimal
// /dev; waits for its spec; sets no_new_privs; makes every mount
// read-only and nosuid, binds the writable roots writable and their protected
// subpaths (ProtectedNames, a gitdir: target, Policy.ProtectedPaths) read-only
// again (the launcher watches missing ones and moves away what the command
// creates there, see quarantine.go), and every repository found deeper in a
// root (scanRepos); masks the
// unix sockets services keep in known places (/run, $XDG_RUNTIME_DIR, the
// top of /tmp and its service directories, ~/.ssh, ~/.gnupg, those named by
// $SSH_AUTH_SOCK, $TMUX and similar; the launcher finds them before each
// run, caching unchanged directories, and refuses when it cannot finish);
// applies Landlock (filesystem, TCP when the network is off, signal and
// abstract-socket scopes) at the kernel's ABI, checked by hand, to the
// thread that starts the command; installs a seccomp filter (AF_UNIX-only
// sockets when the network is off, io_uring, ptrace, process_vm_*, bpf,
// keyrings, mounts, namespaces, TIOCSTI and more fail with EPERM; wrong
// architecture kills; x32 is refused); drops every capability; sets rlimits
// (no core dumps, file size, process count); and starts the command in its
// own session. Without user namespaces it falls back to Landlock + seccomp,
// stays as a subreaper that kills what the command leaves behind, and says
// what that loses; without Landlock too it refuses.
package sandbox
