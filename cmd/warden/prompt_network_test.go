package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/sandbox/netproxy"
)

// syncWriter is a strings.Builder safe for the prompter and the test.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestTerminalNetworkPrompt: a sandboxed command's connection is asked on
// the terminal with the dialog's facts and the five numbered actions; each
// answer means what it says, Enter denies.
func TestTerminalNetworkPrompt(t *testing.T) {
	cases := []struct {
		input string
		want  approvals.ReviewDecision
	}{
		{"1\n", approvals.Approved},
		{"2\n", approvals.ApprovedForSession},
		{"3\n", approvals.ApprovedWithAmendment},
		{"4\n", approvals.Denied},
		{"5\n", approvals.Abort},
		{"y\n", approvals.Approved},
		{"\n", approvals.Denied},
	}
	for _, c := range cases {
		g := &syncWriter{}
		p := &terminalPrompter{in: bufio.NewReader(strings.NewReader(c.input)), out: g}
		d := approvals.NewNetworkDecider(approvals.NetworkConfig{Policy: approvals.Policy{Ask: approvals.OnRequest},
			Prompter: recordingPrompter{p, nil}, RulesDir: t.TempDir()})
		v := d.Decide(context.Background(), netproxy.Request{
			Dest:    netproxy.Destination{Host: "pypi.org", Port: 443, Protocol: netproxy.HTTPS},
			Origin:  netproxy.Origin{Command: []string{"pip", "install", "requests"}, Workdir: "/w"},
			BytesUp: 10,
		})
		out := g.String()
		for _, s := range []string{
			"Warden: `pip install requests` wants to connect to pypi.org port 443 (https). Allow?",
			"\nin /w\n", "First contact with this host this session", "Uploaded so far by this command: 10 bytes",
			"pypi.org is PyPI, the Python Package Index, a known package registry",
			"  1) Allow once\n  2) Allow for session\n  3) Always allow `pypi.org`\n  4) Deny\n  5) Deny and stop\n",
		} {
			if !strings.Contains(out, s) {
				t.Errorf("%q: terminal lacks %q:\n%s", c.input, s, out)
			}
		}
		if v.Allow != c.want.IsApproval() {
			t.Errorf("%q: verdict %+v, want %s", c.input, v, c.want)
		}
	}
}

// recordingPrompter passes prompts through, noting each decision.
type recordingPrompter struct {
	inner approvals.Prompter
	got   chan approvals.ReviewDecision
}

func (r recordingPrompter) Prompt(ctx context.Context, req approvals.PromptRequest) (approvals.ReviewDecision, error) {
	d, err := r.inner.Prompt(ctx, req)
	if r.got != nil {
		r.got <- d
	}
	return d, err
}

// TestTerminalPromptsOneAtATime: two hosts asked at once are put one after
// the other, each answer going to its own question (attack: interleaved
// questions would take one answer for the other); a line typed after a
// prompt timed out answers the next prompt instead of vanishing (twin).
func TestTerminalPromptsOneAtATime(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	out := &syncWriter{}
	p := &terminalPrompter{in: bufio.NewReader(r), out: out}
	d := approvals.NewNetworkDecider(approvals.NetworkConfig{Policy: approvals.Policy{Ask: approvals.OnRequest}, Prompter: p})
	req := func(host string) netproxy.Request {
		return netproxy.Request{Dest: netproxy.Destination{Host: host, Port: 443, Protocol: netproxy.HTTPS},
			Origin: netproxy.Origin{Command: []string{"npm", "install"}, Workdir: "/w"}}
	}
	verdicts := map[string]chan netproxy.Verdict{"registry.npmjs.org": make(chan netproxy.Verdict, 1), "exfil.example": make(chan netproxy.Verdict, 1)}
	for h, ch := range verdicts {
		go func() { ch <- d.Decide(context.Background(), req(h)) }()
	}
	// Answer whichever question is on screen: allow the registry, deny the
	// other host.
	for answered := 0; answered < 2; {
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(out.String(), "Choose 1-") <= answered {
			if time.Now().After(deadline) {
				t.Fatalf("no question %d:\n%s", answered+1, out.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
		text := out.String()
		last := text[strings.LastIndex(text, "Warden: "):]
		if strings.Count(last, "Choose 1-") != 1 {
			t.Fatalf("questions interleaved:\n%s", text)
		}
		if strings.Contains(last, "registry.npmjs.org port 443") {
			io.WriteString(w, "1\n")
		} else {
			io.WriteString(w, "4\n")
		}
		answered++
	}
	if v := <-verdicts["registry.npmjs.org"]; !v.Allow {
		t.Errorf("registry: %+v", v)
	}
	if v := <-verdicts["exfil.example"]; v.Allow {
		t.Errorf("exfil.example: %+v", v)
	}

	// A prompt that times out keeps the line typed late for the next one.
	r2, w2 := io.Pipe()
	defer w2.Close()
	p2 := &terminalPrompter{in: bufio.NewReader(r2), out: io.Discard, timeout: 100 * time.Millisecond}
	cmd := approvals.PromptRequest{Kind: approvals.PromptCommand, Argv: []string{"touch", "x"}, Cwd: "/w"}
	if d, err := p2.Prompt(context.Background(), cmd); d != approvals.Denied || err == nil {
		t.Fatalf("timed out prompt: %s %v", d, err)
	}
	go io.WriteString(w2, "1\n")
	p2.timeout = 5 * time.Second
	if d, err := p2.Prompt(context.Background(), cmd); d != approvals.Approved || err != nil {
		t.Errorf("next prompt: %s %v, want the late line's answer", d, err)
	}
}
