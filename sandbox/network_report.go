package sandbox

import "strings"

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
