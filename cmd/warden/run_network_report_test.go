package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wardenhq/warden/agent/modeltest"
)

// `warden run` names the connection Warden's proxy refused under the
// command's exit status: `curl -f` through a denied destination does not end
// as a bare "exit 22". The twin: a command that made no connection has no
// proxy line.
func TestRunReportsProxyRefusal(t *testing.T) {
	var hits atomic.Int32
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1); fmt.Fprintln(w, "content") }))
	defer host.Close()
	dest := strings.TrimPrefix(host.URL, "http://")
	// 127.0.0.1 in the sandbox is its own loopback unless curl goes through the proxy.
	curl, _ := json.Marshal(map[string]any{"command": []string{"curl", "-fsS", "--noproxy", "", host.URL + "/x"}})
	srv := modeltest.New(t,
		modeltest.Turn{Calls: []modeltest.Call{{ID: "curl", Name: "shell", Args: string(curl)}}},
		modeltest.Turn{Calls: []modeltest.Call{{ID: "true", Name: "shell", Args: `{"command":["sh","-c","exit 0"]}`}}},
		modeltest.Turn{Text: "Done."},
	)
	_, stderr, code, _ := runAgentCLI(t, srv, t.TempDir(), "--deny", "fetch it")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	want := "  exit 22 ("
	proxy := "  proxy: network to " + dest + " denied"
	at := strings.Index(stderr, "› Running curl")
	if at < 0 || !strings.Contains(stderr[at:], want) || !strings.Contains(stderr[at:], proxy) {
		t.Errorf("stderr lacks %q and %q after the curl line:\n%s", want, proxy, stderr)
	}
	if strings.Count(stderr, "  proxy: ") != 1 {
		t.Errorf("want one proxy line, for curl only:\n%s", stderr)
	}
	if hits.Load() != 0 {
		t.Errorf("the denied destination was reached")
	}
	if got := toolResult(srv, "curl"); !strings.Contains(got, "Exit code: 22") || !strings.Contains(got, "[Warden proxy: network to "+dest) {
		t.Errorf("the model was told %q", got)
	}
}
