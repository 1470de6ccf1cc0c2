package main

import (
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/config"
)

// policyReport is policy check's JSON: the command's evaluation, and for
// each destination the command names, what a connection would meet.
type policyReport struct {
	*approvals.Evaluation
	NetworkAccess string                   `json:"network_access"`
	Network       []approvals.NetworkCheck `json:"network"`
}

// networkModeFlag is policy check's --network: off, ask or on; bare
// --network is on, as it always was.
type networkModeFlag struct{ mode string }

func (f *networkModeFlag) String() string { return f.mode }

func (f *networkModeFlag) Set(v string) error {
	m, err := approvals.ParseNetworkMode(v)
	if err != nil {
		return err
	}
	f.mode = m
	return nil
}

// IsBoolFlag lets --network stand alone (on).
func (f *networkModeFlag) IsBoolFlag() bool { return true }

// resolve is the mode to check under: the flag, else the configuration:
// network on, else ask (the default for a sandbox with a proxy);
// danger-full-access has no sandbox, so no proxy: on.
func (f *networkModeFlag) resolve(cfg config.Config, mode approvals.SandboxMode) string {
	switch {
	case mode == approvals.DangerFullAccess:
		return approvals.NetworkOn
	case f.mode != "":
		return f.mode
	case cfg.Network:
		return approvals.NetworkOn
	}
	return approvals.NetworkAsk
}

// joinNetworkArg turns "--network MODE" into "--network=MODE" (a boolean
// flag would leave MODE as the command), up to the "--" that starts the
// command.
func joinNetworkArg(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if (a == "--network" || a == "-network") && i+1 < len(args) {
			if _, err := approvals.ParseNetworkMode(args[i+1]); err == nil {
				out = append(out, a+"="+args[i+1])
				i++
				continue
			}
		}
		out = append(out, a)
	}
	return out
}
