package netproxy

import (
	"context"
	"io"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"
)

// benchProxy serves a proxy that allows everything, with registry.test
// resolving to 127.0.0.1 (so set-up includes the decide/resolve/check path).
func benchProxy(b *testing.B) string {
	b.Helper()
	d := &decider{fn: func(context.Context, Request) Verdict { return Verdict{Allow: true} }}
	srv := New(d, nil, Options{
		Resolver:     StaticResolver{"registry.test": {netip.MustParseAddr("127.0.0.1")}},
		AllowPrivate: func(string, netip.Addr) bool { return true },
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go srv.Serve(ctx, l, testOrigin)
	b.Cleanup(cancel)
	return l.Addr().String()
}

const connectOK = "HTTP/1.1 200 Connection established\r\n\r\n"

// dialThrough opens a CONNECT tunnel to registry.test:port.
func dialThrough(b *testing.B, proxyAddr, port string) *net.TCPConn {
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.WriteString(c, "CONNECT registry.test:"+port+" HTTP/1.1\r\n\r\n"); err != nil {
		b.Fatal(err)
	}
	resp := make([]byte, len(connectOK))
	if _, err := io.ReadFull(c, resp); err != nil || string(resp) != connectOK {
		b.Fatalf("CONNECT reply %q %v", resp, err)
	}
	return c.(*net.TCPConn)
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkConnectSetup measures a new connection with its first byte
// echoed, direct to a loopback server and through a CONNECT tunnel, in the
// same run; the target is under 1 ms added at the median.
func BenchmarkConnectSetup(b *testing.B) {
	echo, stop := echoServer(b)
	defer stop()
	_, port, _ := net.SplitHostPort(echo)
	proxyAddr := benchProxy(b)
	roundTrip := func(c net.Conn) {
		var one [1]byte
		if _, err := c.Write([]byte{'x'}); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, one[:]); err != nil {
			b.Fatal(err)
		}
	}
	direct := make([]time.Duration, 0, b.N)
	proxied := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		c, err := net.Dial("tcp", echo)
		if err != nil {
			b.Fatal(err)
		}
		roundTrip(c)
		direct = append(direct, time.Since(t0))
		c.(*net.TCPConn).SetLinger(0)
		c.Close()

		t0 = time.Now()
		pc := dialThrough(b, proxyAddr, port)
		roundTrip(pc)
		proxied = append(proxied, time.Since(t0))
		pc.SetLinger(0)
		pc.Close()
	}
	b.StopTimer()
	d, p := median(direct), median(proxied)
	b.ReportMetric(float64(d.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(p.Microseconds()), "proxy-p50-µs")
	b.ReportMetric(float64((p - d).Microseconds()), "added-p50-µs")
}

const (
	bulkBytes   = 1 << 30
	bulkSegment = 32 << 20
)

// bulkServer answers every byte it reads on a connection with a segment of
// bulkSegment bytes.
func bulkServer(b *testing.B) (string, func()) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var one [1]byte
				for {
					if _, err := io.ReadFull(c, one[:]); err != nil {
						return
					}
					for sent := 0; sent < bulkSegment; sent += len(buf) {
						if _, err := c.Write(buf); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return l.Addr().String(), func() { l.Close() }
}

// segment asks for one segment on c and reads it; it returns the time taken.
func segment(b *testing.B, c net.Conn, buf []byte) time.Duration {
	t0 := time.Now()
	if _, err := c.Write([]byte{'g'}); err != nil {
		b.Fatal(err)
	}
	for n := 0; n < bulkSegment; {
		k, err := c.Read(buf)
		n += k
		if err != nil {
			b.Fatalf("after %d bytes: %v", n, err)
		}
	}
	return time.Since(t0)
}

// bareRelay is the floor for any user-space relay: io.Copy both ways
// between two TCP connections (spliced on Linux), no protocol, no checks.
func bareRelay(b *testing.B, target string) (string, func()) {
	return testRelay(b, target, func(dst, src *net.TCPConn) {
		io.Copy(dst, src)
		dst.Close()
	})
}

// testRelay listens on loopback and, for each connection, dials target and
// runs copyTo in each direction.
func testRelay(b *testing.B, target string, copyTo func(dst, src *net.TCPConn)) (string, func()) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go copyTo(u.(*net.TCPConn), c.(*net.TCPConn))
			go copyTo(c.(*net.TCPConn), u.(*net.TCPConn))
		}
	}()
	return l.Addr().String(), func() { l.Close() }
}

// bulkPath is one way to the bulk server, timed in BenchmarkBulkThroughput.
type bulkPath struct {
	name string
	c    net.Conn
	took time.Duration // wall time of its segments
	cpu  time.Duration // CPU time of the whole process during them
}

// BenchmarkBulkThroughput downloads 1 GiB over loopback directly, 1 GiB
// through a CONNECT tunnel of the proxy, and 1 GiB through each of two bare
// relays in the same run, interleaved in 32 MiB segments on kept, warmed
// connections (the same client code and buffer for all) so that a change
// in the machine's load hits all alike. The target is a proxy/direct ratio
// of at least 0.8. The bare relays are the floor for the extra loopback
// hop any proxy adds: io.Copy both ways (what the proxy's relay does,
// spliced by Go), and on Linux a splice(2) loop per direction with nothing
// else (splice-relay/direct is the upper bound of any user-space relay).
// cpu-s/GB is the CPU time the whole process (server, relay and client)
// spent per GB on each path: on a machine whose cores are busy, the
// ratios tend to the ratio of these costs.
func BenchmarkBulkThroughput(b *testing.B) {
	srv, stop := bulkServer(b)
	defer stop()
	_, port, _ := net.SplitHostPort(srv)
	dial := func(addr string) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	relayAddr, stopRelay := bareRelay(b, srv)
	defer stopRelay()
	paths := []*bulkPath{
		{name: "direct", c: dial(srv)},
		{name: "proxy", c: dialThrough(b, benchProxy(b), port)},
		{name: "bare-relay", c: dial(relayAddr)},
	}
	if addr, stopSplice := spliceRelay(b, srv); addr != "" {
		defer stopSplice()
		paths = append(paths, &bulkPath{name: "splice-relay", c: dial(addr)})
	}
	buf := make([]byte, 256<<10)
	for _, p := range paths {
		defer p.c.Close()
		segment(b, p.c, buf) // past slow start and buffer auto-tuning
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for s := 0; s < bulkBytes/bulkSegment; s++ {
			for k := range paths {
				p := paths[(k+s)%len(paths)] // rotate who goes first
				cpu := processCPU()
				p.took += segment(b, p.c, buf)
				p.cpu += processCPU() - cpu
			}
		}
	}
	b.StopTimer()
	mb := float64(b.N) * bulkBytes / 1e6
	for _, p := range paths {
		b.ReportMetric(mb/p.took.Seconds(), p.name+"-MB/s")
		if p.cpu > 0 {
			b.ReportMetric(p.cpu.Seconds()/(mb/1e3), p.name+"-cpu-s/GB")
		}
	}
	direct, proxy := paths[0].took.Seconds(), paths[1].took.Seconds()
	b.ReportMetric(direct/proxy, "proxy/direct")
	b.ReportMetric(paths[2].took.Seconds()/proxy, "proxy/bare-relay")
	if len(paths) > 3 {
		b.ReportMetric(direct/paths[3].took.Seconds(), "splice-relay/direct")
	}
}
