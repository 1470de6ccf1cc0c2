package main

import (
	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

// policyReport is policy check's JSON: the command's evaluation, and for
// each destination the command names, what a connection would meet.
type policyReport struct {
	*approvals.Evaluation
	NetworkAccess sandbox.NetworkMode      `json:"network_access"`
	Network       []approvals.NetworkCheck `json:"network"`
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
			if m, err := config.ParseNetworkAccess(args[i+1]); err == nil && m != "" {
				out = append(out, a+"="+args[i+1])
				i++
				continue
			}
		}
		out = append(out, a)
	}
	return out
}
