package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/agent/modeltest"
)

// runAgentCLI runs `warden run` in dir against the fake model, with its own
// XDG dirs so transcripts and rules stay in the test.
func runAgentCLI(t *testing.T, srv *modeltest.Server, dir string, args ...string) (stdout, stderr string, code int, state string) {
	t.Helper()
	home := t.TempDir()
	state = filepath.Join(home, "state")
	cmd := exec.Command(wardenBin(t), append([]string{"run", "--cwd", dir}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_STATE_HOME=" + state,
		"OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=sk-test", "WARDEN_MODEL=fake-model"}
	stdout, stderr, code = runCmd(t, cmd)
	return stdout, stderr, code, state
}

func toolResult(srv *modeltest.Server, id string) string {
	for _, req := range srv.Requests() {
		for _, m := range req.Messages {
			if m.Role == "tool" && m.ToolCallID == id {
				return m.Content
			}
		}
	}
	return ""
}

func TestRunAgentInTheTerminal(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("hello\n"), 0o644)
	srv := modeltest.New(t,
		modeltest.Turn{Text: "Reading. ", Calls: []modeltest.Call{{ID: "read", Name: "read_file", Args: `{"path":"greet.txt"}`}}},
		modeltest.Turn{Calls: []modeltest.Call{{ID: "echo", Name: "shell", Args: `{"command":["cat","greet.txt"]}`}}},
		modeltest.Turn{Calls: []modeltest.Call{{ID: "esc", Name: "shell", Args: `{"command":["cat","greet.txt"],"sandbox_permissions":"require_escalated","justification":"read it"}`}}},
		modeltest.Turn{Calls: []modeltest.Call{{ID: "net", Name: "shell", Args: `{"command":["curl","https://example.com"],"sandbox_permissions":"require_escalated","justification":"fetch the page"}`}}},
		modeltest.Turn{Calls: []modeltest.Call{{ID: "patch", Name: "apply_patch", Args: `{"input":"*** Begin Patch\n*** Update File: greet.txt\n@@\n-hello\n+hello, world\n*** End Patch\n"}`}}},
		modeltest.Turn{Text: "I changed the greeting."},
	)
	stdout, stderr, code, state := runAgentCLI(t, srv, dir, "--deny", "greet", "the world")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "Reading. ") || !strings.HasSuffix(stdout, "I changed the greeting.\n") {
		t.Errorf("stdout = %q", stdout)
	}
	if got := toolResult(srv, "read"); !strings.Contains(got, "hello") {
		t.Errorf("read_file result %q", got)
	}
	if got := toolResult(srv, "echo"); !strings.Contains(got, "Exit code: 0") || !strings.Contains(got, "Sandboxed: yes") || !strings.Contains(got, "hello") {
		t.Errorf("cat result %q\nstderr:\n%s", got, stderr)
	}
	if got := toolResult(srv, "esc"); !strings.Contains(got, "Sandboxed: yes") || !strings.Contains(got, "you asked to run outside the sandbox; it ran inside it") {
		t.Errorf("a low-risk escalation request: %q", got)
	}
	if got := toolResult(srv, "net"); !strings.Contains(got, "denied") {
		t.Errorf("escalation result %q", got)
	}
	if !strings.Contains(stderr, "curl https://example.com") || !strings.Contains(stderr, "fetch the page") {
		t.Errorf("the prompt did not show the command and justification:\n%s", stderr)
	}
	if got := toolResult(srv, "patch"); !strings.Contains(got, "M greet.txt") {
		t.Errorf("patch result %q", got)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "greet.txt")); string(data) != "hello, world\n" {
		t.Errorf("greet.txt = %q", data)
	}
	if first := srv.Requests()[0].Messages[1]; first.Role != "user" || first.Content != "greet the world" {
		t.Errorf("task sent as %+v", first)
	}
	mds, _ := filepath.Glob(filepath.Join(state, "warden", "sessions", "*.md"))
	if len(mds) != 1 || !strings.Contains(stderr, mds[0]) {
		t.Errorf("transcripts %v, stderr:\n%s", mds, stderr)
	}
}

func TestRunWithoutAModelSaysHowToConfigureOne(t *testing.T) {
	home := t.TempDir()
	cmd := exec.Command(wardenBin(t), "run", "do something")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "c")}
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != exitUsage {
		t.Fatalf("err %v, output:\n%s", err, out)
	}
	for _, want := range []string{"no model configured", "WARDEN_MODEL", "OPENAI_BASE_URL", filepath.Join(home, "c", "warden", "config.toml")} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(strings.ToLower(string(out)), "editor") {
		t.Errorf("a terminal user is sent to editor settings:\n%s", out)
	}
	// Only the endpoint is missing: the message names that, not the model.
	cmd = exec.Command(wardenBin(t), "run", "do something")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "c"), "WARDEN_MODEL=m"}
	out, _ = cmd.CombinedOutput()
	if !strings.Contains(string(out), "set OPENAI_API_KEY (for OpenAI) or OPENAI_BASE_URL") || strings.Contains(string(out), "WARDEN_MODEL") {
		t.Errorf("with WARDEN_MODEL set:\n%s", out)
	}
}

// A model URL where nothing listens fails the run in under a second, and
// the message names the URL.
func TestRunAgainstAClosedPortFailsFast(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/v1"
	l.Close()
	home := t.TempDir()
	cmd := exec.Command(wardenBin(t), "run", "--cwd", t.TempDir(), "do something")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "OPENAI_BASE_URL=" + url, "WARDEN_MODEL=m"}
	start := time.Now()
	_, stderr, code := runCmd(t, cmd)
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
	if code != 1 || !strings.Contains(stderr, "cannot reach the model endpoint "+url) {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}
