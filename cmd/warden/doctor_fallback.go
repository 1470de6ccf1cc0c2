package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/wardenhq/warden/sandbox"
)

// doctorFallback is what sandboxed commands get on a machine that refuses
// user namespaces, why it refuses them, and what would lift the refusal.
type doctorFallback struct {
	// Mechanism is the sandbox commands run in (linux-landlock).
	Mechanism string `json:"mechanism"`
	// Why is the kernel's answer to a new user namespace.
	Why string `json:"why"`
	// Network says what network_access "ask" becomes.
	Network string `json:"network"`
	// Cause names what refuses: apparmor, container, sysctl or unknown.
	Cause string `json:"cause"`
	// Fix says how to get the full sandbox; Commands are what to run.
	Fix      string   `json:"fix"`
	Commands []string `json:"commands,omitempty"`
}

// apparmorProfile is scripts/apparmor/warden without its comments: the
// profile that grants the binary at @WARDEN@ user namespaces.
const apparmorProfile = `abi <abi/4.0>,
include <tunables/global>

profile warden "@WARDEN@" flags=(unconfined) {
  userns,

  # Site-specific additions and overrides.
  include if exists <local/warden>
}
`

// apparmorProfilePath is where the profile is installed.
const apparmorProfilePath = "/etc/apparmor.d/warden"

// procSys is where the kernel's settings are read (a test may move it).
var procSys = "/proc/sys"

// fallbackReport says why this machine falls back, or nil when it does not.
func fallbackReport(s sandbox.Report) *doctorFallback {
	why := s.Namespaces["user"]
	if runtime.GOOS != "linux" || (s.Mechanism != "linux-landlock" && why == "") {
		return nil
	}
	if why == "" {
		why = "refused when the sandbox started"
	}
	f := &doctorFallback{
		Mechanism: "linux-landlock",
		Why:       why,
		Network:   `network_access "ask" runs as "off": no network namespace can keep a command to Warden's proxy, so it gets no network, never the host's`,
	}
	switch {
	case sysctl("kernel/apparmor_restrict_unprivileged_userns") == "1":
		f.Cause = "apparmor"
		exe := wardenRealPath()
		f.Fix = "AppArmor restricts user namespaces to programs with a profile that grants them (kernel.apparmor_restrict_unprivileged_userns = 1, Ubuntu 23.10 and later); install Warden's (scripts/apparmor/warden) for " + exe + ", as root, and again whenever the binary moves"
		if installed, err := os.ReadFile(apparmorProfilePath); err == nil && !strings.Contains(string(installed), `"`+exe+`"`) {
			f.Fix += "; " + apparmorProfilePath + " exists but names another binary"
		}
		f.Commands = apparmorCommands(exe)
	case sysctl("kernel/unprivileged_userns_clone") == "0":
		f.Cause = "sysctl"
		f.Fix = "the kernel refuses user namespaces to unprivileged users (kernel.unprivileged_userns_clone = 0)"
		f.Commands = []string{"sudo sysctl -w kernel.unprivileged_userns_clone=1"}
	case sysctl("user/max_user_namespaces") == "0":
		f.Cause = "sysctl"
		f.Fix = "the kernel allows no user namespaces (user.max_user_namespaces = 0)"
		f.Commands = []string{"sudo sysctl -w user.max_user_namespaces=15000"}
	case inContainer():
		f.Cause = "container"
		f.Fix = "the container's seccomp profile refuses user namespaces (Docker's default does, so devcontainers and Codespaces); for the full sandbox start the container with a profile that allows unshare and clone with CLONE_NEWUSER (devcontainer.json: \"runArgs\": [\"--security-opt\", \"seccomp=unconfined\"], which loosens the container's own filter)"
	default:
		f.Cause = "unknown"
		f.Fix = "something refuses user namespaces here (a seccomp filter, an LSM or a sysctl Warden does not know)"
	}
	return f
}

// apparmorCommands install the profile for the binary at exe.
func apparmorCommands(exe string) []string {
	profile := strings.ReplaceAll(apparmorProfile, "@WARDEN@", apparmorQuote(exe))
	return []string{
		"sudo tee " + apparmorProfilePath + " >/dev/null <<'EOF'\n" + profile + "EOF",
		"sudo apparmor_parser -r " + apparmorProfilePath,
	}
}

// apparmorQuote escapes what AppArmor would read as a pattern or the end
// of the quoted path.
func apparmorQuote(path string) string {
	var b strings.Builder
	for _, r := range path {
		if strings.ContainsRune(`*?[]{}^"\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// wardenRealPath is this binary's path with every link resolved: AppArmor
// attaches a profile to the file exec'd, by its real path.
func wardenRealPath() string {
	exe, err := os.Executable()
	if err != nil {
		return "/path/to/warden"
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		return real
	}
	return exe
}

func sysctl(name string) string {
	b, err := os.ReadFile(filepath.Join(procSys, name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// inContainer reports the marks Docker and Podman leave.
func inContainer() bool {
	for _, f := range []string{"/.dockerenv", "/run/.containerenv"} {
		if _, err := os.Stat(f); err == nil {
			return true
		}
	}
	return os.Getenv("CODESPACES") != "" || os.Getenv("REMOTE_CONTAINERS") != ""
}

func printFallback(w io.Writer, f *doctorFallback) {
	if f == nil {
		return
	}
	fmt.Fprintf(w, "\nfallback: user namespaces are refused here (%s), so sandboxed commands run under Landlock and seccomp alone (%s): writes stay confined; what that loses is listed under \"not enforced\"\n", f.Why, f.Mechanism)
	fmt.Fprintf(w, "  - network: %s\n", f.Network)
	fmt.Fprintf(w, "  - what refuses, and what to do: %s\n", f.Fix)
	if len(f.Commands) > 0 {
		// Unindented, to be pasted as they are (a here-document ends at
		// a line that is EOF alone).
		fmt.Fprintf(w, "for the full sandbox, run:\n%s\n", strings.Join(f.Commands, "\n"))
	}
}
