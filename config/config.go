package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"reflect"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/wardenhq/warden/internal/homeentry"
)

// Config is the user's settings. Field names follow Codex's config.toml where
// Codex has the same setting, so a Codex user's habits carry over.
type Config struct {
	// ApprovalPolicy is untrusted, on-failure, on-request, never or granular.
	ApprovalPolicy string `toml:"approval_policy" json:"approvalPolicy,omitempty"`
	// Granular lists the prompt categories that are auto-rejected under the
	// granular policy: "sandbox_escalation", "rules", "patches", "network".
	Granular []string `toml:"granular_reject" json:"granularReject,omitempty"`
	// SandboxMode is read-only, workspace-write or danger-full-access.
	SandboxMode string `toml:"sandbox_mode" json:"sandboxMode,omitempty"`
	// Network is how sandboxed commands reach the network: off, ask
	// (through Warden's proxy, asked per host) or on; true and false mean
	// on and off. Empty is the sandbox mode's default.
	Network NetworkAccess `toml:"network_access" json:"networkAccess,omitempty"`
	// WritableRoots are extra directories that workspace-write may write.
	WritableRoots []string `toml:"writable_roots" json:"writableRoots,omitempty"`
	// HomeWritable are entries of the home directory (relative to it, such
	// as .npm or .cache/foo) that stay writable where a writable root is or
	// holds the home directory: every other entry at its top whose name
	// starts with "." is read-only there.
	HomeWritable []string `toml:"home_writable" json:"homeWritable,omitempty"`
	// ReadAccess is the sandbox's read policy: full, deny-secrets (the
	// default: credential stores hidden) or restricted (system directories,
	// toolchains, the workspace and ReadableRoots only; Linux).
	ReadAccess string `toml:"read_access" json:"readAccess,omitempty"`
	// ReadDeny are more paths or globs to hide (~ expanded), ReadAllow
	// exceptions to what is hidden, ReadableRoots what restricted adds.
	ReadDeny      []string `toml:"read_deny" json:"readDeny,omitempty"`
	ReadAllow     []string `toml:"read_allow" json:"readAllow,omitempty"`
	ReadableRoots []string `toml:"readable_roots" json:"readableRoots,omitempty"`
	// TrustedWorkspaces may loosen policy with their own .warden rules.
	TrustedWorkspaces []string `toml:"trusted_workspaces" json:"trustedWorkspaces,omitempty"`
	// EnvKeep names variables (shell globs, any case) that commands keep
	// although the secret filter would drop them (PGPASSWORD, DATABASE_URL).
	EnvKeep []string `toml:"env_keep" json:"envKeep,omitempty"`
	// CodexRulesDir, when set, is also loaded as exec-policy rules.
	CodexRulesDir string `toml:"codex_rules_dir" json:"codexRulesDir,omitempty"`
	// CacheMaxSize caps the sandbox's private toolchain caches ("5GB" when
	// unset; "unlimited" for no cap).
	CacheMaxSize string `toml:"cache_max_size" json:"cacheMaxSize,omitempty"`
	// ApprovalTimeout bounds how long a dialog may stay unanswered before it
	// counts as a denial.
	ApprovalTimeout Duration `toml:"approval_timeout" json:"approvalTimeout,omitempty"`
	// RecordChanges records, for undo, what each command that can write
	// changed in the workspace (on when unset); false runs commands
	// without that record: what they change cannot be undone.
	RecordChanges *bool `toml:"record_changes" json:"recordChanges,omitempty"`

	Model Model `toml:"model" json:"model"`

	// Origins says where each value that is not a default came from.
	Origins Origins `toml:"-" json:"-"`
}

// Model configures the OpenAI-compatible endpoint the agent talks to.
type Model struct {
	BaseURL string `toml:"base_url" json:"baseURL,omitempty"`
	APIKey  string `toml:"api_key" json:"apiKey,omitempty"`
	Name    string `toml:"name" json:"name,omitempty"`
	// RiskSummary asks the model for a short risk summary of commands that
	// need approval; off unless set.
	RiskSummary bool `toml:"risk_summary" json:"riskSummary,omitempty"`
	// RiskDeadline is how long a dialog may wait for that summary.
	RiskDeadline Duration `toml:"risk_deadline" json:"riskDeadline,omitempty"`
	// Extra are the provider's own request fields, sent beside Warden's
	// (reasoning_effort = "high", an OpenRouter provider = {order = [...]}).
	Extra map[string]any `toml:"extra" json:"extra,omitempty"`
}

