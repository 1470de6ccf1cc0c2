package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/sandbox/linux"
)

// The network-ask suite runs real commands (curl, Python, the probe) in the
// real sandbox under NetworkAsk, with a test ProxyHandler that forwards
// every connection to a web server this test runs outside the sandbox.
// Each attack (a way around the proxy) has a twin that goes through it.

// netFixture is the web server outside the sandbox: it answers every path
// with body, on all the host's addresses.
type netFixture struct {
	addr string // 127.0.0.1:PORT
	port string
	body string
	// external is the server on the host's first non-loopback address, if
	// the host has one.
	external string
}

func startNetFixture(t *testing.T) *netFixture {
	t.Helper()
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &netFixture{body: "warden-net-" + nonce()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, f.body)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, f.port, _ = net.SplitHostPort(ln.Addr().String())
	f.addr = net.JoinHostPort("127.0.0.1", f.port)
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
				f.external = net.JoinHostPort(ipn.IP.String(), f.port)
				break
			}
		}
	}
	return f
}

// forwardHandler is a minimal HTTP proxy: CONNECT tunnels and absolute-form
// requests both go to target, whatever host they name; the hosts asked for
// are remembered and reported as the run's notes.
type forwardHandler struct {
	target string
	mu     sync.Mutex
	hosts  []string
}

func (h *forwardHandler) ServeConn(ctx context.Context, c net.Conn) {
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	h.mu.Lock()
	h.hosts = append(h.hosts, req.Method+" "+req.Host)
	h.mu.Unlock()
	up, err := (&net.Dialer{}).DialContext(ctx, "tcp", h.target)
	if err != nil {
		fmt.Fprint(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	defer up.Close()
	if req.Method == http.MethodConnect {
		fmt.Fprint(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		go func() {
			io.Copy(up, br)
			up.(*net.TCPConn).CloseWrite()
		}()
		io.Copy(c, up)
		return
	}
	req.Close = true
	if err := req.Write(up); err != nil {
		return
	}
	io.Copy(c, up)
}

func (h *forwardHandler) NetworkNotes() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.hosts...)
}

func (h *forwardHandler) asked() []string { return h.NetworkNotes() }

// panicHandler fails the way a broken proxy would.
type panicHandler struct{}

func (panicHandler) ServeConn(ctx context.Context, c net.Conn) { panic("proxy broke") }

// returnHandler gives up at once without a word.
type returnHandler struct{}

func (returnHandler) ServeConn(ctx context.Context, c net.Conn) {}

// askRun runs script under workspace-write with network mode mode and proxy
// h, with the probe and the fixture's addresses in its environment.
func askRun(t *testing.T, f *netFixture, mode NetworkMode, h ProxyHandler, script string, adjust ...func(*Policy)) (Result, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	pol := Policy{Mode: WorkspaceWrite, Network: mode, Workspace: []string{ws}, ExcludeSlashTmp: true, ExcludeTmpdir: true}
	for _, a := range adjust {
		a(&pol)
	}
	set := map[string]string{probeEnv: "1", "PROBE": exe, "HOSTSRV": f.addr, "EXTSRV": f.external, "PORT": f.port, "BODY": f.body}
	spares.settle()
	return Run(context.Background(), Command{
		Argv: []string{"/bin/sh", "-c", script}, Cwd: ws, Policy: pol, Helper: testHelper,
		Env: EnvPolicy{Set: set}, Timeout: 20 * time.Second, Proxy: h,
	})
}

func mustAskRun(t *testing.T, f *netFixture, mode NetworkMode, h ProxyHandler, script string) Result {
	t.Helper()
	res, err := askRun(t, f, mode, h, script)
	if err != nil {
		t.Fatalf("run %q: %v", script, err)
	}
	if res.TimedOut {
		t.Fatalf("run %q timed out:\n%s", script, res.Output)
	}
	return res
}

func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not on PATH", name)
	}
}

const pyGet = `python3 -c 'import os, urllib.request; print(urllib.request.urlopen("http://pkg.test/simple", timeout=10).read().decode())'`

