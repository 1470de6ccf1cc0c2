package approvals

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"

	"github.com/wardenhq/warden/sandbox/netproxy"
)

// NetworkProxy joins Warden's proxy to the decider for the runs of one
// session (a CLI invocation, an editor connection): every sandboxed run
// under network ask gets a handler that serves its connections as that
// run, with the run's command, directory and granted hosts.
type NetworkProxy struct {
	server  *netproxy.Server
	decider *NetworkDecider
}

// NewNetworkProxy starts nothing: the proxy serves connections the sandbox
// hands over, one run at a time.
func NewNetworkProxy(d *NetworkDecider, opts netproxy.Options) *NetworkProxy {
	return &NetworkProxy{server: netproxy.New(d, d, opts), decider: d}
}

var runSeq atomic.Uint64

// forRun registers one run: stop ends it ("Deny and stop" in a network
// dialog), and done, called once the run is over, forgets it.
func (p *NetworkProxy) forRun(spec RunSpec, stop func()) (*runProxy, func()) {
	id := fmt.Sprintf("run-%d-%d", os.Getpid(), runSeq.Add(1))
	unregister := p.decider.RegisterRun(id, stop)
	p.decider.SetRunSandbox(id, spec.Sandbox)
	revoke := p.decider.GrantHosts(id, spec.Grant.Network)
	h := &runProxy{server: p.server, decider: p.decider, origin: netproxy.Origin{RunID: id, Command: spec.Argv, Workdir: spec.Cwd}}
	return h, func() {
		unregister()
		revoke()
		p.server.Forget(id)
	}
}

// runProxy is the sandbox.ProxyHandler of one run.
type runProxy struct {
	server  *netproxy.Server
	decider *NetworkDecider
	origin  netproxy.Origin
}

// RefusedHosts are the destinations (host:port) the run was refused that a
// grant would let through (NetworkDecider.RetryableHosts); call it before
// the run's done function.
func (r *runProxy) RefusedHosts() []string { return r.decider.RetryableHosts(r.origin.RunID) }

func (r *runProxy) ServeConn(ctx context.Context, c net.Conn) { r.server.ServeConn(ctx, c, r.origin) }

// NetworkNotes tells the run's result (and so the model) which hosts were
// refused and why, once the run's connections are done.
func (r *runProxy) NetworkNotes() []string {
	var notes []string
	for _, f := range r.server.Refusals(r.origin.RunID) {
		n := f.Reason
		if f.Count > 1 {
			n += fmt.Sprintf(" (%d connections)", f.Count)
		}
		notes = append(notes, n)
	}
	return notes
}
