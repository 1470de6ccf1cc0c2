//go:build !linux

package sandbox

// Where commands start without a helper process (everywhere but Linux):
// nothing to wait for before the command, no spare helpers to keep, no
// network forwarding of Linux's own.

// launchWaitsReady: Start calls Command.Ready before launching.
const launchWaitsReady = false

func prestartHelper(Policy, string) {}

func scansRoots() bool { return true }

// KeepSpareHelpers has nothing to keep where commands start without a
// helper process (macOS runs sandbox-exec directly).
func KeepSpareHelpers(on bool) {}

// RefillSpares has no spares to start.
func RefillSpares() {}

// PrepareSpare has nothing to prepare where there are no spare helpers.
func PrepareSpare(pol Policy, helper string) {}

// linuxAskEnforcement is Linux's alone.
func linuxAskEnforcement() []string { return nil }