func TestAskReachesServerOnlyThroughProxy(t *testing.T) {
	f := startNetFixture(t)
	clients := []struct{ name, tool, script string }{
		{"curl CONNECT", "curl", `curl -sS --max-time 10 --proxytunnel http://pkg.test/index`},
		{"curl absolute-form", "curl", `curl -sS --max-time 10 http://pkg.test/index`},
		{"python urllib", "python3", pyGet},
	}
	for _, c := range clients {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			needTool(t, c.tool)
			h := &forwardHandler{target: f.addr}
			res := mustAskRun(t, f, NetworkAsk, h, c.script)
			if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), f.body) {
				t.Fatalf("through the proxy: exit %d, output:\n%s", res.ExitCode, res.Output)
			}
			if asked := h.asked(); len(asked) == 0 || !strings.Contains(asked[0], "pkg.test") {
				t.Errorf("the proxy saw %q, want the host pkg.test", asked)
			}
			if res.Network != NetworkAsk || len(res.NetworkNotes) == 0 {
				t.Errorf("result network %q notes %q, want ask with the handler's notes", res.Network, res.NetworkNotes)
			}
		})
	}
}

// Each attack tries to leave without the proxy and must fail; its twin
// reaches the same server through the proxy.
func TestAskBypassAttemptsFail(t *testing.T) {
	f := startNetFixture(t)
	twin := `curl -sS --max-time 10 http://pkg.test/ | grep -q "$BODY"`
	cases := []struct{ name, attack string }{
		{"host server on 127.0.0.1 without the proxy", `"$PROBE" dial-tcp "$HOSTSRV"`},
		{"host server with curl --noproxy", `curl -sS --max-time 5 --noproxy '*' "http://$HOSTSRV/"`},
		{"UDP DNS to 8.8.8.8", `"$PROBE" send-udp 8.8.8.8:53`},
		{"getent hosts", `getent hosts example.com`},
		{"python getaddrinfo", `python3 -c 'import socket; socket.getaddrinfo("example.com", 80)'`},
		{"UDP socket", fmt.Sprintf(`"$PROBE" socket %d %d 0`, afInet, sockDgram)},
		{"raw socket", fmt.Sprintf(`"$PROBE" socket %d %d 1`, afInet, sockRaw)},
		{"netlink socket", fmt.Sprintf(`"$PROBE" socket %d %d 0`, afNetlink, sockRaw)},
		{"packet socket", fmt.Sprintf(`"$PROBE" socket %d %d 0`, afPacket, sockRaw)},
		{"MPTCP connect", `"$PROBE" dial-mptcp "$HOSTSRV"`},
		{"TCP via IPv6 loopback port of the host", `"$PROBE" dial-tcp "[::1]:$PORT"`},
		{"proxy variables pointed elsewhere", `HTTP_PROXY=http://$HOSTSRV http_proxy=http://$HOSTSRV curl -sS --max-time 5 http://pkg.test/`},
	}
	if f.external != "" {
		cases = append(cases, struct{ name, attack string }{"host's non-loopback address", `"$PROBE" dial-tcp "$EXTSRV"`})
	}
	if linux.Probe().LandlockABI >= 4 {
		cases = append(cases, struct{ name, attack string }{"listen on TCP inside", `"$PROBE" listen-tcp`})
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			if strings.HasPrefix(c.attack, "curl") || strings.Contains(c.attack, " curl ") {
				needTool(t, "curl")
			}
			if strings.HasPrefix(c.attack, "python3") {
				needTool(t, "python3")
			}
			h := &forwardHandler{target: f.addr}
			attack := mustAskRun(t, f, NetworkAsk, h, c.attack)
			if attack.ExitCode == 0 || strings.Contains(string(attack.Output), f.body) {
				t.Errorf("attack succeeded:\n%s\n%s", c.attack, attack.Output)
			}
			needTool(t, "curl")
			tw := mustAskRun(t, f, NetworkAsk, h, twin)
			if tw.ExitCode != 0 {
				t.Errorf("twin through the proxy failed (exit %d):\n%s", tw.ExitCode, tw.Output)
			}
		})
	}
}

