//go:build !linux

package sandbox

func prestartHelper(Policy, string) {}

func scansRoots() bool { return true }
