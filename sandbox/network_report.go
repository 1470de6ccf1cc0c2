package sandbox

import "strings"

// AskFallbackGap is what a run under network_access "ask" says where the
// kernel refuses namespaces (Result.NotEnforced): the command had no network.
const AskFallbackGap = `network_access "ask" ran as "off": this system refuses the network namespace that keeps a command to Warden's proxy, so commands get no network at all, never the host's; one that needs the network fails and can be retried outside the sandbox through the usual dialog (warden doctor says how to allow user namespaces here)`

// NetworkEnforcement says how a network mode is enforced by a sandbox
// mechanism (Report.Mechanism), one fact a line, for doctor. A mode the
// mechanism cannot enforce says that runs are refused.
func NetworkEnforcement(mode NetworkMode, mechanism string) []string {
	vars := "the command's proxy variables (" + strings.Join(append(append(proxySocksVars[:1:1], proxyHTTPVars[:4]...), "npm, yarn, pip, cargo, bundler"), ", ") + ") point at it; NO_PROXY=" + proxyNoProxy
	switch mode {
	case NetworkOn:
		return []string{"the host's network, unrestricted"}
	case NetworkAsk:
		switch mechanism {
		case "linux":
			return append(linuxAskEnforcement(), vars)
		case "seatbelt":
			return []string{"Seatbelt: outbound TCP to the proxy's port on the loopback only (a port Warden listens on for the run); no DNS service", vars}
		}
		if mechanism == "linux-landlock" {
			return []string{"falls back to off here: no network namespace can keep the command to Warden's proxy, so it gets no network (seccomp allows AF_UNIX sockets only, Landlock (ABI 4 and later) no TCP), never the host's; a command that needs the network fails and can be retried outside the sandbox through the dialog"}
		}
		return []string{"runs are refused here: a network namespace (Linux) or Seatbelt (macOS) is needed to keep the command to Warden's proxy"}
	}
	switch mechanism {
	case "linux":
		return []string{"its own network namespace with an unconfigured loopback", "seccomp: AF_UNIX sockets only", "Landlock (ABI 4 and later): no TCP bind or connect"}
	case "linux-landlock":
		return []string{"no network namespace: seccomp allows AF_UNIX sockets only, Landlock (ABI 4 and later) no TCP"}
	case "seatbelt":
		return []string{"Seatbelt: AF_UNIX sockets only, no connection out"}
	}
	return []string{"not enforced: no sandbox here"}
}
