package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/sandbox/linux"
)

// netBenchEnv makes this test binary, run inside the sandbox, time
// connections: `sandbox.test N ADDR` connects N times to ADDR, sends a byte
// and reads it back, and prints the median in nanoseconds.
const netBenchEnv = "WARDEN_NETBENCH"

func init() {
	if os.Getenv(netBenchEnv) != "1" || len(os.Args) != 3 {
		return
	}
	n, _ := strconv.Atoi(os.Args[1])
	var ds []time.Duration
	buf := []byte{1}
	for range n {
		start := time.Now()
		c, err := net.Dial("tcp", os.Args[2])
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(1)
		}
		if _, err := c.Write(buf); err == nil {
			_, err = io.ReadFull(c, buf)
		}
		c.Close()
		if err != nil {
			fmt.Println("echo:", err)
			os.Exit(1)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	fmt.Println(int64(ds[len(ds)/2]))
	os.Exit(0)
}

// echoHandler answers each byte with itself: the proxy's least work.
type echoHandler struct{}

func (echoHandler) ServeConn(ctx context.Context, c net.Conn) { io.Copy(c, c) }

// BenchmarkForwarderConnect times a connection and a one-byte round trip
// from inside the sandbox: under ask through the forwarder to an echo
// handler, and under on straight to an echo server on the host's loopback.
//
//	go test -run '^$' -bench ForwarderConnect ./sandbox
func BenchmarkForwarderConnect(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { echoHandler{}.ServeConn(context.Background(), c); c.Close() }()
		}
	}()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	ws := b.TempDir()
	const n = 200
	median := func(mode NetworkMode, addr string) time.Duration {
		res, err := Run(context.Background(), Command{
			Argv: []string{exe, strconv.Itoa(n), addr}, Cwd: ws, Helper: testHelper, Proxy: echoHandler{},
			Policy: Policy{Mode: WorkspaceWrite, Network: mode, Workspace: []string{ws}, ExcludeSlashTmp: true, ExcludeTmpdir: true},
			Env:    EnvPolicy{Set: map[string]string{netBenchEnv: "1"}},
		})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%s: %v %s", mode, err, res.Output)
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(res.Stdout)), 10, 64)
		if err != nil {
			b.Fatalf("%s: %q", mode, res.Stdout)
		}
		return time.Duration(v)
	}
	var fwd, direct []time.Duration
	b.ResetTimer()
	for range b.N {
		fwd = append(fwd, median(NetworkAsk, fmt.Sprintf("127.0.0.1:%d", linux.ForwardPort)))
		direct = append(direct, median(NetworkOn, ln.Addr().String()))
	}
	b.StopTimer()
	slices.Sort(fwd)
	slices.Sort(direct)
	mf, md := fwd[len(fwd)/2], direct[len(direct)/2]
	b.ReportMetric(ms(mf), "forwarded-connect-ms")
	b.ReportMetric(ms(md), "direct-connect-ms")
	b.ReportMetric(ms(mf-md), "forwarder-over-direct-ms")
	b.ReportMetric(0, "ns/op")
}
