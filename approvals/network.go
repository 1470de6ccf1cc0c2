package approvals

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// NetworkConfig is what a NetworkDecider works with. The editor builds one
// per connection (warden serve), the CLI one per command (exec, run); the
// Session and Audit are the same ones commands use.
type NetworkConfig struct {
	Policy Policy
	// Rules are the rules in force; nil means none (everything asks).
	Rules *rules.RuleBook
	// RulesDir is where "Always allow `<host>`" appends its network_rule
	// (default.rules); empty offers no "Always allow".
	RulesDir string
	// Prompter asks the user; nil means nobody can be asked (deny).
	Prompter Prompter
	// Session remembers "Allow for session" and first contacts; nil gives
	// the decider a store of its own.
	Session *SessionStore
	// Audit records answers and connections; nil records nothing.
	Audit *AuditLog
	// Workspace are the roots whose git configuration names the
	// repository's own remotes (a dialog fact).
	Workspace []string
	// Context bounds the dialogs (the server's life); nil is Background.
	// A dialog also ends once every connection waiting on it is gone.
	Context context.Context
	// Notify tells the user what is not a question (a saved rule).
	Notify func(msg string)
}

// NetworkDecider decides each new destination a sandboxed command wants:
// the network rules, then the approval policy, then the user, through the
// same Prompter as commands. It implements netproxy.Decider and
// netproxy.Recorder. Concurrent connections to one destination share one
// dialog; "Allow once" releases exactly the connections waiting on it.
type NetworkDecider struct {
	cfg     NetworkConfig
	session *SessionStore

	mu      sync.Mutex
	pending map[string]*netPrompt
	runs    map[string]*runStop
	grants  map[string]*runGrant // by RunID (network_grant.go)
}

var (
	_ netproxy.Decider  = (*NetworkDecider)(nil)
	_ netproxy.Recorder = (*NetworkDecider)(nil)
)

// netPrompt is one dialog and the connections waiting for its answer.
type netPrompt struct {
	done     chan struct{}
	cancel   context.CancelFunc
	waiters  int
	runIDs   map[string]bool
	stopped  map[string]bool // runs "Deny and stop" stopped
	decision ReviewDecision
	err      error
}

type runStop struct {
	stop func()
	// sandbox is what the run may write: a network allow rule from a
	// file it could have written is not applied (NetworkRulesFor).
	sandbox *Sandbox
}

// NewNetworkDecider returns a decider for cfg.
func NewNetworkDecider(cfg NetworkConfig) *NetworkDecider {
	s := cfg.Session
	if s == nil {
		s = NewSessionStore()
	}
	return &NetworkDecider{cfg: cfg, session: s, pending: map[string]*netPrompt{}, runs: map[string]*runStop{}}
}

// RegisterRun tells the decider how to stop the run whose Origin.RunID is
// runID, for "Deny and stop". The returned function unregisters it; call it
// when the run ends.
func (d *NetworkDecider) RegisterRun(runID string, stop func()) (unregister func()) {
	r := &runStop{stop: stop}
	d.mu.Lock()
	d.runs[runID] = r
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.runs[runID] == r {
			delete(d.runs, runID)
		}
	}
}

