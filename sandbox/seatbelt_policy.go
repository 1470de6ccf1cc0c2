package sandbox

import "github.com/wardenhq/warden/sandbox/protect"

// SeatbeltProfile is the macOS profile for a policy and its resolved
// writable roots (Policy.Roots: the session's, whatever the command's working
// directory), with the -D parameters that fill in the paths (passing
// paths as parameters keeps quoting out of the profile). Protected subpaths
// (and repositories found in the roots) are excluded both as a literal (so a
// missing one cannot be created) and as a subpath (so nothing inside changes).
// The git dirs split by Root.Git are not among them: their data is
// writable, what git executes or obeys is not (seatbeltGit).
// Under NetworkAsk, proxyPort is the loopback port of Warden's proxy, the
// only place the command may connect to. The roots' paths are spelled as on
// disk (onDiskRoots); every deny of a protected path or a secret also
// matches it in any letter case (foldRegex) and comes after the allows it
// limits.
func SeatbeltProfile(p Policy, roots []protect.Root, proxyPort int) (profile string, params []string) {
	return seatbeltProfile(seatbeltSpec{
		Roots:     roots,
		Readable:  p.restrictedReadable(SeatbeltPlatformReadable),
		Hidden:    p.ReadDenyPatterns(),
		Shown:     p.Reads.Allow,
		Network:   seatbeltNetworkOf(p.network()),
		ProxyPort: proxyPort,
	})
}

// seatbeltNetworkOf is what the profile lets a command under mode reach.
func seatbeltNetworkOf(mode NetworkMode) seatbeltNet {
	switch mode {
	case NetworkOn:
		return seatbeltNetOn
	case NetworkAsk:
		return seatbeltNetProxy
	}
	return seatbeltNetOff
}
