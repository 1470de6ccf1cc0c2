package config

import (
	"os"
	"path/filepath"
)

// ConfigDir is $XDG_CONFIG_HOME/warden (default ~/.config/warden): config.toml
// and the user's rules directory live here.
func ConfigDir() string {
	return xdgDir("XDG_CONFIG_HOME", ".config")
}

// StateDir is $XDG_STATE_HOME/warden (default ~/.local/state/warden): the audit
// log, session transcripts and patch checkpoints live here.
func StateDir() string {
	return xdgDir("XDG_STATE_HOME", filepath.Join(".local", "state"))
}

// RulesDir is the user's exec-policy rules directory.
func RulesDir() string { return filepath.Join(ConfigDir(), "rules") }

// File is the path of config.toml.
func File() string { return filepath.Join(ConfigDir(), "config.toml") }

func xdgDir(env, fallback string) string {
	if base := os.Getenv(env); filepath.IsAbs(base) {
		return filepath.Join(base, "warden")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		// No home (a bare service account): keep state beside the temp dir
		// rather than in the working directory, where a workspace could read it.
		home = os.TempDir()
	}
	return filepath.Join(home, fallback, "warden")
}
