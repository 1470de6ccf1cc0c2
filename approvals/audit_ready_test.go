package approvals

import (
	"context"
	"strings"
	"testing"
)

// readyRunner is a ReadyCaller: like the sandbox, it calls Ready just before
// the command would start and starts nothing when Ready fails. It records
// whether every audit line was durable at that moment.
type readyRunner struct {
	log     *AuditLog
	durable []bool
}

func (r *readyRunner) CallsReady() bool { return true }

func (r *readyRunner) Run(ctx context.Context, spec RunSpec) (RunResult, error) {
	if err := spec.Ready(); err != nil {
		return RunResult{ExitCode: -1}, err
	}
	r.log.mu.Lock()
	written := r.log.written
	r.log.mu.Unlock()
	r.durable = append(r.durable, written > 0 && r.log.synced.Load() == written)
	return RunResult{}, nil
}

// With a runner that calls Ready itself, the fsync before the run overlaps
// the runner's preparation, yet the decision is still on disk when the
// command starts, and the command still costs one fsync per barrier.
func TestAuditReadyCallerDurableBeforeStart(t *testing.T) {
	o, _, dir := auditOrch(t, OnRequest)
	r := &readyRunner{log: o.Audit}
	o.Runner = r
	for i := range 3 {
		out := auditExec(t, o, dir, "ls")
		if !out.Ran {
			t.Fatalf("ls did not run: %+v", out)
		}
		if len(r.durable) != i+1 || !r.durable[i] {
			t.Fatalf("audit lines durable when the command started: %v, want all true", r.durable)
		}
	}
	if got, want := o.Audit.syncs.Load(), uint64(6); got != want {
		t.Errorf("%d fsyncs for 3 commands, want %d (one before each run, one before each result)", got, want)
	}
	if n := len(readAudit(t, dir)); n != 6 {
		t.Errorf("%d lines in the file, want 6", n)
	}
}

// An audit log that cannot make the decision durable runs nothing, whether
// the runner waits itself (the sandbox) or the orchestrator waits for it.
// The twin with a healthy log runs.
func TestAuditBrokenLogRunsNothing(t *testing.T) {
	for _, ready := range []bool{false, true} {
		for _, broken := range []bool{true, false} {
			name := map[bool]string{false: "orchestrator-waits", true: "runner-waits"}[ready] + map[bool]string{false: "/healthy", true: "/broken"}[broken]
			t.Run(name, func(t *testing.T) {
				o, dr, dir := auditOrch(t, OnRequest)
				started := func() int { return len(dr.durable) }
				if ready {
					rr := &readyRunner{log: o.Audit}
					o.Runner = rr
					started = func() int { return len(rr.durable) }
				}
				if broken {
					o.Audit.f.Close() // every write and fsync fails from now on
				}
				out, err := o.Exec(context.Background(), ExecRequest{CommandRequest: CommandRequest{Argv: []string{"ls"}, Cwd: dir,
					Sandbox: Sandbox{Mode: WorkspaceWrite, Workspace: []string{dir}, WritableRoots: []string{dir}}}})
				if !broken {
					if err != nil || !out.Ran || started() != 1 {
						t.Fatalf("healthy log: ran %v, started %d, err %v", out != nil && out.Ran, started(), err)
					}
					return
				}
				if started() != 0 {
					t.Fatalf("the command started %d time(s) with no durable audit record", started())
				}
				if err == nil || !strings.Contains(err.Error(), "audit log") {
					t.Fatalf("err = %v, want the audit log's failure", err)
				}
			})
		}
	}
}