// RecordsChanges reports whether commands' changes are recorded for undo.
func (c Config) RecordsChanges() bool { return c.RecordChanges == nil || *c.RecordChanges }

// Configured reports whether enough is set to talk to a model.
func (m Model) Configured() bool { return m.Name != "" && (m.BaseURL != "" || m.APIKey != "") }

// Default is the configuration with nothing set: ask before leaving the
// sandbox, write only the workspace, the sandbox mode's default network.
func Default() Config {
	return Config{
		ApprovalPolicy:  "on-request",
		SandboxMode:     "workspace-write",
		ApprovalTimeout: Duration(10 * time.Minute),
		Model:           Model{RiskDeadline: Duration(2 * time.Second)},
	}
}

// Load reads the config file at path over the defaults, then applies the
// environment. A missing file is not an error.
//
// A file that does not parse or validate is not applied at all, not even its
// good keys: like rules, a configuration is never half-applied, because the
// key that failed may be the one meant to tighten the others (a misspelt
// sandbox_mode next to network_access = true would widen the sandbox). The
// environment still applies, so the config returned with the error is the
// defaults plus OPENAI_BASE_URL, OPENAI_API_KEY and WARDEN_MODEL, and the
// error names the file, the line and the key.
func Load(path string) (Config, error) {
	cfg, err := loadFile(path)
	if err != nil {
		cfg = Default()
	}
	cfg.applyEnv()
	if err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// loadFile decodes and validates the file alone, before the environment.
func loadFile(path string) (Config, error) {
	cfg := Default()
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return cfg, nil
	case err != nil:
		return cfg, fmt.Errorf("read config: %w", err)
	}
	md, err := toml.Decode(string(data), &cfg)
	if err != nil {
		// The decoder's message has the line and the last key read.
		return cfg, fmt.Errorf("config %s: %s", path, strings.TrimPrefix(err.Error(), "toml: "))
	}
	cfg.Origins = fileOrigins(md)
	if undecoded := knownUndecoded(md.Undecoded()); len(undecoded) > 0 {
		k := undecoded[0].String()
		more := ""
		if len(undecoded) > 1 {
			more = fmt.Sprintf(" (and %d more)", len(undecoded)-1)
		}
		return cfg, fmt.Errorf("config %s: unknown key %q%s (see docs/configuration.md)", at(path, data, k), k, more)
	}
	if err := cfg.Validate(); err != nil {
		key, _, _ := strings.Cut(err.Error(), " ")
		return cfg, fmt.Errorf("config %s: %w", at(path, data, key), err)
	}
	return cfg, nil
}

// knownUndecoded leaves out the keys inside [model.extra]: a provider's own
// fields, sent as they are, which the decoder reports as undecoded below
// their first level.
func knownUndecoded(keys []toml.Key) []toml.Key {
	var out []toml.Key
	for _, k := range keys {
		if len(k) > 2 && k[0] == "model" && k[1] == "extra" {
			continue
		}
		out = append(out, k)
	}
	return out
}

// at is "path:line" for the line that sets key, or path alone.
func at(path string, data []byte, key string) string {
	if n := keyLine(data, key); n > 0 {
		return fmt.Sprintf("%s:%d", path, n)
	}
	return path
}

// keyLine is the line where the dotted key (model.name) is set in a TOML
// document, or 0 when it cannot be told. It reads only table headers and
// "key =" lines, which is all a config of plain values needs.
func keyLine(data []byte, key string) int {
	table := ""
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			table = strings.Trim(line, "[] \t")
			if j := strings.Index(table, "]"); j >= 0 {
				table = strings.TrimSpace(table[:j])
			}
			continue
		}
		name, _, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(name, ".")
		for j, p := range parts {
			parts[j] = strings.Trim(strings.TrimSpace(p), `"'`)
		}
		full := strings.Join(parts, ".")
		if table != "" {
			full = table + "." + full
		}
		if full == key {
			return i + 1
		}
	}
	return 0
}

