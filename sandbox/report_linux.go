package sandbox

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wardenhq/warden/sandbox/linux"
)

func layersFor(r Report) []Layer {
	ns := r.Mechanism == "linux"
	var missing []string
	for _, n := range []string{"user", "mount", "pid", "net", "ipc"} {
		if why := r.Namespaces[n]; why != "" {
			missing = append(missing, n+": "+why)
		}
	}
	nsDetail := "user, mount, pid, ipc and (network off) net namespaces"
	if !ns {
		nsDetail = "unavailable: " + strings.Join(missing, "; ")
		if len(missing) == 0 {
			nsDetail = "not used"
		}
	}
	abi := linux.EffectiveLandlockABI()
	ll := Layer{Name: "landlock", Enforced: abi >= 1, Detail: fmt.Sprintf("ABI %d (kernel reports %d, errata %#x)", abi, r.Kernel.LandlockABI, r.Kernel.LandlockErrata)}
	if abi >= 1 {
		ll.Covers = append(ll.Covers, "writes only inside the writable roots and to /dev/null; read and execute elsewhere; raw devices unreadable")
	}
	if abi >= 2 {
		ll.Covers = append(ll.Covers, "links and renames across the writable roots' boundary (refer)")
	}
	if abi >= 3 {
		ll.Covers = append(ll.Covers, "truncate outside the writable roots")
	}
	if abi >= 4 {
		ll.Covers = append(ll.Covers, "TCP bind and connect when the network is off")
	}
	if abi >= 5 {
		ll.Covers = append(ll.Covers, "ioctl on devices other than the terminal and /dev/null")
	}
	if abi >= 6 {
		ll.Covers = append(ll.Covers, "signals and abstract unix sockets to processes outside the sandbox")
	}
	return []Layer{
		{Name: "namespaces", Enforced: ns, Detail: nsDetail, Covers: nsCovers(ns)},
		ll,
		{Name: "seccomp", Enforced: r.Kernel.Seccomp, Detail: "BPF filter, EPERM on match, architecture and x32 checks", Covers: []string{
			"connect, sendmsg, sendmmsg and sendto with an address go to the unix-socket supervisor when it mediates (see unix sockets)",
			"sockets other than AF_UNIX when the network is off (TCP, UDP, MPTCP, raw, packet, netlink, vsock, ...)",
			"io_uring, ptrace, process_vm_readv/writev, pidfd_getfd",
			"bpf, perf_event_open, userfaultfd, keyctl/add_key/request_key",
			"mount and the new mount API, unshare, setns, namespace flags to clone, clone3 (ENOSYS)",
			"module loading, kexec, reboot, swap, clock and hostname changes, open_by_handle_at",
			"TIOCSTI and TIOCLINUX terminal injection, unusual personality flags",
		}},
		socketsLayer(r),
		{Name: "capabilities", Enforced: true, Detail: "every set emptied (bounding, ambient, effective, permitted, inheritable); securebits keep uid 0 from regaining them"},
		{Name: "no_new_privs", Enforced: true, Detail: "setuid and file capabilities grant nothing"},
		{Name: "limits", Enforced: true, Detail: "no core dumps; file size and process count capped (RLIMIT_FSIZE, RLIMIT_NPROC, pid_max of the pid namespace)"},
	}
}

func nsCovers(ns bool) []string {
	if !ns {
		return nil
	}
	return []string{
		"every mount read-only and nosuid, writable roots writable",
		"protected subpaths (" + strings.Join(slices.Concat(ProtectedNames, ProtectedSubpaths), " ") + ", *.code-workspace, gitdir: targets, what the repository's git config makes git run in the work tree and in its linked worktrees (core.hooksPath, included files, programs named by a path, init.templateDir, pre-commit and lefthook configs), what the .envrc and mise configs source or load (.envrc.local, .env...), Warden's own config and state, the user's git config) read-only, those that exist at any depth, each VCS's metadata with its data writable, missing ones masked so they cannot be created; at the top of /tmp and $TMPDIR only git's, the agents' and the editors'",
		"exec steps a command adds to a stopped rebase's or cherry-pick's step list taken out when it ends (a continue on the host would run them)",
		"every .git deeper in a writable root (and $GIT_DIR) that exists when the command starts read-only; found by a bounded scan (shallowest first, at most 20,000 directories or 100 ms per root, three levels in /tmp and $TMPDIR, cached 10 s), which never refuses a run",
		"chmod, chown and utime outside the writable roots (read-only mounts)",
		socketsCover(),
		"other processes invisible; the command and all it started die together",
		"no network interfaces but an unconfigured loopback when the network is off",
		"fresh /proc, minimal /dev, private /dev/shm and /dev/pts, private SysV IPC",
		"the read policy's credential stores hidden (an empty mode-000 tmpfs over a directory, an empty read-only file over a file)",
	}
}