// The forwarding socket is the helper's alone: the command has only stdio,
// and cannot reach the helper's descriptors through /proc.
func TestAskCommandHoldsNoForwardingSocket(t *testing.T) {
	f := startNetFixture(t)
	h := &forwardHandler{target: f.addr}
	res := mustAskRun(t, f, NetworkAsk, h, `ls -l /proc/self/fd/; ls -l /proc/1/fd/ 2>&1; exit 0`)
	out := string(res.Stdout)
	if strings.Contains(out, "socket:") {
		t.Errorf("a socket is visible to the command:\n%s", res.Output)
	}
	for _, fd := range []string{" 3 ->", " 4 ->", " 5 ->"} {
		if strings.Contains(out, fd) && !strings.Contains(out, fd+" /proc/") {
			t.Errorf("descriptor%s is open in the command:\n%s", strings.TrimSuffix(fd, " ->"), out)
		}
	}
	// Its twin: the same listing works and shows stdio.
	if !strings.Contains(out, " 0 ->") || !strings.Contains(out, " 2 ->") {
		t.Errorf("the command's own descriptors are not listed:\n%s", res.Output)
	}
	// Nor can it open the helper's descriptors (the helper is not
	// dumpable); the twin opens its own.
	res = mustAskRun(t, f, NetworkAsk, h, `n=0; for p in /proc/1/fd/*; do (exec 9<>"$p") 2>/dev/null && n=$((n+1)); done; echo "opened $n"; (exec 9>/proc/self/fd/1) && echo own`)
	if !strings.Contains(string(res.Stdout), "opened 0\n") || !strings.Contains(string(res.Stdout), "own\n") {
		t.Errorf("the helper's descriptors opened, or the command's own did not:\n%s", res.Output)
	}
	// And the command cannot inject a descriptor: it has no unix socket
	// to the launcher, so nothing but connections arrives there.
	res = mustAskRun(t, f, NetworkAsk, h, `for fd in 3 4 5 6 7; do [ -e /proc/self/fd/$fd ] && echo open $fd; done; exit 0`)
	if strings.Contains(string(res.Stdout), "open") {
		t.Errorf("descriptors beyond stdio in a fresh shell: %s", res.Stdout)
	}
}

// A handler that panics or returns refuses: the command's connection is
// closed, it does not hang and does not get through.
func TestAskBrokenHandlerFailsClosed(t *testing.T) {
	needTool(t, "curl")
	f := startNetFixture(t)
	for name, h := range map[string]ProxyHandler{"panics": panicHandler{}, "returns": returnHandler{}} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			res := mustAskRun(t, f, NetworkAsk, h, `curl -sS --max-time 15 http://pkg.test/`)
			if res.ExitCode == 0 || strings.Contains(string(res.Output), f.body) {
				t.Errorf("a broken handler let the request through:\n%s", res.Output)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the command waited %v on a broken handler; the connection must be closed", d)
			}
		})
	}
	// The twin: a working handler, same command.
	res := mustAskRun(t, f, NetworkAsk, &forwardHandler{target: f.addr}, `curl -sS --max-time 15 http://pkg.test/`)
	if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), f.body) {
		t.Errorf("twin with a working handler failed:\n%s", res.Output)
	}
}

// Under ask with no handler Warden refuses to run rather than give the
// command the network.
func TestAskRefusedWithoutProxy(t *testing.T) {
	f := startNetFixture(t)
	_, err := askRun(t, f, NetworkAsk, nil, `true`)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "no proxy") {
		t.Errorf("ask without a proxy: %v, want a refusal naming the missing proxy", err)
	}
}

// Without namespaces no proxy can be the command's only way out: ask runs
// as off (never with the host's network), says so, and a command that needs
// the network fails as a sandbox denial, so the orchestrator offers to
// retry it outside the sandbox. The twin: with namespaces the same command
// reaches the server through the proxy.
func TestAskFallsBackToOffWithoutNamespaces(t *testing.T) {
	needTool(t, "curl")
	f := startNetFixture(t)
	h := &forwardHandler{target: f.addr}
	fetch := `curl -sS --max-time 5 http://pkg.test/; curl -sS --max-time 5 "http://$HOSTSRV/"`
	noNamespacesForTest = true
	// Full reads: this test is about the network.
	full := func(p *Policy) { p.Reads.Access = ReadFull }
	res, err := askRun(t, f, NetworkAsk, h, fetch, full)
	env, envErr := askRun(t, f, NetworkAsk, h, `env`, full)
	direct, directErr := askRun(t, f, NetworkAsk, h, `"$PROBE" dial-tcp "$HOSTSRV"`, full)
	noNamespacesForTest = false
	if err != nil || envErr != nil || directErr != nil {
		t.Fatalf("ask without namespaces refused: %v / %v / %v", err, envErr, directErr)
	}
	if res.Sandbox != "linux-landlock" || res.Network != NetworkOff || len(res.NotEnforced) == 0 || res.NotEnforced[0] != AskFallbackGap {
		t.Errorf("fallback result: sandbox %q, network %q, not enforced %q", res.Sandbox, res.Network, res.NotEnforced)
	}
	if res.ExitCode == 0 || strings.Contains(string(res.Output), f.body) || direct.ExitCode == 0 {
		t.Errorf("the command reached the network without namespaces:\n%s\n%s", res.Output, direct.Output)
	}
	if !res.SandboxDenied {
		t.Errorf("a fetch that failed for want of the network is not a sandbox denial, so no retry would be offered:\n%s", res.Output)
	}
	h.mu.Lock()
	if len(h.hosts) != 0 {
		t.Errorf("the proxy was asked for %v; it must not start", h.hosts)
	}
	h.mu.Unlock()
	out := string(env.Stdout)
	if strings.Contains(out, "127.0.0.1:3128") || !strings.Contains(out, EnvNetworkDisabled+"=1") {
		t.Errorf("ask fallen back to off: proxy variables set or %s unset:\n%s", EnvNetworkDisabled, out)
	}
	twin := mustAskRun(t, f, NetworkAsk, &forwardHandler{target: f.addr}, `curl -sS --max-time 15 http://pkg.test/`)
	if twin.ExitCode != 0 || !strings.Contains(string(twin.Stdout), f.body) || twin.Sandbox != "linux" || twin.Network != NetworkAsk {
		t.Errorf("twin: ask with namespaces (%s, %s) failed:\n%s", twin.Sandbox, twin.Network, twin.Output)
	}
}

