package approvals

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"github.com/wardenhq/warden/approvals/rules"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// durableRunner records, at the moment a command would start, whether every
// audit line written so far was already synced.
type durableRunner struct {
	log     *AuditLog
	durable []bool
}

func (r *durableRunner) Run(ctx context.Context, spec RunSpec) (RunResult, error) {
	r.log.mu.Lock()
	written := r.log.written
	r.log.mu.Unlock()
	r.durable = append(r.durable, written > 0 && r.log.synced.Load() == written)
	return RunResult{}, nil
}

func auditOrch(t *testing.T, ask AskForApproval, answers ...ReviewDecision) (*Orchestrator, *durableRunner, string) {
	t.Helper()
	dir := t.TempDir()
	log, err := OpenAuditLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	r := &durableRunner{log: log}
	return &Orchestrator{Policy: Policy{Ask: ask}, Runner: r, Audit: log, Prompter: &scriptedUser{answers: answers}}, r, dir
}

func auditExec(t *testing.T, o *Orchestrator, dir string, argv ...string) *ExecOutcome {
	t.Helper()
	out, err := o.Exec(context.Background(), ExecRequest{CommandRequest: CommandRequest{Argv: argv, Cwd: dir,
		Sandbox: Sandbox{Mode: WorkspaceWrite, Workspace: []string{dir}, WritableRoots: []string{dir}}}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The decision that let a command run is on disk before it runs, every line
// is on disk when Exec returns, and a command pays one fsync per barrier,
// not one per line.
func TestAuditDurableAtBarriersWithOneSyncEach(t *testing.T) {
	cases := []struct {
		name    string
		ask     AskForApproval
		answers []ReviewDecision
		argv    []string
		ran     bool
		lines   int
		syncs   uint64
	}{
		// requirement | run: one fsync before running, one before returning.
		{"allowed", OnRequest, nil, []string{"ls"}, true, 2, 2},
		// requirement, prompt | decision | run: before the dialog, before running, before returning.
		{"approved", Untrusted, []ReviewDecision{Approved}, []string{"touch", "x"}, true, 4, 3},
		// requirement, prompt | decision, refused: before the dialog, before returning.
		{"denied", Untrusted, []ReviewDecision{Denied}, []string{"touch", "x"}, false, 4, 2},
		// requirement, refused: one fsync for both.
		{"forbidden", OnRequest, nil, []string{"touch", "x"}, false, 2, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o, r, dir := auditOrch(t, tc.ask, tc.answers...)
			if tc.name == "forbidden" {
				o.Rules = forbidTouch(t)
			}
			out := auditExec(t, o, dir, tc.argv...)
			if out.Ran != tc.ran {
				t.Fatalf("ran = %v, want %v (%+v)", out.Ran, tc.ran, out)
			}
			if tc.ran && (len(r.durable) != 1 || !r.durable[0]) {
				t.Errorf("audit lines durable when the command started: %v, want [true]", r.durable)
			}
			if got := o.Audit.synced.Load(); got != uint64(tc.lines) {
				t.Errorf("%d lines durable when Exec returned, want %d", got, tc.lines)
			}
			if n := len(readAudit(t, dir)); n != tc.lines {
				t.Errorf("%d lines in the file, want %d", n, tc.lines)
			}
			if got := o.Audit.syncs.Load(); got != tc.syncs {
				t.Errorf("%d fsyncs, want %d", got, tc.syncs)
			}
		})
	}
}

func forbidTouch(t *testing.T) *rules.RuleBook {
	t.Helper()
	ruleSet := t.TempDir()
	writeRules(t, ruleSet, "team.rules", `prefix_rule(pattern=["touch"], decision="forbidden", justification="no touching")`)
	book, err := rules.NewRuleBook([]rules.RuleSource{{Dir: ruleSet}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return book
}

func readAudit(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, AuditFile))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// Concurrent commands share fsyncs, and each Sync covers its own line.
func TestAuditGroupCommit(t *testing.T) {
	dir := t.TempDir()
	log, err := OpenAuditLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := log.Write(AuditEvent{Event: "run", Kind: "command", Argv: []string{"echo", fmt.Sprint(i)}}); err != nil {
				errs <- err
				return
			}
			log.mu.Lock()
			mine := log.written
			log.mu.Unlock()
			if err := log.Sync(); err != nil {
				errs <- err
				return
			}
			if got := log.synced.Load(); got < mine {
				errs <- fmt.Errorf("Sync returned with %d lines durable, before line %d", got, mine)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(readAudit(t, dir)); got != n {
		t.Errorf("%d lines, want %d", got, n)
	}
	if s := log.syncs.Load(); s == 0 || s > n {
		t.Errorf("%d fsyncs for %d lines", s, n)
	}
	t.Logf("%d concurrent lines, %d fsyncs", n, log.syncs.Load())
	// Nothing new written: a Sync costs nothing.
	before := log.syncs.Load()
	if err := log.Sync(); err != nil || log.syncs.Load() != before {
		t.Errorf("an idle Sync made an fsync (err %v)", err)
	}
}

// A failed fsync is never followed by a Sync that claims success.
func TestAuditSyncFailureSticks(t *testing.T) {
	dir := t.TempDir()
	log, err := OpenAuditLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Record(AuditEvent{Event: "run"}); err != nil {
		t.Fatalf("healthy log: %v", err)
	}
	log.Write(AuditEvent{Event: "run"})
	log.f.Close() // the fsync now fails
	if err := log.Sync(); err == nil || !strings.Contains(err.Error(), "audit log") {
		t.Fatalf("Sync on a broken file: %v", err)
	}
	if err := log.Sync(); err == nil {
		t.Error("a second Sync after a failure reported success")
	}
}
