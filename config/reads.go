package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// The read policy's settings: read_access, read_deny, read_allow and
// readable_roots. Paths are absolute or start with ~/.

func (c Config) validateReads() error {
	switch c.ReadAccess {
	case "", "full", "deny-secrets", "restricted":
	default:
		return fmt.Errorf("read_access %q: want full, deny-secrets or restricted", c.ReadAccess)
	}
	for _, list := range []struct {
		key   string
		paths []string
	}{{"read_deny", c.ReadDeny}, {"read_allow", c.ReadAllow}, {"readable_roots", c.ReadableRoots}} {
		for _, p := range list.paths {
			if !filepath.IsAbs(p) && !strings.HasPrefix(p, "~/") {
				return fmt.Errorf("%s %q: want an absolute path or one under ~/", list.key, p)
			}
			if _, err := filepath.Match(p, ""); err != nil {
				return fmt.Errorf("%s %q: %w", list.key, p, err)
			}
		}
	}
	return nil
}

// ReadDeny is read_deny with ~ expanded, plus config.toml itself when it
// holds an API key: a sandboxed command's output goes to the model provider.
// Warden's whole state directory is hidden too: the undo history keeps
// copies of files from every workspace (which may include ones read_deny
// hides where they are), the session transcripts hold other workspaces'
// conversations and the model's earlier tool results, and the audit log
// every command and answer. None of it is the command's to read.
func ReadDeny(cfg Config) []string {
	out := append(ExpandHome(cfg.ReadDeny), StateDir())
	if fileHoldsAPIKey(File()) {
		out = append(out, File())
	}
	return out
}

// UndoDir is the undo history: the patches' and commands' recorded changes,
// and the file contents kept for them.
func UndoDir() string { return filepath.Join(StateDir(), "checkpoints") }

// ExpandHome returns paths with a leading ~/ replaced by the home directory
// (left as they are when there is none: the policy then refuses them).
func ExpandHome(paths []string) []string {
	out := make([]string, 0, len(paths))
	h, err := home()
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && err == nil {
			p = filepath.Join(h, rest)
		}
		out = append(out, p)
	}
	return out
}

// fileHoldsAPIKey reports whether the config file at path sets an API key.
func fileHoldsAPIKey(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var v struct {
		Model struct {
			APIKey string `toml:"api_key"`
		} `toml:"model"`
	}
	if _, err := toml.Decode(string(data), &v); err != nil {
		// Unparseable: hide it rather than guess.
		return strings.Contains(string(data), "api_key")
	}
	return v.Model.APIKey != ""
}
