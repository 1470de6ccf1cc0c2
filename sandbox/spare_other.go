//go:build !linux

package sandbox

// KeepSpareHelpers has nothing to keep where commands start without a
// helper process (macOS runs sandbox-exec directly).
func KeepSpareHelpers(on bool) {}
