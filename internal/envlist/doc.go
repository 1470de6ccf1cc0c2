// Package envlist reads and sets variables in an environment held as a
// KEY=VALUE list (exec.Cmd.Env, os.Environ), as the sandbox and the
// toolchain caches build a command's environment.
package envlist
