package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/lsp"
	"github.com/wardenhq/warden/lsp/lsptest"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

type networkResult struct {
	Verdicts []netproxy.Verdict `json:"verdicts"`
	Stopped  bool               `json:"stopped"`
}

// networkServer starts the test binary (it has warden.test.network, which
// asks the server's network decider as the sandbox proxy does) with its
// own config and state directories.
func networkServer(t *testing.T, settings map[string]any) (c *lsptest.Client, configHome, stateHome string) {
	t.Helper()
	configHome, stateHome = t.TempDir(), t.TempDir()
	c = lsptest.Start(t, lsptest.Options{Bin: lsptest.TestBinary(t), Env: []string{"XDG_CONFIG_HOME=" + configHome, "XDG_STATE_HOME=" + stateHome}})
	c.Initialize(settings)
	return c, configHome, stateHome
}

// connect asks the server about count concurrent connections and returns
// the verdicts.
func connect(t *testing.T, c *lsptest.Client, params map[string]any) networkResult {
	t.Helper()
	mark := c.Mark()
	raw, err := c.ExecuteCommand("warden.test.network", params)
	if err != nil {
		t.Fatalf("warden.test.network: %v", err)
	}
	var started lsp.JobStarted
	if err := json.Unmarshal(raw, &started); err != nil || started.JobID == "" {
		t.Fatalf("no job: %s", raw)
	}
	token := `"warden-job-` + started.JobID + `"`
	end := c.WaitFrom(mark, "$/progress", func(m lsptest.Message) bool {
		var p struct {
			Token json.RawMessage `json:"token"`
		}
		return lsptest.ProgressKind("end")(m) && json.Unmarshal(m.Params, &p) == nil && string(p.Token) == token
	})
	var p struct {
		Value struct {
			Message string `json:"message"`
		} `json:"value"`
	}
	end.Decode(&p)
	var res networkResult
	if err := json.Unmarshal([]byte(p.Value.Message), &res); err != nil {
		t.Fatalf("job result %q: %v", p.Value.Message, err)
	}
	return res
}

func pipInstall(c *lsptest.Client, extra map[string]any) map[string]any {
	p := map[string]any{"host": "pypi.org", "port": 443, "protocol": "https", "command": []string{"pip", "install", "requests"},
		"workdir": c.Dir, "runId": "run-1", "count": 1, "bytesUp": 300}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// TestNetworkDialogEachAction answers a sandboxed command's network dialog
// with each action through the real server and checks the verdict, what is
// remembered, and the rule "Always allow" writes.
func TestNetworkDialogEachAction(t *testing.T) {
	cases := []struct {
		name      string
		answer    lsptest.Handler
		allow     bool
		reason    string
		stopped   bool
		rule      bool
		asksAgain bool
	}{
		{"Allow once", lsptest.Choose("Allow once"), true, "network to pypi.org:443 allowed once by the user", false, false, true},
		{"Allow for session", lsptest.Choose("Allow for session"), true, "network to pypi.org:443 allowed by the user for this session", false, false, false},
		{"Always allow", lsptest.Choose("Always allow `pypi.org`"), true, "network to pypi.org:443 always allowed by the user", false, true, false},
		{"Deny", lsptest.Choose("Deny"), false, "network to pypi.org:443 denied by the user", false, false, true},
		{"Deny and stop", lsptest.Choose("Deny and stop"), false, "network to pypi.org:443 denied by the user, who stopped the command", true, false, true},
		{"dismissed", lsptest.Dismiss(), false, "network to pypi.org:443 denied: the approval dialog was dismissed", false, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, configHome, stateHome := networkServer(t, map[string]any{"approvalPolicy": "on-request"})
			c.OnRequest("window/showMessageRequest", tc.answer)
			mark := c.Mark()
			res := connect(t, c, pipInstall(c, nil))
			if len(res.Verdicts) != 1 || res.Verdicts[0].Allow != tc.allow || res.Verdicts[0].Reason != tc.reason || res.Stopped != tc.stopped {
				t.Errorf("result %+v, want allow %v %q stopped %v", res, tc.allow, tc.reason, tc.stopped)
			}
			ds := dialogs(c, mark)
			if len(ds) != 1 {
				t.Fatalf("%d dialogs, want 1", len(ds))
			}
			d := ds[0]
			want := []string{"Allow once", "Allow for session", "Always allow `pypi.org`", "Deny", "Deny and stop"}
			if strings.Join(titles(d), "|") != strings.Join(want, "|") {
				t.Errorf("actions %q, want %q", titles(d), want)
			}
			for _, s := range []string{
				"Warden: `pip install requests` wants to connect to pypi.org port 443 (https). Allow?",
				"\nin " + c.Dir, "First contact with this host this session", "Uploaded so far by this command: 300 bytes",
				"pypi.org is PyPI, the Python Package Index, a known package registry", "Risk: low",
			} {
				if !strings.Contains(d.Message, s) {
					t.Errorf("dialog lacks %q:\n%s", s, d.Message)
				}
			}
			if d.Type != protocol.MessageTypeInfo {
				t.Errorf("dialog type %v, want Info", d.Type)
			}
			rules, _ := os.ReadFile(filepath.Join(configHome, "warden", "rules", "default.rules"))
			if got := strings.Contains(string(rules), `network_rule(host="pypi.org", protocol="https", decision="allow")`); got != tc.rule {
				t.Errorf("default.rules = %q", rules)
			}
			audit, _ := os.ReadFile(filepath.Join(stateHome, "warden", "audit.log"))
			if !strings.Contains(string(audit), `"event":"connection","kind":"network","argv":["pip","install","requests"]`) ||
				!strings.Contains(string(audit), `"host":"pypi.org","port":443,"protocol":"https","run_id":"run-1","bytes_up":300`) {
				t.Errorf("audit log lacks the connection:\n%s", audit)
			}
			// The same destination again.
			c.OnRequest("window/showMessageRequest", lsptest.Choose("Deny"))
			mark = c.Mark()
			again := connect(t, c, pipInstall(c, nil))
			if got := len(dialogs(c, mark)) == 1; got != tc.asksAgain {
				t.Errorf("second connection showed a dialog = %v, want %v", got, tc.asksAgain)
			}
			if again.Verdicts[0].Allow == tc.asksAgain {
				t.Errorf("second connection %+v", again.Verdicts[0])
			}
		})
	}
}

