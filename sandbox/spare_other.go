//go:build !linux

package sandbox

// KeepSpareHelpers has nothing to keep where commands start without a
// helper process (macOS runs sandbox-exec directly).
func KeepSpareHelpers(on bool) {}

// RefillSpares has no spares to start.
func RefillSpares() {}

// PrepareSpare has nothing to prepare where there are no spare helpers.
func PrepareSpare(pol Policy, helper string) {}