// The command is told where the proxy is, in every variable the common
// tools read; under off and on nothing is set.
func TestAskSetsProxyVariables(t *testing.T) {
	f := startNetFixture(t)
	h := &forwardHandler{target: f.addr}
	res := mustAskRun(t, f, NetworkAsk, h, `env`)
	want := map[string]string{
		"HTTP_PROXY": "http://127.0.0.1:3128", "https_proxy": "http://127.0.0.1:3128",
		"ALL_PROXY": "socks5h://127.0.0.1:3128", "all_proxy": "socks5h://127.0.0.1:3128",
		"NO_PROXY": proxyNoProxy, "no_proxy": proxyNoProxy,
		"npm_config_https_proxy": "http://127.0.0.1:3128", "PIP_PROXY": "http://127.0.0.1:3128",
		"CARGO_HTTP_PROXY": "http://127.0.0.1:3128", "YARN_HTTPS_PROXY": "http://127.0.0.1:3128",
	}
	for k, v := range want {
		if !strings.Contains(string(res.Stdout), "\n"+k+"="+v+"\n") && !strings.HasPrefix(string(res.Stdout), k+"="+v+"\n") {
			t.Errorf("%s=%s not set under ask", k, v)
		}
	}
	if strings.Contains(string(res.Stdout), EnvNetworkDisabled+"=") {
		t.Errorf("%s set under ask, where the network is reachable through the proxy", EnvNetworkDisabled)
	}
	for _, mode := range []NetworkMode{NetworkOff, NetworkOn} {
		res := mustAskRun(t, f, mode, nil, `env`)
		if strings.Contains(string(res.Stdout), "127.0.0.1:3128") {
			t.Errorf("proxy variables set under %s", mode)
		}
	}
}

// Off is what it was: no inet sockets, the host server unreachable. On is
// what it was: the host server reachable directly. Ask and off both see
// only their own loopback interface.
func TestOffAndOnUnchanged(t *testing.T) {
	f := startNetFixture(t)
	off := mustAskRun(t, f, NetworkOff, nil, `echo "$`+EnvNetworkDisabled+`"; "$PROBE" dial-tcp "$HOSTSRV"`)
	if off.ExitCode == 0 || !strings.HasPrefix(string(off.Stdout), "1\n") || off.Network != NetworkOff {
		t.Errorf("off: exit %d network %q, output:\n%s", off.ExitCode, off.Network, off.Output)
	}
	on := mustAskRun(t, f, NetworkOn, nil, `"$PROBE" dial-tcp "$HOSTSRV"`)
	if on.ExitCode != 0 || on.Network != NetworkOn {
		t.Errorf("on: exit %d network %q, output:\n%s", on.ExitCode, on.Network, on.Output)
	}
	interfaces := `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; tail -n +2 /proc/net/route`
	for _, mode := range []NetworkMode{NetworkOff, NetworkAsk} {
		res := mustAskRun(t, f, mode, &forwardHandler{target: f.addr}, interfaces)
		if got := strings.TrimSpace(string(res.Stdout)); got != "lo" {
			t.Errorf("%s: interfaces and routes %q, want only lo and no route", mode, got)
		}
	}
	if res := mustAskRun(t, f, NetworkOn, nil, interfaces); strings.TrimSpace(string(res.Stdout)) == "lo" {
		t.Errorf("on: only lo, want the host's interfaces: %s", res.Stdout)
	}
}

