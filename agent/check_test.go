package agent

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/wardenhq/warden/config"
)

// closedURL is an address where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

func statusServer(t *testing.T, code int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// Each way a model endpoint can be wrong is told apart by one request.
func TestCheckTellsKeyURLAndDeadServerApart(t *testing.T) {
	ok := statusServer(t, 200, `{"object":"list","data":[{"id":"fake-model","object":"model"}]}`)
	for _, tc := range []struct {
		name, url, status, detail string
		listed                    bool
	}{
		{"ok", ok, "ok", "", true},
		{"bad key", statusServer(t, 401, `{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}`), "unauthorized", "refused the API key", false},
		{"wrong path", strings.TrimSuffix(ok, "/v1"), "not_found", "404", false},
		{"nothing listens", closedURL(t), "unreachable", "cannot reach", false},
	} {
		start := time.Now()
		res := testClient(t, tc.url).Check(context.Background())
		if res.Status != tc.status || !strings.Contains(res.Detail, tc.detail) || res.Listed != tc.listed {
			t.Errorf("%s: %+v, want status %s, detail with %q", tc.name, res, tc.status, tc.detail)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", tc.name, d)
		}
	}
}

// A model URL where nothing listens fails the agent's request in well under
// a second: a refused connection is not retried with backoff.
func TestStreamToClosedPortFailsFast(t *testing.T) {
	c, err := NewClient(config.Model{Name: "m", BaseURL: closedURL(t)})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Stream(context.Background(), Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "cannot reach the model endpoint") {
		t.Errorf("err = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a refused connection took %v to report", d)
	}
}

// The twin: a dropped connection after the server answered is still
// retried (a 503 first, then the answer).
func TestStreamStillRetriesServerErrors(t *testing.T) {
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		if n == 1 {
			http.Error(w, `{"error":{"message":"busy"}}`, 503)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	}))
	defer srv.Close()
	reply, err := testClient(t, srv.URL+"/v1").Stream(context.Background(), Request{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}, nil)
	if err != nil || reply.Content != "hi" || n != 2 {
		t.Errorf("reply %+v, err %v after %d requests", reply, err, n)
	}
}

// No model names what is missing, and the terminal's message does not send
// the user to editor settings.
func TestNoModelNamesTheMissingVariable(t *testing.T) {
	_, err := NewClient(config.Model{BaseURL: "http://127.0.0.1:11434/v1"})
	e, ok := err.(*NoModelError)
	if !ok || !strings.Contains(err.Error(), "WARDEN_MODEL") || strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("name missing: %v", err)
	}
	if !strings.Contains(err.Error(), "Editors") || strings.Contains(e.Terminal().Error(), "Editors") {
		t.Errorf("editor mention: %q / terminal %q", err, e.Terminal())
	}
	_, err = NewClient(config.Model{Name: "m"})
	if err == nil || strings.Contains(err.Error(), "WARDEN_MODEL") || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("endpoint missing: %v", err)
	}
}
