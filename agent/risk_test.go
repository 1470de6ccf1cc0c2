package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/agent/modeltest"
)

func TestRiskSummaryAsksForJSONAndNeverLowers(t *testing.T) {
	srv := modeltest.New(t, modeltest.Turn{Text: `{"summary":"Deletes the build directory. Nothing else is touched.","level":"low"}`})
	r := &RiskSummarizer{Model: testClient(t, srv.URL), Deadline: 2 * time.Second}
	m, err := r.Summarize(context.Background(), RiskQuery{Argv: []string{"rm", "-rf", "build"}, Cwd: "/w", Sandbox: "workspace-write", StaticLevel: "high", StaticFacts: []string{"deletes build/ (12 files)"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Level != "low" || !strings.HasPrefix(m.Summary, "Deletes the build") {
		t.Errorf("model risk = %+v", m)
	}
	if got := MergeLevel("high", m.Level); got != "high" {
		t.Errorf("merge lowered the level to %s", got)
	}
	if got := MergeLevel("low", "high"); got != "high" {
		t.Errorf("merge did not raise: %s", got)
	}
	req := srv.Requests()[0]
	if req.ResponseFormat == nil || req.ResponseFormat.JSONSchema == nil || req.ResponseFormat.JSONSchema.Name != "risk" || !req.ResponseFormat.JSONSchema.Strict {
		t.Errorf("response format = %+v", req.ResponseFormat)
	}
	if len(req.Tools) != 0 || !strings.Contains(req.Last().Content, `["rm","-rf","build"]`) || !strings.Contains(req.Last().Content, "deletes build/ (12 files)") {
		t.Errorf("request: tools %d, user %q", len(req.Tools), req.Last().Content)
	}
}

func TestRiskSummaryGivesUpAtTheDeadline(t *testing.T) {
	srv := modeltest.New(t, modeltest.Turn{Hold: true})
	r := &RiskSummarizer{Model: testClient(t, srv.URL), Deadline: 100 * time.Millisecond}
	start := time.Now()
	_, err := r.Summarize(context.Background(), RiskQuery{Argv: []string{"ls"}})
	if err == nil {
		t.Fatal("no error from a model that never answered")
	}
	if d := time.Since(start); d > 5*time.Second { // margin for a loaded machine
		t.Errorf("took %v past a 100ms deadline", d)
	}
}

func TestRiskSummaryRejectsBadAnswers(t *testing.T) {
	for _, text := range []string{`not json`, `{"summary":"x","level":"extreme"}`, `{"summary":"","level":"low"}`, `{"summary":"x","level":"low","extra":1}`} {
		srv := modeltest.New(t, modeltest.Turn{Text: text})
		r := &RiskSummarizer{Model: testClient(t, srv.URL)}
		if m, err := r.Summarize(context.Background(), RiskQuery{Argv: []string{"ls"}}); err == nil {
			t.Errorf("%s accepted as %+v", text, m)
		}
	}
}
