package sandbox

import (
	"github.com/wardenhq/warden/sandbox/protect"
	"github.com/wardenhq/warden/sandbox/seatbelt"
)

// SeatbeltProfile is the macOS profile for a policy and its resolved
// writable roots (Policy.Roots: the session's, whatever the command's working
// directory), with the -D parameters that fill in the paths: see
// seatbelt.Profile. Under NetworkAsk, proxyPort is the loopback port of
// Warden's proxy, the only place the command may connect to.
func SeatbeltProfile(p Policy, roots []protect.Root, proxyPort int) (profile string, params []string) {
	return seatbelt.Profile(seatbelt.Spec{
		Roots:     roots,
		Readable:  p.restrictedReadable(seatbelt.PlatformReadable),
		Hidden:    p.ReadDenyPatterns(),
		Shown:     p.Reads.Allow,
		Network:   seatbeltNetworkOf(p.network()),
		ProxyPort: proxyPort,
	})
}

// seatbeltNetworkOf is what the profile lets a command under mode reach.
func seatbeltNetworkOf(mode NetworkMode) seatbelt.Network {
	switch mode {
	case NetworkOn:
		return seatbelt.NetworkOn
	case NetworkAsk:
		return seatbelt.NetworkProxy
	}
	return seatbelt.NetworkOff
}
