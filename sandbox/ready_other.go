//go:build !linux

package sandbox

// launchWaitsReady: Start calls Command.Ready before launching.
const launchWaitsReady = false
