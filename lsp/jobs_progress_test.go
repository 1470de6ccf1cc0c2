package lsp_test

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/wardenhq/warden/lsp/lsptest"
)

// A job does not wait for the client's answer to the progress token
// request, yet no progress goes out before that answer, and the end follows
// the begin and the report even when the job ended first. The twin: a
// client that answers at once gets the same sequence.
func TestJobRunsWhileTheClientCreatesItsProgress(t *testing.T) {
	for _, delay := range []time.Duration{300 * time.Millisecond, 0} {
		t.Run(delay.String(), func(t *testing.T) {
			c := startTest(t)
			c.OnRequest("window/workDoneProgress/create", func(json.RawMessage) (any, *lsptest.RPCError) {
				time.Sleep(delay)
				return nil, nil
			})
			mark := c.Mark()
			if _, err := c.ExecuteCommand("warden.test.sleep", map[string]any{"ms": 1}); err != nil {
				t.Fatal(err)
			}
			c.WaitFrom(mark, "$/progress", lsptest.ProgressKind("end"))
			var order []string
			answered := time.Time{}
			for _, m := range c.Messages()[mark:] {
				switch {
				case m.Dir == lsptest.Sent && len(m.ID) > 0 && m.Method == "" && answered.IsZero():
					answered = m.At
					order = append(order, "answer")
				case m.Method == "$/progress":
					var p struct {
						Value struct {
							Kind string `json:"kind"`
						} `json:"value"`
					}
					json.Unmarshal(m.Params, &p)
					order = append(order, p.Value.Kind)
				}
			}
			want := []string{"answer", "begin", "report", "end"}
			if len(order) != len(want) {
				t.Fatalf("messages %v, want %v", order, want)
			}
			for i := range want {
				if order[i] != want[i] {
					t.Fatalf("messages %v, want %v", order, want)
				}
			}
			// The job's own time, from its start to its result, as the
			// server logged it: it did not wait for the answer.
			// (stderr is a pipe of its own: the line may trail the end.)
			m := tookRE.FindStringSubmatch(c.Stderr())
			for i := 0; m == nil && i < 100; i++ {
				time.Sleep(20 * time.Millisecond)
				m = tookRE.FindStringSubmatch(c.Stderr())
			}
			if m == nil {
				t.Fatalf("no job finished line in the log:\n%s", c.Stderr())
			}
			took, err := time.ParseDuration(m[1])
			if err != nil {
				t.Fatal(err)
			}
			if delay > 0 && took >= delay {
				t.Errorf("the job took %v: it waited for the client's answer (%v)", took, delay)
			}
		})
	}
}

var tookRE = regexp.MustCompile(`msg="job finished".* took=(\S+)`)
