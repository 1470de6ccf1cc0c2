package approvals

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/sandbox"
)

// Reads Warden does itself on the model's behalf (the agent's read_file and
// list_dir, editor buffers forwarded with a request) take the decision a
// command's read takes: what the sandbox hides is refused, and a secret file
// is asked about as high risk, as `cat FILE` would be.

// ReadGuard is the read decision for one read or listing: the sandbox's read
// policy, resolved now, and the secret-file facts of the risk analysis.
type ReadGuard struct {
	hidden *sandbox.ReadChecker
	ctx    risk.Context
}

// ReadGuard resolves the sandbox's read policy for reads from cwd.
func (s Sandbox) ReadGuard(cwd string) (*ReadGuard, error) {
	c, err := s.Policy().ReadChecker()
	if err != nil {
		return nil, err
	}
	home := s.Policy().Home()
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return &ReadGuard{hidden: c, ctx: risk.Context{Cwd: cwd, Sandbox: s.Policy(), Home: home}}, nil
}

// Hidden returns a *sandbox.ReadHiddenError when the read policy hides path
// (absolute) or real (where it leads; "" to resolve it), nil otherwise.
func (g *ReadGuard) Hidden(path, real string) error { return g.hidden.Check(path, real) }

// SecretRisk is the risk of handing path's content to the model, as the
// analysis judges `cat PATH`: high when it or where it leads is a secret
// file (.env, a private key, a token store); ok is false otherwise.
func (g *ReadGuard) SecretRisk(path, real string) (r risk.Risk, ok bool) {
	as := risk.NewAssessor(g.ctx)
	as.Reads(path)
	if real != "" && real != path {
		as.Reads(real)
	}
	if !as.ReadsSecret() {
		return risk.Risk{}, false
	}
	r = as.Found()
	r.ReadsSecrets = true
	r.Summary = risk.Summarize(&command.Analysis{}, r)
	return r, true
}

// ReadRequest is a read of a secret file Warden would do for the model.
type ReadRequest struct {
	// Tool names the reader for the dialog and the audit: read_file, or
	// editor_text for a selection sent with a request.
	Tool    string
	Path    string // absolute, as asked for
	Cwd     string
	Sandbox Sandbox
	Risk    risk.Risk // from SecretRisk
}

// ReadOutcome is the user's answer to a ReadRequest.
type ReadOutcome struct {
	Allowed bool
	Abort   bool   // "Deny and stop": the agent's turn ends
	Refused string // why not, when not allowed
}

// ApproveRead asks the user, through the dialog and the audit a command
// takes, whether the secret file may go to the model. High risk: Deny
// first, nothing remembered; under never nobody can be asked and it is
// refused; a dismissed dialog or a lost client is a denial.
func (o *Orchestrator) ApproveRead(ctx context.Context, req ReadRequest) ReadOutcome {
	argv := []string{req.Tool, req.Path}
	asked := fmt.Sprintf("%s would send this file's content to the model", req.Tool)
	reason := asked + ": high risk: " + req.Risk.Summary
	if o.Policy.rejects(categoryHeuristics) {
		refused := reason + "; the approval policy is " + o.Policy.Ask.String() + ", so nobody can be asked and it is refused"
		o.audit(AuditEvent{Event: "refused", Kind: "read", Argv: argv, Cwd: req.Cwd, Reason: refused})
		return ReadOutcome{Refused: refused}
	}
	// The risk line says how risky; the reason says only why it asks.
	shown := req.Risk
	shown.Level = max(shown.Level, risk.High)
	p := PromptRequest{
		Kind: PromptRead, Argv: argv, Files: []string{readDisplay(req.Path, req.Sandbox)}, Cwd: req.Cwd,
		Reason: asked, Sandbox: req.Sandbox, Risk: shown,
	}
	d, _, err := o.ask(ctx, p, []string{"read\x00" + filepath.Clean(req.Path)})
	switch {
	case err != nil:
		return ReadOutcome{Refused: fmt.Sprintf("%s; no answer (%v), so it was denied", reason, err)}
	case d == Abort:
		return ReadOutcome{Abort: true, Refused: "rejected by user (deny and stop)"}
	case d == Approved:
		return ReadOutcome{Allowed: true}
	}
	return ReadOutcome{Refused: "rejected by user"}
}

// readDisplay shows a read's path in the dialog: under the home directory
// as ~/..., wherever the workspace is (where a secret lies is the point),
// else absolute.
func readDisplay(path string, sb Sandbox) string {
	home := sb.Policy().Home()
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	as := risk.NewAssessor(risk.Context{Home: home})
	return as.Display(filepath.Clean(path), false)
}
