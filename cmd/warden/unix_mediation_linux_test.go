//go:build linux

package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Unix-socket mediation through the real binary: `warden exec --sandbox
// workspace-write` runs Python scripts that try the host's sockets (served
// by this test, outside the sandbox) and use their own.

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
}

// mediationExec runs a Python script sandboxed, with isolated state, in ws.
func mediationExec(t *testing.T, ws string, network bool, script string, args ...string) (string, string, int) {
	t.Helper()
	home := t.TempDir()
	argv := []string{"exec", "--sandbox", "workspace-write", "--approval", "never", "--cwd", ws}
	if network {
		argv = append(argv, "--network")
	}
	argv = append(argv, "--", "python3", "-c", script)
	cmd := exec.Command(wardenBin(t), append(argv, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	return runCmd(t, cmd)
}

// hostUnix serves a stream socket (answers "H") and a datagram socket
// (records what arrives) at base+".sock" and base+".dgram", outside.
type hostUnix struct {
	stream, dgram string
	mu            sync.Mutex
	got           []string
}

func serveHostUnix(t *testing.T, base string) *hostUnix {
	t.Helper()
	h := &hostUnix{stream: base + ".sock", dgram: base + ".dgram"}
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", h.stream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("H"))
			c.Close()
		}
	}()
	d, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: h.dgram, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	go func() {
		buf := make([]byte, 256)
		for {
			n, _, err := d.ReadFrom(buf)
			if err != nil {
				return
			}
			h.mu.Lock()
			h.got = append(h.got, string(buf[:n]))
			h.mu.Unlock()
		}
	}()
	return h
}

func (h *hostUnix) received() []string {
	time.Sleep(50 * time.Millisecond)
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...)
}

// tryHost connects to each stream path and sends a datagram to each
// datagram path (argv pairs), printing one line per attempt.
const tryHost = `
import socket, sys
args = sys.argv[1:]
for stream, dgram in zip(args[0::2], args[1::2]):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(stream); print("REACHED", stream, s.recv(1))
    except OSError as e:
        print("refused", stream, e.errno)
    d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        d.sendto(b"attack", dgram); print("REACHED", dgram)
    except OSError as e:
        print("refused", dgram, e.errno)
`

// ownSockets: what a program does with sockets of its own, in the workspace
// and in /tmp (argv: a directory in each).
const ownSockets = `
import os, socket, sys, threading
for d in sys.argv[1:]:
    p = os.path.join(d, "srv.sock")
    srv = socket.socket(socket.AF_UNIX); srv.bind(p); srv.listen(1)
    threading.Thread(target=lambda: srv.accept()[0].sendall(b"ok"), daemon=True).start()
    c = socket.socket(socket.AF_UNIX); c.connect(p); assert c.recv(2) == b"ok", d
    q = os.path.join(d, "srv.dgram")
    r = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); r.bind(q)
    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"dg", q); assert r.recv(2) == b"dg", d
    os.unlink(p); os.unlink(q)
    print("own sockets ok in", d)
a, b = socket.socketpair(); a.sendall(b"sp"); assert b.recv(2) == b"sp"
import multiprocessing
from multiprocessing.managers import SyncManager
if __name__ == "__main__":
    m = SyncManager(); m.start(); v = m.dict(); v["k"] = 1; assert dict(v) == {"k": 1}; m.shutdown()
    print("multiprocessing manager ok")
`

func TestExecUnixSocketMediation(t *testing.T) {
	needPython(t)
	ws := t.TempDir()
	places := []string{filepath.Join(t.TempDir(), "a", "b", "c", "d", "svc"), filepath.Join(ws, "svc")}
	if d, err := os.MkdirTemp("/var/tmp", "warden-exec-med-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(d) })
		places = append(places, filepath.Join(d, "svc"))
	} else {
		t.Logf("/var/tmp not writable (%v): not tried", err)
	}
	var hosts []*hostUnix
	var args []string
	for _, p := range places {
		h := serveHostUnix(t, p)
		hosts = append(hosts, h)
		args = append(args, h.stream, h.dgram)
	}
	tmpDir := t.TempDir()
	for _, network := range []bool{false, true} {
		t.Run(fmt.Sprintf("network=%v", network), func(t *testing.T) {
			out, stderr, code := mediationExec(t, ws, network, tryHost, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, out, stderr)
			}
			if strings.Contains(out, "REACHED") || strings.Count(out, "refused") != len(args) {
				t.Errorf("host sockets reached from the sandbox:\n%s", out)
			}
			if want := fmt.Sprintf("refused %s 13", hosts[0].stream); !strings.Contains(out, want) {
				t.Errorf("want %q (EACCES) in:\n%s", want, out)
			}
			for _, h := range hosts {
				if got := h.received(); len(got) > 0 {
					t.Errorf("%s received %q", h.dgram, got)
				}
			}
			// Twin: the sandbox's own sockets, in the workspace and /tmp.
			out, stderr, code = mediationExec(t, ws, network, ownSockets, ws, tmpDir)
			if code != 0 || !strings.Contains(out, "multiprocessing manager ok") {
				t.Errorf("own sockets failed (exit %d):\n%s%s", code, out, stderr)
			}
		})
	}
	// Outside, the host's sockets answer: the refusals are the sandbox's.
	for _, h := range hosts {
		c, err := net.Dial("unix", h.stream)
		if err != nil {
			t.Fatalf("%s does not answer outside either: %v", h.stream, err)
		}
		c.Close()
	}
}

