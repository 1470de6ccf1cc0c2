// Package config holds Warden's user settings and where its files live: the
// XDG config and state directories, config.toml, and the environment
// variables that override it. It imports nothing from Warden but internal
// helpers (internal/shellenv: the shell-entry files a workspace holds), so
// every layer may use it.
package config
