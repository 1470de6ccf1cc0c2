//go:build !linux

package sandbox

// linuxAskEnforcement is Linux's alone.
func linuxAskEnforcement() []string { return nil }
