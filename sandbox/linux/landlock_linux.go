package linux

import (
	"errors"
	"fmt"
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockConfigs indexes go-landlock's per-ABI configurations: the access
// rights each ABI can restrict.
var landlockConfigs = []landlock.Config{{}, landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// Access rights, as go-landlock groups them for its RODirs, RWDirs,
// ROFiles and RWFiles rules.
const (
	llRead      = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	llReadWrite = llRead | ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
		ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock |
		ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSTruncate
	// llFile are the rights that apply to a file rather than a directory.
	llFile = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// applyLandlock restricts the helper's thread (and so the command, which is
// forked from it): read and execute everywhere but /dev, write only the
// writable roots and a few devices, no TCP when the network is off, no
// signals or abstract sockets out of the sandbox in any mode. It handles
// every right the kernel's ABI knows, checked here rather than with
// BestEffort, which would silently enforce nothing on a kernel without
// Landlock.
//
// It enforces on this thread only, with go-landlock's system-call layer,
// not with its Restrict: below ABI 8 Restrict stops every thread of the Go
// runtime to enforce on each (psx), which measured 0.4 ms at the median and
// 4 to 8 ms at the 90th percentile on a busy machine, the largest cost of a
// sandboxed start. Only this thread forks the command, so only its domain
// matters.
func applyLandlock(spec *Spec, pre *landlockBase) error {
	var base *landlockBase
	hide := landlockHides(spec)
	if pre != nil && spec.Readable == nil && hide == nil && pre.network == spec.Network && pre.namespaced == spec.Layers.Namespaces {
		base, pre = pre, nil // built ahead for the default read policy
	} else {
		var err error
		if base, err = newLandlockBase(spec.Network, spec.Layers.Namespaces, spec.Readable, hide); err != nil {
			return err
		}
	}
	pre.close() // built for reads this spec does not have
	defer base.close()
	attr, add := base.attr, base.add
	for _, r := range spec.Roots {
		// Refer: renames and links across directories (ABI 2).
		if err := add(r.Path, llReadWrite|ll.AccessFSRefer, false); err != nil {
			return err
		}
	}
	if err := landlockForwarder(base.ruleset, spec, attr.HandledAccessNet); err != nil {
		return err
	}
	if err := ll.LandlockRestrictSelf(base.ruleset, 0); err != nil {
		return fmt.Errorf("enforce: %w", err)
	}
	return nil
}

// landlockBase is a ruleset with the rules that do not depend on the
// command's roots: reads (the top level but /dev, or a restricted read
// policy's paths) and the devices. A spare helper builds the default one
// while it waits (prepare), so a run only adds its roots. Its rules hold
// the inodes they were opened on: an entry replaced since is not readable,
// which only ever takes access away, never gives it.
type landlockBase struct {
	ruleset    int
	network    Network
	namespaced bool
	attr       ll.RulesetAttr
	add        func(path string, access uint64, ignoreMissing bool) error
}

// newLandlockBase creates the ruleset for network and adds the read and
// device rules (readable nil: the default read policy), granting no read of
// hide (landlockHides).
func newLandlockBase(network Network, namespaced bool, readable []string, hide []HiddenPath) (*landlockBase, error) {
	abi := EffectiveLandlockABI()
	if abi < 1 {
		return nil, fmt.Errorf("the kernel has no Landlock (ABI %d)", abi)
	}
	cfg := landlockConfigs[min(abi, len(landlockConfigs)-1)]
	attr := ll.RulesetAttr{HandledAccessFS: uint64(cfg.HandledAccessFS), Scoped: uint64(cfg.Scoped)}
	if network != NetworkOn {
		attr.HandledAccessNet = uint64(cfg.HandledAccessNet) // no port is allowed...
	}
	// The scopes stay on with the network: abstract sockets (X11, D-Bus)
	// and signals reach other programs on this machine, not the network.
	ruleset, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return nil, fmt.Errorf("create the ruleset: %w", err)
	}
	b := &landlockBase{ruleset: ruleset, network: network, namespaced: namespaced, attr: attr}
	b.add = func(path string, access uint64, ignoreMissing bool) error {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if ignoreMissing && errors.Is(err, unix.ENOENT) {
				return nil
			}
			return fmt.Errorf("open %s for a rule: %w", path, err)
		}
		defer unix.Close(fd)
		return b.rule(fd, path, access)
	}
	if err := b.addReadsAndDevices(namespaced, readable, hide); err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *landlockBase) addReadsAndDevices(namespaced bool, readable []string, hide []HiddenPath) error {
	add := b.add
	if len(hide) > 0 {
		if err := b.addReadsAround(readable, hide); err != nil {
			return err
		}
	} else if readable != nil {
		// Restricted reads: only the listed paths (and the roots below).
		for _, p := range readable {
			if err := add(p, llRead, true); err != nil {
				return err
			}
		}
	} else if err := readTopLevel(add); err != nil {
		return err
	}
	type deviceRule struct {
		path   string
		access uint64
	}
	const rw = llReadWrite | ll.AccessFSIoctlDev
	devices := []deviceRule{
		{"/dev", ll.AccessFSReadDir},
		{"/dev/random", llRead}, {"/dev/urandom", llRead},
		{"/dev/null", rw}, {"/dev/zero", rw}, {"/dev/full", rw}, {"/dev/tty", rw},
	}
	if namespaced {
		// Private to the sandbox.
		devices = append(devices, deviceRule{"/dev/shm", rw}, deviceRule{"/dev/pts", rw})
	}
	for _, d := range devices {
		if err := add(d.path, d.access, d.path != "/dev"); err != nil {
			return err
		}
	}
	return nil
}

// rule grants access beneath the file open at fd (path names it in errors).
func (b *landlockBase) rule(fd int, path string, access uint64) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s for a rule: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= llFile // directory rights on a file are an error
	}
	if access &= b.attr.HandledAccessFS; access == 0 {
		return nil
	}
	rule := ll.PathBeneathAttr{ParentFd: fd, AllowedAccess: access}
	if err := ll.LandlockAddPathBeneathRule(b.ruleset, &rule, 0); err != nil {
		return fmt.Errorf("add the rule for %s: %w", path, err)
	}
	return nil
}

// close releases the ruleset; nil is fine.
func (b *landlockBase) close() {
	if b != nil && b.ruleset >= 0 {
		unix.Close(b.ruleset)
		b.ruleset = -1
	}
}

// readTopLevel grants reads of everything at the top level except /dev,
// whose devices are granted one by one (raw disks are readable to root
// otherwise).
func readTopLevel(add func(string, uint64, bool) error) error {
	entries, err := os.ReadDir("/")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if p := "/" + e.Name(); p != "/dev" {
			if err := add(p, llRead, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// EffectiveLandlockABI is the kernel's ABI, lowered to 5 when the signal
// scoping fix (errata bit 1) is missing, as go-landlock does.
func EffectiveLandlockABI() int {
	k := Probe()
	abi := k.LandlockABI
	if abi >= 6 && k.LandlockErrata&0x2 == 0 {
		abi = 5
	}
	return abi
}
