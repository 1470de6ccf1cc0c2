//go:build unix

package main

import "syscall"

// noTerminalAttr starts a process in a new session, without a controlling
// terminal.
func noTerminalAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