// socketsLayer says how pathname unix sockets outside the sandbox are kept
// out of reach.
func socketsLayer(r Report) Layer {
	l := Layer{Name: "unix sockets"}
	switch {
	case r.Mechanism != "linux":
		l.Detail = "not mediated without namespaces: pathname sockets outside can be connected to (see below)"
	case linux.EffectiveLandlockABI() >= 9:
		l.Enforced = true
		l.Detail = "Landlock resolve-unix, granted nowhere"
		l.Covers = []string{"unix sockets bound outside the sandbox cannot be connected to; those the command binds work"}
	case linux.SocketMediation():
		l.Enforced = true
		l.Detail = "mediated: the seccomp filter hands every connect, sendmsg, sendmmsg and sendto with an address to a supervisor in the helper (user notification), which performs it for the command"
		l.Covers = []string{
			"pathname sockets anywhere (deep in /tmp, /var/tmp, the workspace, bound after the command started) reach only a listening or datagram socket made inside the sandbox; one bound outside answers EACCES, a stale file ECONNREFUSED, and no host service sees an attempt",
			"race-free: the address, the message and the socket are copied once and the call is made on the command's own socket with a descriptor pinning the resolved inode; the kernel never re-reads what another thread could rewrite",
			"abstract sockets: the sandbox's own network namespace when the network is off, the same inside-only check when it is on",
			"sockets the sandbox makes for itself work (servers and clients, datagrams, socketpair, descriptor passing, Python multiprocessing); an in-sandbox server sees the helper (pid 1) as a client's SO_PEERCRED pid",
		}
	default:
		l.Detail = "this kernel lacks seccomp user notification or pidfd_getfd (5.6): the known places are masked instead"
		l.Covers = []string{socketsCover()}
	}
	return l
}

// socketsCover says how unix sockets outside the sandbox are kept out.
func socketsCover() string {
	if linux.EffectiveLandlockABI() >= 9 {
		return "unix sockets bound outside the sandbox cannot be connected to (Landlock resolve-unix, granted nowhere); those the command binds work"
	}
	if linux.SocketMediation() {
		return "unix sockets bound outside the sandbox cannot be reached (see unix sockets below)"
	}
	return "existing unix sockets masked: all of /run and $XDG_RUNTIME_DIR, the top of /tmp and $TMPDIR and their service directories (tmux-*, ssh-*, .X11-unix, ...), ~/.ssh, ~/.gnupg, ~/.docker, and those named by $SSH_AUTH_SOCK, $TMUX, $NVIM, $DOCKER_HOST, $DBUS_SESSION_BUS_ADDRESS; found before each run with no bound on entries (unchanged directories cached), so no number of files a command leaves there stops a later run; past 256 sockets only those a server is bound to are masked (stale socket files cannot be connected to); a directory there that can be entered but not listed is hidden whole"
}

func residualGaps(r Report) []string {
	// What the read policy leaves readable is the policy's choice, said under
	// reads; here only what this machine cannot enforce.
	gaps := []string{
		"memory and disk use are not capped (no cgroup limits)",
	}
	if linux.EffectiveLandlockABI() < 9 && !linux.SocketMediation() && r.Mechanism == "linux" {
		gaps = append(gaps, "pathname unix sockets elsewhere (deeper in /tmp, inside a workspace, created after the scan just before the command starts) can be connected to: Landlock ABI < 9 cannot restrict connect, so Warden masks the known places only")
	}
	return gaps
}
