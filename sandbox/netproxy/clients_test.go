package netproxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runClient runs a real client program with only the environment given
// (no proxy settings of the machine leak in).
func runClient(t *testing.T, env []string, name string, args ...string) (string, error) {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not on PATH", name)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}, env...)
	if root := os.Getenv("PYENV_ROOT"); root != "" {
		cmd.Env = append(cmd.Env, "PYENV_ROOT="+root)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestCurlThroughProxy(t *testing.T) {
	_, port := helloServer(t)
	e := startProxy(t, allowHosts("registry.test"), true)
	ok := fmt.Sprintf("http://registry.test:%d/pkg", port)
	refused := fmt.Sprintf("http://a.test:%d/pkg", port)

	out, err := runClient(t, nil, "curl", "-sS", "--max-time", "10", "-x", "http://"+e.addr, ok)
	if err != nil || !strings.HasPrefix(out, "hello registry.test") {
		t.Fatalf("curl -x: %v %q", err, out)
	}
	out, err = runClient(t, nil, "curl", "-sS", "--max-time", "10", "--socks5-hostname", e.addr, ok)
	if err != nil || !strings.HasPrefix(out, "hello registry.test") {
		t.Fatalf("curl --socks5-hostname: %v %q", err, out)
	}
	// Twins refused: the 403 body carries the reason; SOCKS fails.
	out, _ = runClient(t, nil, "curl", "-sS", "--max-time", "10", "-w", "%{http_code}", "-x", "http://"+e.addr, refused)
	if !strings.Contains(out, "not on the list: a.test") || !strings.HasSuffix(out, "403") {
		t.Fatalf("curl -x refused: %q", out)
	}
	if out, err = runClient(t, nil, "curl", "-sS", "--max-time", "10", "--socks5-hostname", e.addr, refused); err == nil {
		t.Fatalf("curl --socks5-hostname to a refused host succeeded: %q", out)
	}
	if l := e.resolver.lookups(); strings.Contains(strings.Join(l, ","), "a.test") {
		t.Fatalf("refused host resolved: %v", l)
	}
}

func TestPythonUrllibThroughProxy(t *testing.T) {
	_, port := helloServer(t)
	e := startProxy(t, allowHosts("registry.test"), true)
	script := `import sys, urllib.request, urllib.error
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
`
	env := []string{"HTTP_PROXY=http://" + e.addr, "http_proxy=http://" + e.addr}
	out, err := runClient(t, env, "python3", "-c", script, fmt.Sprintf("http://registry.test:%d/py", port))
	if err != nil || !strings.HasPrefix(out, "hello registry.test") {
		t.Fatalf("python urllib: %v %q", err, out)
	}
	out, err = runClient(t, env, "python3", "-c", script, fmt.Sprintf("http://b.test:%d/py", port))
	if err != nil || !strings.HasPrefix(out, "403 ") || !strings.Contains(out, "not on the list: b.test") {
		t.Fatalf("python urllib refused: %v %q", err, out)
	}
}

// TestCurlPostExpectContinue: curl's POST with Expect: 100-continue goes
// through without curl's one-second wait, body intact.
func TestCurlPostExpectContinue(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "got %d bytes, expect=%q", len(b), r.Header.Get("Expect"))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	e := startProxy(t, allowHosts("registry.test"), true)
	data := t.TempDir() + "/body"
	if err := os.WriteFile(data, []byte(strings.Repeat("x", 100000)), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := runClient(t, nil, "curl", "-sS", "--max-time", "10", "-x", "http://"+e.addr,
		"--data-binary", "@"+data, "-H", "Expect: 100-continue", "http://registry.test:"+u.Port()+"/upload")
	if err != nil || out != `got 100000 bytes, expect=""` {
		t.Fatalf("curl POST: %v %q", err, out)
	}
	if took := time.Since(start); took > 900*time.Millisecond {
		t.Fatalf("curl POST took %v: waited for a 100 Continue", took)
	}
}