// Decide implements netproxy.Decider. Every path that is not an allow by a
// rule, the session or the user is a refusal: an ended context, a
// dismissed dialog, a lost editor, no prompter.
func (d *NetworkDecider) Decide(ctx context.Context, req netproxy.Request) netproxy.Verdict {
	dest := req.Dest
	dest.Host = rules.NormalizeHost(dest.Host)
	if dest.Host == "" || dest.Port <= 0 || dest.Port > 65535 {
		return deny(fmt.Sprintf("network to %s refused: not a host and port", command.EscapeText(HostPort(dest))))
	}
	if risk.NonCanonicalIP(dest.Host) {
		return deny(fmt.Sprintf("network to %s refused: an IP address must be written as a dotted quad", command.EscapeText(HostPort(dest))))
	}
	if ctx.Err() != nil {
		return deny(fmt.Sprintf("network to %s denied: the connection ended before it was decided", command.EscapeText(HostPort(dest))))
	}
	var ruleSet *rules.RuleSet
	var rulesErr error
	if d.cfg.Rules != nil {
		ruleSet, rulesErr = d.cfg.Rules.Current()
	}
	ev := d.evaluate(ruleSet, req.Origin.RunID, dest)
	ruleForbids := ev.Rule != nil && ev.Rule.Decision == rules.Forbidden
	if ev.Decision != rules.Allow && !ruleForbids && d.granted(req.Origin.RunID, dest) {
		// The user (or a rule) approved this host with the command; only a
		// forbid rule is stronger.
		d.session.markContacted(dest.Host)
		return netproxy.Verdict{Allow: true, Reason: fmt.Sprintf("network to %s allowed: granted to this command", command.EscapeText(HostPort(dest)))}
	}
	switch ev.Decision {
	case rules.Forbidden:
		if !ruleForbids && !ev.High {
			// The policy (never, granular) refused it, not the user: a
			// grant the user approves for the command would override it.
			d.noteRetryable(req.Origin.RunID, dest)
		}
		return deny(ev.Reason)
	case rules.Allow:
		d.session.markContacted(dest.Host)
		return netproxy.Verdict{Allow: true, Reason: ev.Reason}
	}
	if rulesErr != nil {
		ev.Reason += "; the rules failed to load"
	}
	if !ev.High && d.session.Remembered([]string{NetworkKey(dest)}) {
		d.session.markContacted(dest.Host)
		return netproxy.Verdict{Allow: true, Reason: fmt.Sprintf("network to %s allowed for this session", command.EscapeText(HostPort(dest)))}
	}
	return d.ask(ctx, req, dest, ev)
}

// ask joins the dialog pending for dest, or shows one, and waits for the
// answer or for ctx to end (a refusal for this connection only).
func (d *NetworkDecider) ask(ctx context.Context, req netproxy.Request, dest netproxy.Destination, ev NetworkEvaluation) netproxy.Verdict {
	key := NetworkKey(dest)
	preq := d.promptFor(req, dest, ev) // reads .git/config: not under the lock
	d.mu.Lock()
	p := d.pending[key]
	if p == nil {
		base := d.cfg.Context
		if base == nil {
			base = context.Background()
		}
		pctx, cancel := context.WithCancel(base)
		p = &netPrompt{done: make(chan struct{}), cancel: cancel, runIDs: map[string]bool{}}
		d.pending[key] = p
		go d.runPrompt(pctx, key, p, dest, preq)
	}
	p.waiters++
	if req.Origin.RunID != "" {
		p.runIDs[req.Origin.RunID] = true
	}
	d.mu.Unlock()

	select {
	case <-p.done:
	case <-ctx.Done():
		d.leave(key, p)
		if !ev.High {
			d.noteRetryable(req.Origin.RunID, dest) // the client gave up, the user said nothing
		}
		return deny(fmt.Sprintf("network to %s denied: the connection ended before the user answered", command.EscapeText(HostPort(dest))))
	}
	v := d.verdict(dest, p.decision, p.err)
	if !v.Allow && p.err != nil && !errors.Is(p.err, ErrNoPrompter) && !ev.High {
		// No answer (a timeout, a dismissed or lost dialog): not the user's
		// Deny, which a retry dialog a moment later must not re-ask.
		d.noteRetryable(req.Origin.RunID, dest)
	}
	if p.decision == Abort && p.err == nil && !p.stopped[req.Origin.RunID] {
		// No run was registered under this origin: nothing was stopped.
		v.Reason = fmt.Sprintf("network to %s denied by the user (deny and stop)", command.EscapeText(HostPort(dest)))
	}
	return v
}

// leave takes one waiter off p; the last one to leave withdraws the dialog,
// and a later connection shows a new one.
func (d *NetworkDecider) leave(key string, p *netPrompt) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p.waiters--
	select {
	case <-p.done:
		return
	default:
	}
	if p.waiters == 0 {
		p.cancel()
		if d.pending[key] == p {
			delete(d.pending, key)
		}
	}
}

