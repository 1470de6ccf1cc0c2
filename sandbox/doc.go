// Package sandbox runs commands under a SandboxPolicy: on Linux through a
// re-executed helper that enters namespaces, binds the filesystem view, drops
// capabilities and applies Landlock and seccomp before exec; on macOS through a
// generated Seatbelt profile. It also owns process limits, output capture,
// environment policy and sandbox-denial detection.
package sandbox
