//go:build wardentest

package lsp

// Test instrumentation for network decisions (tag wardentest only): the
// command warden.test.network asks the server's network decider about one
// destination, from several connections at once, as the sandbox proxy
// will, and reports each verdict and whether "Deny and stop" stopped the
// run.

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/wardenhq/warden/lsp/jobs"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

type testNetworkParams struct {
	Host     string   `json:"host"`
	Port     int      `json:"port"`
	Protocol string   `json:"protocol"`
	Command  []string `json:"command"`
	Workdir  string   `json:"workdir"`
	RunID    string   `json:"runId"`
	Count    int      `json:"count"`
	BytesUp  int64    `json:"bytesUp"`
}

type testNetworkResult struct {
	Verdicts []netproxy.Verdict `json:"verdicts"`
	Stopped  bool               `json:"stopped"`
}

func init() {
	RegisterCommand(Command{
		Name:  "warden.test.network",
		Title: "Test: a sandboxed connection",
		Start: func(s *Server, args []json.RawMessage) (JobFunc, error) {
			var p testNetworkParams
			if err := DecodeArg(args, 0, &p); err != nil {
				return nil, err
			}
			if p.Count <= 0 {
				p.Count = 1
			}
			root := s.rootFor(p.Workdir)
			d, err := s.NetworkDecider(root)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, job *jobs.Job) (string, error) {
				var stopped atomic.Bool
				if p.RunID != "" {
					defer d.RegisterRun(p.RunID, func() { stopped.Store(true) })()
				}
				req := netproxy.Request{
					Dest:    netproxy.Destination{Host: p.Host, Port: p.Port, Protocol: netproxy.Protocol(p.Protocol)},
					Origin:  netproxy.Origin{RunID: p.RunID, Command: p.Command, Workdir: p.Workdir},
					BytesUp: p.BytesUp,
				}
				out := testNetworkResult{Verdicts: make([]netproxy.Verdict, p.Count)}
				var wg sync.WaitGroup
				for i := range out.Verdicts {
					wg.Add(1)
					go func() {
						defer wg.Done()
						out.Verdicts[i] = d.Decide(ctx, req)
						d.Record(netproxy.Record{Dest: req.Dest, Origin: req.Origin, Verdict: out.Verdicts[i], BytesUp: p.BytesUp})
					}()
				}
				wg.Wait()
				out.Stopped = stopped.Load()
				b, err := json.Marshal(out)
				return string(b), err
			}, nil
		},
	})
}