// runPrompt shows the dialog, applies what the answer means beyond this
// request (session cache, saved rule, stopped runs), then releases every
// connection waiting on it.
func (d *NetworkDecider) runPrompt(ctx context.Context, key string, p *netPrompt, dest netproxy.Destination, preq PromptRequest) {
	defer p.cancel()
	decision, err := Denied, ErrNoPrompter
	if d.cfg.Prompter != nil {
		decision, err = d.cfg.Prompter.Prompt(ctx, preq)
	}
	if err == nil && !offered(preq, decision) {
		err = fmt.Errorf("the answer %s was not offered", decision)
	}
	if err != nil {
		decision = Denied // fail closed
	}
	switch decision {
	case ApprovedForSession:
		d.session.Remember(key)
	case ApprovedWithAmendment:
		d.persist(preq, dest)
	}
	d.mu.Lock()
	if d.pending[key] == p {
		delete(d.pending, key) // later connections ask again
	}
	var stops []func()
	if decision == Abort {
		p.stopped = map[string]bool{}
		for id := range p.runIDs {
			if r := d.runs[id]; r != nil {
				stops = append(stops, r.stop)
				p.stopped[id] = true
			}
		}
	}
	d.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	if decision.IsApproval() {
		d.session.markContacted(dest.Host)
	}
	ev := AuditEvent{Event: "decision", Kind: "network", Argv: preq.Argv, Cwd: preq.Cwd, Decision: decision.String(),
		Risk: preq.Risk.Level.String(), Network: &AuditNetwork{Host: dest.Host, Port: dest.Port, Protocol: string(dest.Protocol)}}
	if err != nil {
		ev.Reason = err.Error()
	}
	d.audit(ev)

	d.mu.Lock()
	p.decision, p.err = decision, err
	close(p.done)
	d.mu.Unlock()
}

// verdict is the one-line answer for a connection that waited on a dialog.
func (d *NetworkDecider) verdict(dest netproxy.Destination, decision ReviewDecision, err error) netproxy.Verdict {
	hp := command.EscapeText(HostPort(dest))
	switch {
	case err != nil && errors.Is(err, ErrNoPrompter):
		return deny(fmt.Sprintf("network to %s denied: approval needed and nobody could be asked", hp))
	case err != nil:
		return deny(fmt.Sprintf("network to %s denied: %s", hp, command.EscapeText(err.Error())))
	case decision == Approved:
		return netproxy.Verdict{Allow: true, Reason: fmt.Sprintf("network to %s allowed once by the user", hp)}
	case decision == ApprovedForSession:
		return netproxy.Verdict{Allow: true, Reason: fmt.Sprintf("network to %s allowed by the user for this session", hp)}
	case decision == ApprovedWithAmendment:
		return netproxy.Verdict{Allow: true, Reason: fmt.Sprintf("network to %s always allowed by the user", hp)}
	case decision == Abort:
		return deny(fmt.Sprintf("network to %s denied by the user, who stopped the command", hp))
	}
	return deny(fmt.Sprintf("network to %s denied by the user", hp))
}

// persist appends the network_rule "Always allow" stands for, and puts it
// in force at once; failing to save still lets this connection through
// (the user allowed it) and says so.
func (d *NetworkDecider) persist(preq PromptRequest, dest netproxy.Destination) {
	d.commit()
	added, err := rules.AppendNetworkAllowRule(d.cfg.RulesDir, dest.Host, dest.Protocol)
	ev := AuditEvent{Event: "amendment", Kind: "network", Argv: preq.Argv, Cwd: preq.Cwd,
		Network: &AuditNetwork{Host: dest.Host, Port: dest.Port, Protocol: string(dest.Protocol)}}
	switch {
	case err != nil:
		ev.Reason = err.Error()
		d.notify(fmt.Sprintf("Warden could not save the rule for %s: %v", dest.Host, err))
	case added:
		ev.Reason = "appended to " + rules.DefaultRulesFile
		d.notify(fmt.Sprintf("Warden saved: always allow %s (%s)", dest.Host, rules.DefaultRulesFile))
	default:
		ev.Reason = "already present in " + rules.DefaultRulesFile
	}
	d.audit(ev)
	if err == nil && d.cfg.Rules != nil {
		d.cfg.Rules.AddNetworkAllow(dest.Host, dest.Protocol, filepath.Join(d.cfg.RulesDir, rules.DefaultRulesFile))
	}
}

