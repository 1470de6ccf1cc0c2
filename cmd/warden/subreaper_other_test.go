//go:build !linux

package main

// subreaperEnv is Linux's (exit_hold_linux_test.go): nothing sets it here.
const subreaperEnv = "WARDEN_TEST_SUBREAPER"

func subreaperMain([]string) int { return 125 }