// A spare helper for ask carries its forwarding socket; the run on it works.
func TestAskOnSpareHelper(t *testing.T) {
	needTool(t, "curl")
	withSpares(t)
	f := startNetFixture(t)
	PrepareSpare(Policy{Mode: WorkspaceWrite, Network: NetworkAsk}, testHelper)
	spares.settle()
	before := sparesTaken.Load()
	res := mustAskRun(t, f, NetworkAsk, &forwardHandler{target: f.addr}, `curl -sS --max-time 10 http://pkg.test/`)
	if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), f.body) {
		t.Fatalf("on a spare: exit %d:\n%s", res.ExitCode, res.Output)
	}
	if sparesTaken.Load() == before {
		t.Error("the run did not use the spare")
	}
}

// holdHandler keeps every connection open until the run ends.
type holdHandler struct{}

func (holdHandler) ServeConn(ctx context.Context, c net.Conn) { <-ctx.Done() }

// A command that opens proxy connections in a loop gets maxProxyConns of
// them served; the rest are closed at once (the launcher's descriptors are
// not the command's to use up). The twin: fewer connections all stay open.
func TestAskCapsOpenProxyConnections(t *testing.T) {
	needTool(t, "python3")
	f := startNetFixture(t)
	script := func(n int) string {
		return fmt.Sprintf(`python3 -c '
import socket, time
socks = [socket.create_connection(("127.0.0.1", 3128)) for _ in range(%d)]
time.sleep(1)
closed = 0
for s in socks:
    s.setblocking(False)
    try:
        closed += s.recv(1) == b""
    except BlockingIOError:
        pass
print(closed)'`, n)
	}
	res := mustAskRun(t, f, NetworkAsk, holdHandler{}, script(maxProxyConns+20))
	if got := strings.TrimSpace(string(res.Stdout)); res.ExitCode != 0 || got != "20" {
		t.Errorf("%d connections: %s closed at once (exit %d), want 20:\n%s", maxProxyConns+20, got, res.ExitCode, res.Output)
	}
	res = mustAskRun(t, f, NetworkAsk, holdHandler{}, script(100))
	if got := strings.TrimSpace(string(res.Stdout)); res.ExitCode != 0 || got != "0" {
		t.Errorf("100 connections: %s closed (exit %d), want 0:\n%s", got, res.ExitCode, res.Output)
	}
}

// Tools that only read the proxy variables reach the proxy too: git over
// HTTP, npm and pip ask it for the host (the test server speaks none of
// their protocols, so they fail after; what matters is where they went).
// The twin of each: the same command without the variables reaches
// nothing.
func TestAskToolsUseProxyVariables(t *testing.T) {
	f := startNetFixture(t)
	const unset = `unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY ALL_PROXY all_proxy npm_config_proxy npm_config_https_proxy NPM_CONFIG_PROXY NPM_CONFIG_HTTPS_PROXY PIP_PROXY; `
	for _, c := range []struct{ tool, script string }{
		{"git", `HOME=$PWD git ls-remote http://pkg.test/repo.git`},
		{"npm", `HOME=$PWD timeout 20 npm view left-pad --registry http://pkg.test/ --fetch-retries=0`},
		{"pip3", `HOME=$PWD timeout 20 pip3 download --no-deps --retries 0 --index-url http://pkg.test/simple --trusted-host pkg.test -d dl left-pad`},
	} {
		t.Run(c.tool, func(t *testing.T) {
			needTool(t, c.tool)
			h := &forwardHandler{target: f.addr}
			res := mustAskRun(t, f, NetworkAsk, h, c.script)
			if asked := h.asked(); len(asked) == 0 || !strings.Contains(asked[0], "pkg.test") {
				t.Errorf("%s asked the proxy for %q, want pkg.test:\n%s", c.tool, asked, res.Output)
			}
			h = &forwardHandler{target: f.addr}
			res = mustAskRun(t, f, NetworkAsk, h, unset+c.script)
			if res.ExitCode == 0 || len(h.asked()) != 0 {
				t.Errorf("%s without the proxy variables: exit %d, proxy saw %q", c.tool, res.ExitCode, h.asked())
			}
		})
	}
}