// applyEnv lets the standard OpenAI variables and WARDEN_MODEL override the file.
func (c *Config) applyEnv() {
	c.Origins = c.Origins.clone()
	if v := os.Getenv("OPENAI_BASE_URL"); v != "" {
		c.Model.BaseURL = v
		c.Origins["model.base_url"] = FromEnv("OPENAI_BASE_URL")
	}
	if v := os.Getenv("OPENAI_API_KEY"); v != "" {
		c.Model.APIKey = v
		c.Origins["model.api_key"] = FromEnv("OPENAI_API_KEY")
	}
	if v := os.Getenv("WARDEN_MODEL"); v != "" {
		c.Model.Name = v
		c.Origins["model.name"] = FromEnv("WARDEN_MODEL")
	}
}

// MergeJSON overlays editor settings (LSP initializationOptions or
// didChangeConfiguration, shaped like Config's JSON) onto c. Fields the
// editor leaves out keep their value. The result is validated; on error c is
// unchanged, except for an *UnknownSettingsError: the unknown keys were
// left out and the rest applied.
func (c *Config) MergeJSON(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var unknown error
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		if dropped := dropUnknown(obj, reflect.TypeFor[Config](), ""); len(dropped) > 0 {
			unknown = &UnknownSettingsError{Keys: dropped}
			raw, _ = json.Marshal(obj)
		}
	}
	merged := *c
	merged.Origins = c.Origins.clone()
	merged.Origins.markEditor(obj)
	merged.WritableRoots = append([]string(nil), c.WritableRoots...)
	merged.TrustedWorkspaces = append([]string(nil), c.TrustedWorkspaces...)
	merged.Granular = append([]string(nil), c.Granular...)
	merged.EnvKeep = append([]string(nil), c.EnvKeep...)
	merged.ReadDeny = append([]string(nil), c.ReadDeny...)
	merged.ReadAllow = append([]string(nil), c.ReadAllow...)
	merged.HomeWritable = append([]string(nil), c.HomeWritable...)
	merged.ReadableRoots = append([]string(nil), c.ReadableRoots...)
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&merged); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if err := merged.Validate(); err != nil {
		return err
	}
	*c = merged
	return unknown
}

// Validate checks the enumerated settings and says which value is wrong.
// Every message starts with the key's TOML name (Load finds its line by it).
func (c Config) Validate() error {
	if !oneOf(c.ApprovalPolicy, "untrusted", "on-failure", "on-request", "never", "granular") {
		return fmt.Errorf("approval_policy %q: want untrusted, on-failure, on-request, never or granular", c.ApprovalPolicy)
	}
	if !oneOf(c.SandboxMode, "read-only", "workspace-write", "danger-full-access") {
		return fmt.Errorf("sandbox_mode %q: want read-only, workspace-write or danger-full-access", c.SandboxMode)
	}
	if _, err := ParseNetworkAccess(string(c.Network)); err != nil {
		return err
	}
	if err := c.validateReads(); err != nil {
		return err
	}
	if _, err := ParseSize(c.CacheMaxSize); err != nil {
		return err
	}
	for _, e := range c.HomeWritable {
		if _, err := homeentry.Clean(e); err != nil {
			return err
		}
	}
	for _, k := range c.EnvKeep {
		if _, err := path.Match(k, ""); err != nil || strings.TrimSpace(k) == "" {
			return fmt.Errorf("env_keep %q: want a variable name or a shell glob such as PGPASSWORD or AWS_*", k)
		}
	}
	for _, g := range c.Granular {
		if !oneOf(g, "sandbox_escalation", "rules", "patches", "network") {
			return fmt.Errorf("granular_reject %q: want sandbox_escalation, rules, patches or network", g)
		}
	}
	return nil
}

func oneOf(v string, allowed ...string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// Duration is a time.Duration written as "2s" or "10m" in TOML and JSON.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: write it like 2s or 10m", b)
	}
	*d = Duration(v)
	return nil
}

func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }
