package seatbelt

import (
	"fmt"
	"strings"
)

// seatbeltNetwork writes the profile's network rules. Through the proxy the
// command may open TCP sockets and connect to Warden's proxy on the loopback
// and nowhere else; the directory service's DNS (mDNSResponder) is not among
// the reachable services, so names resolve only through the proxy.
func seatbeltNetwork(b *strings.Builder, mode Network, proxyPort int) {
	switch mode {
	case NetworkOn:
		b.WriteString("\n; Network: on.\n(allow network-outbound)\n(allow network-inbound)\n(allow network-bind)\n(allow system-socket)\n")
	case NetworkProxy:
		fmt.Fprintf(b, "\n; Network: through Warden's proxy only, on the loopback port %d.\n"+
			"(allow system-socket (socket-domain AF_UNIX) (socket-domain AF_INET) (socket-domain AF_INET6))\n"+
			"(allow network-outbound (remote tcp \"localhost:%d\"))\n", proxyPort, proxyPort)
	default:
		b.WriteString("\n; Network: off. Unix socketpairs still work; connecting to sockets does not.\n(allow system-socket (socket-domain AF_UNIX))\n")
	}
}