// TestExecUnixSocketBoundAfterStart: a host socket bound while the command
// runs is refused; one the command binds then works.
func TestExecUnixSocketBoundAfterStart(t *testing.T) {
	needPython(t)
	ws := t.TempDir()
	base := filepath.Join(t.TempDir(), "late", "x", "svc")
	script := `
import os, socket, sys, time
p = sys.argv[1]
for _ in range(500):
    if os.path.exists(p): break
    time.sleep(0.02)
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(p); print("REACHED")
except OSError as e:
    print("refused", e.errno)
own = os.path.join(os.getcwd(), "late.sock")
srv = socket.socket(socket.AF_UNIX); srv.bind(own); srv.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(own); print("own ok")
`
	type result struct {
		out, stderr string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		o, e, c := mediationExec(t, ws, false, script, base+".sock")
		done <- result{o, e, c}
	}()
	time.Sleep(500 * time.Millisecond)
	serveHostUnix(t, base)
	r := <-done
	if r.code != 0 || !strings.Contains(r.out, "refused 13") || !strings.Contains(r.out, "own ok") {
		t.Errorf("exit %d:\n%s%s", r.code, r.out, r.stderr)
	}
}

// TestExecUnixSocketAddressSwap: one thread rewrites the sockaddr while the
// main thread connects with it (ctypes releases the GIL during the call).
// The host must never answer; the counts show both addresses were used.
func TestExecUnixSocketAddressSwap(t *testing.T) {
	needPython(t)
	ws := t.TempDir()
	dir := t.TempDir()
	h := serveHostUnix(t, filepath.Join(dir, "h"))
	script := `
import ctypes, socket, struct, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
host, inside = sys.argv[1], sys.argv[2]
def sa(p):
    b = bytearray(110); struct.pack_into("H", b, 0, socket.AF_UNIX); b[2:2+len(p)] = p.encode(); return bytes(b)
A, B = sa(host), sa(inside)
buf = ctypes.create_string_buffer(B, 110)
srv = socket.socket(socket.AF_UNIX); srv.bind(inside); srv.listen(128)
def serve():
    while True:
        c, _ = srv.accept(); c.sendall(b"I"); c.close()
threading.Thread(target=serve, daemon=True).start()
def flip():
    while True:
        ctypes.memmove(buf, A, 110); ctypes.memmove(buf, B, 110)
threading.Thread(target=flip, daemon=True).start()
hits = inside_n = refused = 0
end = time.time() + 2
while time.time() < end:
    s = socket.socket(socket.AF_UNIX)
    if libc.connect(s.fileno(), buf, 110) == 0:
        s.settimeout(2)
        if s.recv(1) == b"H": hits += 1
        else: inside_n += 1
    else:
        refused += 1
    s.close()
print("host=%d inside=%d refused=%d" % (hits, inside_n, refused))
`
	out, stderr, code := mediationExec(t, ws, false, script, h.stream, filepath.Join(dir, "i.sock"))
	m := regexp.MustCompile(`host=(\d+) inside=(\d+) refused=(\d+)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("exit %d:\n%s%s", code, out, stderr)
	}
	hits, _ := strconv.Atoi(m[1])
	in, _ := strconv.Atoi(m[2])
	refused, _ := strconv.Atoi(m[3])
	if hits != 0 {
		t.Errorf("the address swap reached the host %d times", hits)
	}
	if in == 0 || refused == 0 {
		t.Errorf("the race did not use both addresses: %s", out)
	}
	t.Logf("%s", strings.TrimSpace(out))
}

// TestDoctorDescribesSocketMediation: doctor has a unix-socket layer and,
// where it is enforced, says how.
func TestDoctorDescribesSocketMediation(t *testing.T) {
	home := t.TempDir()
	out, stderr, code := runWardenEnv(t, home, "", "doctor")
	if code != 0 {
		t.Fatalf("doctor: exit %d: %s", code, stderr)
	}
	i := strings.Index(out, "\nunix sockets: ")
	if i < 0 {
		t.Fatalf("no unix sockets layer in:\n%s", out)
	}
	line, _, _ := strings.Cut(out[i+1:], "\n")
	if strings.Contains(line, ": enforced") && !strings.Contains(line, "mediated") && !strings.Contains(line, "Landlock") {
		t.Errorf("the layer does not say how: %s", line)
	}
	if strings.Contains(line, "mediated") && strings.Contains(out, "pathname unix sockets elsewhere") {
		t.Errorf("doctor lists socket mediation and the gap it closes:\n%s", out)
	}
}
