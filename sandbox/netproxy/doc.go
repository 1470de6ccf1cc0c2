// Package netproxy is the network proxy that sandboxed commands reach the
// outside through when the network is on "ask": an HTTP proxy (plain
// requests and CONNECT tunnels) and SOCKS5 for other TCP, served on one
// port that tells them apart by the first byte.
//
// The proxy knows nothing of rules or dialogs. For every new destination it
// asks a Decider, which the layer above implements, and it reports every
// connection to a Recorder for the audit. It decides before it resolves: a
// refused host costs not even a DNS query, and a name that resolves to a
// loopback or private address is refused unless the approved destination
// was that address or localhost itself.
package netproxy
