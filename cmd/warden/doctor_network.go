package main

import (
	"fmt"
	"io"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

// doctorNetwork is the network sandboxed commands get under config.toml,
// and how this machine enforces it.
type doctorNetwork struct {
	// Mode is off, ask or on, for the configured sandbox mode.
	Mode     string   `json:"mode"`
	Enforced []string `json:"enforced"`
	// Modes says how each mode would be enforced here.
	Modes       map[string][]string `json:"modes"`
	ConfigError string              `json:"config_error,omitempty"`
}

func networkReport(mechanism string) doctorNetwork {
	n := doctorNetwork{Modes: map[string][]string{}}
	for _, m := range []sandbox.NetworkMode{sandbox.NetworkOff, sandbox.NetworkAsk, sandbox.NetworkOn} {
		n.Modes[string(m)] = sandbox.NetworkEnforcement(m, mechanism)
	}
	cfg, err := config.Load(config.File())
	if err != nil {
		n.ConfigError = err.Error()
		cfg = config.Default()
	}
	mode, err := effectiveNetwork(cfg.SandboxMode, cfg.Network)
	if err != nil {
		n.ConfigError = err.Error()
		mode = sandbox.NetworkOff
	}
	n.Mode = string(mode)
	n.Enforced = n.Modes[n.Mode]
	return n
}

func printNetwork(w io.Writer, n doctorNetwork) {
	fmt.Fprintf(w, "\nnetwork (network_access in config.toml, --network): %s\n", n.Mode)
	if n.ConfigError != "" {
		fmt.Fprintf(w, "  - config does not load, showing the default: %s\n", n.ConfigError)
	}
	for _, l := range n.Enforced {
		fmt.Fprintf(w, "  - %s\n", l)
	}
	for _, m := range []string{"off", "ask", "on"} {
		if m != n.Mode {
			fmt.Fprintf(w, "  %s would be: %s\n", m, n.Modes[m][0])
		}
	}
}
