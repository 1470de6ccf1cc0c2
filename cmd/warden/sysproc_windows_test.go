package main

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// noTerminalAttr starts a process without the tests' console.
func noTerminalAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.DETACHED_PROCESS}
}