// Record implements netproxy.Recorder: one audit line per connection or
// refused attempt, with its bytes and the command that made it. It does
// not wait for the disk.
func (d *NetworkDecider) Record(r netproxy.Record) {
	decision := "deny"
	if r.Verdict.Allow {
		decision = "allow"
	}
	end := r.Start.Add(r.Duration)
	if r.Start.IsZero() {
		end = time.Now()
	}
	d.audit(AuditEvent{Time: end.UTC(), Event: "connection", Kind: "network", Argv: r.Origin.Command, Cwd: r.Origin.Workdir,
		Decision: decision, Reason: r.Verdict.Reason,
		Network: &AuditNetwork{Host: r.Dest.Host, Port: r.Dest.Port, Protocol: string(r.Dest.Protocol), RunID: r.Origin.RunID,
			BytesUp: r.BytesUp, BytesDown: r.BytesDown, DurationMS: r.Duration.Milliseconds(), Error: r.Err}})
	// The proxy calls Record on the connection's own path: the fsync runs
	// beside it (shared with every line written meanwhile), and the log's
	// Close syncs whatever is still pending.
	go d.commit()
}

func (d *NetworkDecider) audit(ev AuditEvent) {
	if err := d.cfg.Audit.Write(ev); err != nil {
		d.notify(err.Error())
	}
}

func (d *NetworkDecider) commit() {
	if err := d.cfg.Audit.Sync(); err != nil {
		d.notify(err.Error())
	}
}

func (d *NetworkDecider) notify(msg string) {
	if d.cfg.Notify != nil {
		d.cfg.Notify(msg)
	}
}

func deny(reason string) netproxy.Verdict { return netproxy.Verdict{Reason: reason} }

// promptFor builds the dialog for a destination: the command and where it
// runs, why Warden asks, and the host facts.
func (d *NetworkDecider) promptFor(req netproxy.Request, dest netproxy.Destination, ev NetworkEvaluation) PromptRequest {
	var remotes []string
	roots := d.cfg.Workspace
	if len(roots) == 0 && req.Origin.Workdir != "" {
		roots = []string{req.Origin.Workdir}
	}
	for _, r := range roots {
		remotes = append(remotes, risk.RepoRemoteHosts(r)...)
	}
	remotes = slices.Sorted(maps.Keys(setOf(remotes)))
	hostRisk := risk.NetworkRisk(dest.Host, req.BytesUp, remotes)
	high := ev.High || hostRisk.Level >= risk.High
	return PromptRequest{
		Kind: PromptNetwork, Argv: req.Origin.Command, Cwd: req.Origin.Workdir,
		Reason: ev.Reason, Sandboxed: true, Risk: hostRisk, AllowSession: !high,
		Network: &NetworkPrompt{
			Host: dest.Host, Port: dest.Port, Protocol: string(dest.Protocol),
			FirstContact: !d.session.Contacted(dest.Host), BytesUp: req.BytesUp,
			Facts: hostRisk.Facts,
			// A prompt rule would still ask after an allow rule: offer no
			// rule that would not change anything.
			Amend: !high && ev.Rule == nil && d.cfg.RulesDir != "" && rules.ValidRuleHost(dest.Host),
		},
	}
}

func setOf(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}

// SetRunSandbox records the sandbox a registered run works in.
func (d *NetworkDecider) SetRunSandbox(runID string, sb Sandbox) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r := d.runs[runID]; r != nil {
		r.sandbox = &sb
	}
}

// evaluate is EvaluateNetwork under the rules the run's sandbox leaves in
// force: an allow rule from a file the run could have written is set aside,
// and the reason says so.
func (d *NetworkDecider) evaluate(ruleSet *rules.RuleSet, runID string, dest netproxy.Destination) NetworkEvaluation {
	d.mu.Lock()
	var sb *Sandbox
	if r := d.runs[runID]; r != nil {
		sb = r.sandbox
	}
	d.mu.Unlock()
	if sb == nil {
		return EvaluateNetwork(ruleSet, d.cfg.Policy, dest)
	}
	return EvaluateNetworkIn(ruleSet, d.cfg.Policy, dest, *sb)
}
