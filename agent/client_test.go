package agent

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/wardenhq/warden/agent/modeltest"
	"github.com/wardenhq/warden/config"
)

func testClient(t testing.TB, url string) *Client {
	t.Helper()
	c, err := NewClient(config.Model{Name: "fake-model", BaseURL: url, APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	c.Backoff = time.Millisecond
	return c
}

func TestClientMergesFragmentedToolCalls(t *testing.T) {
	args0 := `{"command":["go","test","./..."],"workdir":"src","justification":"run the tests"}`
	args1 := `{"path":"main.go"}`
	srv := modeltest.New(t, modeltest.Turn{
		Text:  "Let me look. ",
		Calls: []modeltest.Call{{ID: "a", Name: "shell", Args: args0}, {ID: "b", Name: "read_file", Args: args1}},
		Chunk: 3,
	})
	var streamed strings.Builder
	reply, err := testClient(t, srv.URL).Stream(context.Background(), Request{
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
		Tools:    NewRegistry(nil).Definitions(),
	}, func(s string) { streamed.WriteString(s) })
	if err != nil {
		t.Fatal(err)
	}
	if reply.Content != "Let me look. " || streamed.String() != reply.Content {
		t.Errorf("content %q, streamed %q", reply.Content, streamed.String())
	}
	if reply.FinishReason != openai.FinishReasonToolCalls {
		t.Errorf("finish = %q", reply.FinishReason)
	}
	if len(reply.ToolCalls) != 2 {
		t.Fatalf("tool calls = %+v", reply.ToolCalls)
	}
	if c := reply.ToolCalls[0]; c.ID != "a" || c.Function.Name != "shell" || c.Function.Arguments != args0 {
		t.Errorf("call 0 = %+v", c)
	}
	if c := reply.ToolCalls[1]; c.ID != "b" || c.Function.Name != "read_file" || c.Function.Arguments != args1 {
		t.Errorf("call 1 = %+v", c)
	}
	req := srv.Requests()[0]
	if req.Model != "fake-model" || !req.Stream || req.Auth != "Bearer sk-test" || len(req.Tools) != 5 {
		t.Errorf("request = model %q stream %v auth %q tools %d", req.Model, req.Stream, req.Auth, len(req.Tools))
	}
}

func TestClientRetriesRateLimitsAndServerErrors(t *testing.T) {
	srv := modeltest.New(t,
		modeltest.Turn{Status: http.StatusTooManyRequests},
		modeltest.Turn{Status: http.StatusBadGateway},
		modeltest.Turn{Text: "done"},
	)
	reply, err := testClient(t, srv.URL).Stream(context.Background(), Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Content != "done" || len(srv.Requests()) != 3 {
		t.Errorf("reply %q after %d requests", reply.Content, len(srv.Requests()))
	}
}

func TestClientGivesUpWithAClearMessage(t *testing.T) {
	for _, tc := range []struct {
		status   int
		want     []string
		requests int
	}{
		{http.StatusUnauthorized, []string{"refused the API key", "OPENAI_API_KEY"}, 1},
		{http.StatusNotFound, []string{"404", `"fake-model"`, "WARDEN_MODEL", "/v1"}, 1},
		{http.StatusServiceUnavailable, []string{"HTTP 503", "after 2 retries"}, 3},
	} {
		srv := modeltest.New(t, modeltest.Turn{Status: tc.status}, modeltest.Turn{Status: tc.status}, modeltest.Turn{Status: tc.status})
		c := testClient(t, srv.URL)
		c.Retries = 2
		_, err := c.Stream(context.Background(), Request{}, nil)
		if err == nil {
			t.Fatalf("HTTP %d: no error", tc.status)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("HTTP %d: %q lacks %q", tc.status, err, w)
			}
		}
		if n := len(srv.Requests()); n != tc.requests {
			t.Errorf("HTTP %d: %d requests, want %d", tc.status, n, tc.requests)
		}
	}
}

func TestClientUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c := testClient(t, "http://"+addr+"/v1")
	c.Retries = 1
	_, err = c.Stream(context.Background(), Request{}, nil)
	if err == nil || !strings.Contains(err.Error(), "cannot reach the model endpoint http://"+addr) || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("err = %v", err)
	}
}

func TestClientCancelStopsTheStreamAtOnce(t *testing.T) {
	srv := modeltest.New(t, modeltest.Turn{Hold: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := testClient(t, srv.URL).Stream(ctx, Request{}, nil)
		done <- err
	}()
	<-srv.Served()
	time.Sleep(20 * time.Millisecond) // let the stream start
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 3*time.Second { // margin for a loaded machine
			t.Errorf("cancel took %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Stream did not return after cancel")
	}
	select {
	case <-srv.Canceled():
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the client go away")
	}
}

func TestNoModelConfiguredSaysHow(t *testing.T) {
	_, err := NewClient(config.Model{})
	if !errors.Is(err, ErrNoModel) {
		t.Fatalf("err = %v", err)
	}
	for _, w := range []string{"WARDEN_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "[model]", "config.toml"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message lacks %q: %s", w, err)
		}
	}
	if _, err := NewClient(config.Model{Name: "m", BaseURL: "localhost:11434"}); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("bad URL: %v", err)
	}
}
