package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/wardenhq/warden/config"
)

func init() {
	RegisterCommand(Command{Name: "warden.policy.set", Title: "Setting the policy", Run: setPolicy})
}

// policySetArgs is warden.policy.set's argument; absent fields keep their
// value.
type policySetArgs struct {
	ApprovalPolicy *string               `json:"approvalPolicy"`
	SandboxMode    *string               `json:"sandboxMode"`
	NetworkAccess  *config.NetworkAccess `json:"networkAccess"`
	GranularReject *[]string             `json:"granularReject"`
}

// setPolicy changes the approval and sandbox policy of this connection (not
// config.toml) and answers with the policy now in force. It applies to the
// next command or patch, including those of agent runs already going.
func setPolicy(_ context.Context, s *Server, args []json.RawMessage) (any, error) {
	if len(args) != 1 {
		return nil, InvalidParams("warden.policy.set takes one argument {approvalPolicy?, sandboxMode?, networkAccess?, granularReject?}, got %d", len(args))
	}
	var a policySetArgs
	dec := json.NewDecoder(bytes.NewReader(args[0]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		msg := describeJSONError("arguments[0]", err)
		if strings.Contains(msg, "unknown field") {
			msg += "; the policy fields are approvalPolicy, sandboxMode, networkAccess and granularReject"
		}
		return nil, InvalidParams("%s", msg)
	}
	if a == (policySetArgs{}) {
		return nil, InvalidParams("arguments[0] sets nothing: give approvalPolicy, sandboxMode, networkAccess or granularReject")
	}
	err := s.UpdateConfig(func(c *config.Config) error {
		if a.ApprovalPolicy != nil {
			c.ApprovalPolicy = *a.ApprovalPolicy
			c.SetOrigin("approval_policy", config.FromPolicySet)
		}
		if a.SandboxMode != nil {
			c.SandboxMode = *a.SandboxMode
			c.SetOrigin("sandbox_mode", config.FromPolicySet)
		}
		if a.NetworkAccess != nil {
			c.Network = *a.NetworkAccess
			c.SetOrigin("network_access", config.FromPolicySet)
		}
		if a.GranularReject != nil {
			c.Granular = append([]string(nil), (*a.GranularReject)...)
			c.SetOrigin("granular_reject", config.FromPolicySet)
		}
		return nil
	})
	if err != nil {
		return nil, InvalidParams("arguments[0]: %v", err)
	}
	s.log.Info("policy set from the editor", "approvalPolicy", s.Config().ApprovalPolicy, "sandboxMode", s.Config().SandboxMode, "network", s.Config().Network)
	return policyOf(s.Config()), nil
}
