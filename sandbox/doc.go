// Package sandbox runs commands under a Policy: on Linux through a
// re-executed helper that enters namespaces, binds the filesystem view, drops
// capabilities and applies Landlock and seccomp before exec; on macOS through a
// generated Seatbelt profile. It also owns process limits, output capture,
// environment policy and sandbox-denial detection.
//
// # Packages
//
// This package is the one entry point (Run, Start) and the permission type
// (Policy, Grant, the read policy, the network); it launches and watches the
// run. Below it, by role:
//
//	protect/    what stays read-only inside writable roots: every VCS's metadata,
//	            protected names at any depth, a home directory's dot-entries, PATH
//	            directories, configuration targets; the bounded scan
//	linux/      enforcement on Linux: the helper (namespaces, mounts, Landlock,
//	            seccomp), unix-socket mediation and the host socket scan,
//	            network forwarding
//	guard/      the watch of a run's missing protected paths: what a command
//	            creates there moves to the quarantine; git placeholders
//	seatbelt/   enforcement on macOS: the profile and sandbox-exec
//	netproxy/   the network proxy
//	toolcache/  the toolchains' private caches (one set per workspace, the
//	            variables pointing each tool at it, eviction), layered on
//	            the user's
//
// Still here and Linux-only, the launcher's side of enforcement: starting
// and keeping spare helpers (spare_linux.go, prestart_linux.go), and
// handing the helper its spec (launch_linux.go).
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
// The spare that replaces a used one starts when RefillSpares says the
// run's result is out (or shortly after the run), not beside it.
//
// A one-shot process (PrepareRun, no KeepSpareHelpers) hands its fanotify
// group and a pidfd of itself to the early helper, which, once it has
// reported, waits for that process's end and exits after it: closing a
// group whose marks were just removed waits for an SRCU grace period, which
// then falls on the helper's exit, not on the one-shot process's.
//
// # Linux layers
//
// The binary must call linux.HelperMain when argv[1] is linux.HelperArg
// (cmd/warden does, first thing in main; the linux package's init does it
// earlier still). In order, the helper: runs in new user, mount, pid,
// ipc and (network off) net namespaces; mounts a fresh /proc and a minimal
// /dev; waits for its spec; sets no_new_privs; makes every mount
// read-only and nosuid, binds the writable roots writable and their protected
// subpaths (ProtectedNames, a gitdir: target, Policy.ProtectedPaths) read-only
// again (the launcher watches missing ones and moves away what the command
// creates there, see sandbox/guard), and every repository and protected
// name found deeper in a root (protect.ScanRepos), each VCS's metadata
// split into writable data and read-only config (protect.SplitGitDirs);
// where the kernel lacks seccomp user notification, masks
// the unix sockets services keep in known places (/run, $XDG_RUNTIME_DIR,
// the top of /tmp and its service directories, ~/.ssh, ~/.gnupg, those named by
// $SSH_AUTH_SOCK, $TMUX and similar; the launcher finds them before each
// run, caching unchanged directories, and refuses when it cannot finish);
// applies Landlock (filesystem, TCP when the network is off, signal and
// abstract-socket scopes) at the kernel's ABI, checked by hand, to the
// thread that starts the command; installs a seccomp filter (AF_UNIX-only
// sockets when the network is off, io_uring, ptrace, process_vm_*, bpf,
// keyrings, mounts, namespaces, TIOCSTI and more fail with EPERM; wrong
// architecture kills; x32 is refused); drops every capability; sets rlimits
// (no core dumps, file size, process count); and, on the launcher's go
// (sent once Command.Ready has returned), starts the command in its own
// session. Without user namespaces it falls back to Landlock + seccomp,
// stays as a subreaper that kills what the command leaves behind, and says
// what that loses; without Landlock too it refuses.
//
// # Unix sockets
//
// A pathname unix socket is reached by connect() or a datagram, and before
// Landlock ABI 9 nothing in the filesystem layers stops either: read-only
// mounts do not, and masking sockets means knowing where they are, which a
// scan of every directory before every run cannot afford (a host process
// may also bind one after the scan, or in the workspace). A private /tmp
// would hide most host sockets but not those in the workspace, /var/tmp or
// a home directory, and would break tools that share /tmp with the user.
// So the helper mediates (linux/unixmediate_linux.go): the seccomp filter returns
// SECCOMP_RET_USER_NOTIF for connect, sendmsg, sendmmsg and sendto with an
// address, and a supervisor goroutine of the helper (pid 1 of the sandbox, on
// threads the filter does not cover; it shares the command's mount, pid
// and network view, and holds the listener it installed) performs each
// call: it takes the command's own socket with pidfd_getfd, copies the
// address and data once from its memory (checking the notification is
// still valid after each read), resolves a pathname against the caller's
// cwd to an O_PATH descriptor, and connects or sends on the command's
// socket to /proc/self/fd/N only when a listening or datagram socket made
// inside the sandbox is bound to that inode (its own network namespace
// lists only the sandbox's sockets; sharing the host's, the socket must
// also be held by a process in the sandbox's pid namespace). Anything else
// answers EACCES, or ECONNREFUSED when the host's sock_diag shows nothing
// bound there. Because the supervisor acts on its copies and the pinned
// inode, and never answers CONTINUE, a thread rewriting the address, the
// msghdr or the descriptor after the check changes nothing; acting on the
// command's own socket (rather than connecting a new one and installing it
// with SECCOMP_IOCTL_NOTIF_ADDFD) keeps its options, its bound address and
// O_NONBLOCK, so a nonblocking connect answers as the kernel would.
// sendmmsg is performed message by message. Abstract sockets are
// left to Landlock's scope and the network namespace, and checked the same
// way when the network is on. From Landlock ABI 9 Landlock's own rule is
// used instead; without user notification or pidfd_getfd (before 5.6) the
// known places are masked and doctor says what that leaves open; without
// namespaces nothing is mediated (listed in Result.NotEnforced).
package sandbox