// TestNetworkDialogSharedAndPolicy: five concurrent connections to one
// destination make one dialog and one answer lets all five through; under
// approval policy never nothing is asked and everything not allowed by a
// rule is refused (a rule's allow still holds: the twin).
func TestNetworkDialogSharedAndPolicy(t *testing.T) {
	c, _, _ := networkServer(t, map[string]any{"approvalPolicy": "on-request"})
	// The user takes a moment to answer, as people do: "Allow once" lets
	// through the connections waiting on this dialog, and all five are
	// waiting by then (one that came after the answer would ask again).
	allow := lsptest.Choose("Allow once")
	c.OnRequest("window/showMessageRequest", func(params json.RawMessage) (any, *lsptest.RPCError) {
		time.Sleep(300 * time.Millisecond)
		return allow(params)
	})
	mark := c.Mark()
	res := connect(t, c, pipInstall(c, map[string]any{"count": 5, "host": "files.pythonhosted.org"}))
	if n := len(dialogs(c, mark)); n != 1 {
		t.Errorf("%d dialogs for 5 concurrent connections, want 1", n)
	}
	for i, v := range res.Verdicts {
		if !v.Allow {
			t.Errorf("connection %d: %+v", i, v)
		}
	}
	if len(res.Verdicts) != 5 {
		t.Errorf("%d verdicts", len(res.Verdicts))
	}

	// A server under never, with a user rule that allows one host.
	cfg3 := t.TempDir()
	os.MkdirAll(filepath.Join(cfg3, "warden", "rules"), 0o755)
	os.WriteFile(filepath.Join(cfg3, "warden", "rules", "net.rules"), []byte(`network_rule(host="*.pythonhosted.org", protocol="https", decision="allow")`+"\n"), 0o644)
	c3 := lsptest.Start(t, lsptest.Options{Bin: lsptest.TestBinary(t), Env: []string{"XDG_CONFIG_HOME=" + cfg3, "XDG_STATE_HOME=" + t.TempDir()}})
	c3.Initialize(map[string]any{"approvalPolicy": "never"})
	c3.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
	mark = c3.Mark()
	refused := connect(t, c3, pipInstall(c3, nil))
	if v := refused.Verdicts[0]; v.Allow || v.Reason != "network to pypi.org:443 refused: approval policy is never" {
		t.Errorf("never: %+v", v)
	}
	allowed := connect(t, c3, pipInstall(c3, map[string]any{"host": "files.pythonhosted.org"}))
	if v := allowed.Verdicts[0]; !v.Allow || !strings.Contains(v.Reason, "net.rules:1") {
		t.Errorf("never with an allow rule: %+v", v)
	}
	if n := len(dialogs(c3, mark)); n != 0 {
		t.Errorf("%d dialogs under never", n)
	}
}

// TestNetworkDialogHostileAndHighRisk: the command that asked is written by
// the agent: its control characters reach the editor escaped; a link-local
// address (cloud metadata) is an Error dialog with Deny first and nothing to
// remember; the plain twin is an Info dialog with every action.
func TestNetworkDialogHostileAndHighRisk(t *testing.T) {
	c, _, _ := networkServer(t, map[string]any{"approvalPolicy": "on-request"})
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Deny"))
	mark := c.Mark()
	res := connect(t, c, pipInstall(c, map[string]any{"host": "169.254.169.254", "port": 80, "protocol": "http",
		"command": []string{"sh", "-c", "curl -s http://169.254.169.254/ #\r\x1b[2K pip install requests"}}))
	if v := res.Verdicts[0]; v.Allow {
		t.Errorf("verdict %+v", v)
	}
	ds := dialogs(c, mark)
	if len(ds) != 1 {
		t.Fatalf("%d dialogs", len(ds))
	}
	d := ds[0]
	if d.Type != protocol.MessageTypeError || strings.Join(titles(d), "|") != "Deny|Allow once|Deny and stop" {
		t.Errorf("metadata dialog: type %v actions %q", d.Type, titles(d))
	}
	if strings.ContainsAny(d.Message, "\r\x1b") || !strings.Contains(d.Message, `#\r\x1b[2K pip install requests`) ||
		!strings.Contains(d.Message, "169.254.169.254 is a link-local address (cloud metadata services live here)") {
		t.Errorf("dialog:\n%q", d.Message)
	}
	c.OnRequest("window/showMessageRequest", lsptest.Choose("Allow once"))
	mark = c.Mark()
	if v := connect(t, c, pipInstall(c, nil)).Verdicts[0]; !v.Allow {
		t.Errorf("twin: %+v", v)
	}
	if ds := dialogs(c, mark); len(ds) != 1 || ds[0].Type != protocol.MessageTypeInfo || len(ds[0].Actions) != 5 {
		t.Errorf("twin dialogs %+v", ds)
	}
}
