package sandbox

import (
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// landlockConfigs indexes go-landlock's per-ABI configurations.
var landlockConfigs = []landlock.Config{{}, landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// applyLandlock restricts the helper (and so the command): read and execute
// everywhere but /dev, write only the writable roots and a few devices, no
// TCP when the network is off, no signals or abstract sockets out of the
// sandbox in any mode. It handles every right the kernel's ABI knows, checked here
// rather than with BestEffort, which would silently enforce nothing on a
// kernel without Landlock.
func applyLandlock(spec *helperSpec) error {
	abi := effectiveLandlockABI()
	if abi < 1 {
		return fmt.Errorf("the kernel has no Landlock (ABI %d)", abi)
	}
	cfg := landlockConfigs[min(abi, len(landlockConfigs)-1)]
	if spec.Network {
		cfg.HandledAccessNet = 0
	}
	// The scopes stay on with the network: abstract sockets (X11, D-Bus)
	// and signals reach other programs on this machine, not the network.

	var rules []landlock.Rule
	// Read everything at the top level except /dev, whose devices are
	// granted one by one (raw disks are readable to root otherwise).
	entries, err := os.ReadDir("/")
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := "/" + e.Name()
		if p == "/dev" {
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			continue // a dangling symlink
		}
		if st.IsDir() {
			rules = append(rules, landlock.RODirs(p))
		} else {
			rules = append(rules, landlock.ROFiles(p))
		}
	}
	rules = append(rules,
		landlock.PathAccess(llsys.AccessFSReadDir, "/dev"),
		landlock.ROFiles("/dev/random", "/dev/urandom").IgnoreIfMissing(),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/tty").WithIoctlDev().IgnoreIfMissing(),
	)
	if spec.Layers.Namespaces {
		// Private to the sandbox.
		rules = append(rules, landlock.RWDirs("/dev/shm", "/dev/pts").WithIoctlDev().IgnoreIfMissing())
	}
	for _, r := range spec.Roots {
		rw := landlock.RWDirs(r.Path)
		if abi >= 2 { // renames and links across directories
			rw = rw.WithRefer()
		}
		rules = append(rules, rw)
	}
	if err := cfg.Restrict(rules...); err != nil {
		return err
	}
	return nil
}

// effectiveLandlockABI is the kernel's ABI, lowered to 5 when the signal
// scoping fix (errata bit 1) is missing, as go-landlock does.
func effectiveLandlockABI() int {
	k := Probe()
	abi := k.LandlockABI
	if abi >= 6 && k.LandlockErrata&0x2 == 0 {
		abi = 5
	}
	return abi
}
