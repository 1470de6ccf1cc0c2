package netproxy

import "net/netip"

// nonPublic lists the ranges a host name may not resolve to: loopback,
// private, link-local, unique-local, CGNAT, unspecified, and the other
// ranges that never name a public service (multicast, reserved, broadcast).
var nonPublic = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",      // this network, unspecified
		"10.0.0.0/8",     // private
		"100.64.0.0/10",  // CGNAT
		"127.0.0.0/8",    // loopback
		"169.254.0.0/16", // link-local
		"172.16.0.0/12",  // private
		"192.0.0.0/24",   // IETF protocol assignments
		"192.168.0.0/16", // private
		"198.18.0.0/15",  // benchmarking
		"224.0.0.0/4",    // multicast
		"240.0.0.0/4",    // reserved and broadcast
		"::/128",         // unspecified
		"::1/128",        // loopback
		"fc00::/7",       // unique-local
		"fe80::/10",      // link-local
		"fec0::/10",      // site-local (deprecated)
		"ff00::/8",       // multicast
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	v4compat  = netip.MustParsePrefix("::/96")
)

// isPrivate reports whether a resolved address must not be reached by a
// host name. IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4,
// compatible) are judged by the address they embed.
func isPrivate(a netip.Addr) bool {
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a), v4compat.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
			return isPrivate(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			if isPrivate(netip.AddrFrom4([4]byte(b[2:6]))) {
				return true
			}
		}
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return true
		}
	}
	return !a.IsValid()
}
