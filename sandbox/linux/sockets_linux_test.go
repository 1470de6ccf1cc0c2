package linux

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// scanWorld is a deterministic environment for the socket scan: HOME,
// TMPDIR and XDG_RUNTIME_DIR are fresh temporary directories.
type scanWorld struct {
	home, tmp, xdg string
	env            []string
}

func newScanWorld(t *testing.T) *scanWorld {
	w := &scanWorld{home: t.TempDir(), tmp: t.TempDir(), xdg: t.TempDir()}
	w.env = []string{"HOME=" + w.home, "TMPDIR=" + w.tmp, "XDG_RUNTIME_DIR=" + w.xdg}
	return w
}

// listen makes a listening unix socket at p (its directory created) until
// the test ends.
func listen(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
}

// readCounter counts the directories a scanner reads from disk.
type readCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func countReads(s *SocketScanner) *readCounter {
	c := &readCounter{n: map[string]int{}}
	s.onRead = func(dir string) {
		c.mu.Lock()
		c.n[dir]++
		c.mu.Unlock()
	}
	return c
}

// take returns how often each of dirs was read since the last take.
func (c *readCounter) take(dirs ...string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for _, d := range dirs {
		out[d] = c.n[d]
	}
	c.n = map[string]int{}
	return out
}

func mustScan(t *testing.T, s *SocketScanner, env []string) []string {
	t.Helper()
	sockets, hidden, err := s.scan(env, "/")
	if err != nil {
		t.Fatal(err)
	}
	if len(hidden) > 0 && os.Getuid() == 0 {
		t.Errorf("root cannot list %v", hidden)
	}
	return sockets
}

func resolve(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSocketScanFindsTheKnownPlaces(t *testing.T) {
	w := newScanWorld(t)
	elsewhere := t.TempDir()
	want := []string{
		filepath.Join(w.tmp, "tmux-0", "default"),
		filepath.Join(w.tmp, ".s.PGSQL.5432"),
		filepath.Join(w.xdg, "bus"),
		filepath.Join(w.xdg, "gnupg", "d.x", "S.gpg-agent"),
		filepath.Join(w.home, ".ssh", "control", "master"),
		filepath.Join(elsewhere, "agent.sock"), // named by $SSH_AUTH_SOCK
	}
	notScanned := filepath.Join(w.tmp, "build", "server.sock") // not a service directory
	for _, p := range append(slices.Clone(want), notScanned) {
		listen(t, p)
	}
	env := append(w.env, "SSH_AUTH_SOCK="+want[5])
	got := mustScan(t, NewSocketScanner(), env)
	for _, p := range want {
		if !slices.Contains(got, resolve(t, p)) {
			t.Errorf("socket %s not found in %v", p, got)
		}
	}
	if slices.Contains(got, resolve(t, notScanned)) {
		t.Errorf("%s is deeper than the scan goes, yet was found", notScanned)
	}
}

func TestSocketScanReusesUnchangedDirectories(t *testing.T) {
	w := newScanWorld(t)
	service := filepath.Join(w.tmp, "tmux-0")
	listen(t, filepath.Join(service, "default"))
	listen(t, filepath.Join(w.xdg, "bus"))
	s := NewSocketScanner()
	// Judge timestamps an hour from now: nothing here is racy any more, so
	// only a changed identity makes the scanner read a directory again.
	s.now = func() time.Time { return time.Now().Add(time.Hour) }
	reads := countReads(s)
	dirs := []string{w.tmp, service, w.xdg}

	mustScan(t, s, w.env)
	for d, n := range reads.take(dirs...) {
		if n != 1 {
			t.Errorf("first scan read %s %d times, want once", d, n)
		}
	}
	got := mustScan(t, s, w.env)
	for d, n := range reads.take(dirs...) {
		if n != 0 {
			t.Errorf("second scan read the unchanged %s %d times, want 0 (cached)", d, n)
		}
	}
	if !slices.Contains(got, filepath.Join(service, "default")) || !slices.Contains(got, filepath.Join(w.xdg, "bus")) {
		t.Errorf("cached scan lost sockets: %v", got)
	}

	added := filepath.Join(service, "added")
	listen(t, added)
	got = mustScan(t, s, w.env)
	if n := reads.take(dirs...); n[service] != 1 || n[w.tmp] != 0 || n[w.xdg] != 0 {
		t.Errorf("after a socket was added to %s, reads were %v; want that directory only", service, n)
	}
	if !slices.Contains(got, added) {
		t.Errorf("socket added to a cached directory not found: %v", got)
	}
}

// TestSocketScanRacyDirectoryIsReadAgain: a directory whose timestamps are
// not older than the scan's start by the margin may gain an entry in the
// same clock tick without a visible change, so it is never reused.
func TestSocketScanRacyDirectoryIsReadAgain(t *testing.T) {
	w := newScanWorld(t)
	listen(t, filepath.Join(w.xdg, "first"))
	var st unix.Stat_t
	if err := unix.Stat(w.xdg, &st); err != nil {
		t.Fatal(err)
	}
	changed := time.Unix(st.Ctim.Unix())
	s := NewSocketScanner()
	reads := countReads(s)

	// The clock says the directory changed just now: read every time,
	// though nothing about it changes.
	s.now = func() time.Time { return changed.Add(SocketRacyMargin / 2) }
	for i := range 3 {
		mustScan(t, s, w.env)
		if n := reads.take(w.xdg)[w.xdg]; n != 1 {
			t.Fatalf("scan %d read the racy %s %d times, want once", i, w.xdg, n)
		}
	}
	// Once its timestamps are old enough it is read once more, then reused.
	s.now = func() time.Time { return changed.Add(racyMarginCoarse + time.Second) }
	mustScan(t, s, w.env)
	mustScan(t, s, w.env)
	if n := reads.take(w.xdg)[w.xdg]; n != 1 {
		t.Errorf("old directory read %d times in two scans, want once", n)
	}
}

// TestSocketScanFindsSocketMadeRightAfterAScan is the case the racy rule
// exists for, on the real clock: a socket bound right after the directory
// was read is found by the very next scan.
func TestSocketScanFindsSocketMadeRightAfterAScan(t *testing.T) {
	w := newScanWorld(t)
	s := NewSocketScanner()
	for i := range 20 {
		p := filepath.Join(w.xdg, fmt.Sprintf("s%d", i))
		mustScan(t, s, w.env)
		listen(t, p)
		if got := mustScan(t, s, w.env); !slices.Contains(got, p) {
			t.Fatalf("socket %s bound right after a scan was not found by the next: %v", p, got)
		}
	}
}

func TestSocketScanDropsRemovedSockets(t *testing.T) {
	w := newScanWorld(t)
	p := filepath.Join(w.tmp, "ssh-x", "agent.1")
	listen(t, p)
	s := NewSocketScanner()
	s.now = func() time.Time { return time.Now().Add(time.Hour) } // cache everything
	if got := mustScan(t, s, w.env); !slices.Contains(got, p) {
		t.Fatalf("%s not found: %v", p, got)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if got := mustScan(t, s, w.env); slices.Contains(got, p) {
		t.Errorf("removed socket %s still listed", p)
	}
}

// TestSocketScanHasNoSilentBudget: the scan used to stop after 5,000
// entries; a socket among more than that is found now.
func TestSocketScanHasNoSilentBudget(t *testing.T) {
	w := newScanWorld(t)
	for i := range 6000 {
		if err := unix.Mknod(filepath.Join(w.tmp, fmt.Sprintf("f%05d", i)), unix.S_IFREG|0o600, 0); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(w.tmp, "ssh-late", "agent")
	listen(t, p)
	if got := mustScan(t, NewSocketScanner(), w.env); !slices.Contains(got, p) {
		t.Errorf("socket %s among 6,000 entries not found", p)
	}
}

// floodDir is a directory to fill with many files: a tmpfs of its own when
// this process may mount one (the machine's /tmp may be a slow disk), else
// a temporary directory.
func floodDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if os.Getuid() == 0 && unix.Mount("tmpfs", dir, "tmpfs", 0, "size=256m,nr_inodes=1000000,mode=0700") == nil {
		t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	}
	return dir
}

func fill(t testing.TB, dir string, n int) {
	t.Helper()
	for i := range n {
		if err := unix.Mknod(filepath.Join(dir, fmt.Sprintf("f%05d", i)), unix.S_IFREG|0o600, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSocketScanHasNoBoundOnEntries: a command can fill $TMPDIR; the scan
// of 200,000 entries still finishes and finds the sockets among them.
func TestSocketScanHasNoBoundOnEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 200,000 files")
	}
	w := newScanWorld(t)
	w.tmp = floodDir(t)
	w.env = []string{"HOME=" + w.home, "TMPDIR=" + w.tmp, "XDG_RUNTIME_DIR=" + w.xdg}
	fill(t, w.tmp, 200_000)
	top := filepath.Join(w.tmp, "zz.sock")
	deep := filepath.Join(w.tmp, "ssh-x", "agent")
	listen(t, top)
	listen(t, deep)
	s := NewSocketScanner()
	got, _, err := s.ToMask(w.env, "/", nil)
	if err != nil {
		t.Fatalf("scan of 200,000 entries: %v", err)
	}
	for _, p := range []string{top, deep} {
		if !slices.Contains(got, resolve(t, p)) {
			t.Errorf("socket %s among 200,000 entries not found", p)
		}
	}
}

// deadSockets leaves n socket files in dir with nobody bound to them, as a
// command that bound and exited does.
func deadSockets(t testing.TB, dir string, n int) {
	t.Helper()
	for i := range n {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		err = unix.Bind(fd, &unix.SockaddrUnix{Name: filepath.Join(dir, fmt.Sprintf("dead%05d.sock", i))})
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestSocketScanDeadSocketFlood: thousands of socket files nobody listens
// on (the attack: a command binds them and exits) are not masked one mount
// each; every socket with a server still is, whatever its type, however
// long its path, and in whichever network namespace its server runs.
func TestSocketScanDeadSocketFlood(t *testing.T) {
	w := newScanWorld(t)
	deadSockets(t, w.tmp, 2*probeAbove)
	stream := filepath.Join(w.tmp, "stream.sock")
	listen(t, stream)
	dgram := filepath.Join(w.tmp, "dgram.sock")
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: dgram, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// A path longer than sun_path, deep in $XDG_RUNTIME_DIR.
	deep := filepath.Join(w.xdg, strings.Repeat("d", 60), strings.Repeat("e", 60))
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(deep, "long.sock")
	listenLong(t, long)
	live := []string{stream, dgram, long}
	if os.Getuid() == 0 {
		other := filepath.Join(w.tmp, "other-netns.sock")
		listenInOtherNetns(t, other)
		live = append(live, other)
	}
	s := NewSocketScanner()
	s.now = func() time.Time { return time.Now().Add(time.Hour) } // all settled
	for run := range 2 {                                          // the second remembers the dead ones
		got, _, err := s.ToMask(w.env, "/", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range live {
			if !slices.Contains(got, resolve(t, p)) {
				t.Errorf("run %d: live socket %s not masked", run, p)
			}
		}
		if len(got) > len(live)+8 { // the machine's own sockets in /run
			t.Errorf("run %d: %d sockets to mask, want the %d live ones (and the machine's own): dead files are masked", run, len(got), len(live))
		}
	}
	s.mu.Lock()
	remembered := len(s.dead)
	s.mu.Unlock()
	if remembered < 2*probeAbove || remembered > 2*probeAbove+8 {
		t.Errorf("%d dead sockets remembered, want the %d dead files", remembered, 2*probeAbove)
	}
	// Twin: below the probing threshold every socket found is masked, dead
	// or not, as before.
	w2 := newScanWorld(t)
	deadSockets(t, w2.tmp, 3)
	got, _, err := NewSocketScanner().ToMask(w2.env, "/", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if p := resolve(t, filepath.Join(w2.tmp, fmt.Sprintf("dead%05d.sock", i))); !slices.Contains(got, p) {
			t.Errorf("%s not masked below the threshold", p)
		}
	}
}

// listenLong listens on a socket whose path is too long for sun_path,
// binding through /proc/self/fd.
func listenLong(t *testing.T, p string) {
	t.Helper()
	dir, err := os.Open(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	l, err := net.Listen("unix", fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(p)))
	if err != nil {
		t.Fatalf("bind through /proc/self/fd: %v", err)
	}
	t.Cleanup(func() { l.Close() })
}

// listenInOtherNetns listens on p from a network namespace of its own, as a
// container or a service with a private network does: sock_diag here does
// not list it.
func listenInOtherNetns(t *testing.T, p string) {
	t.Helper()
	errc := make(chan error, 1)
	var fd int
	go func() {
		runtime.LockOSThread() // the thread dies with its namespace
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- err
			return
		}
		var err error
		if fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
			if err = unix.Bind(fd, &unix.SockaddrUnix{Name: p}); err == nil {
				err = unix.Listen(fd, 8)
			}
		}
		errc <- err
	}()
	if err := <-errc; err != nil {
		t.Fatalf("listen in another network namespace: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	bound, err := BoundSocketFiles()
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	if bound[SocketFileOf(&st)] {
		t.Fatal("sock_diag lists a socket of another network namespace: the probe is not exercised")
	}
}

// TestSocketScanBoundSocketFiles: sock_diag reports the file a listening
// socket is bound to, and not a dead socket file.
func TestSocketScanBoundSocketFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "live.sock")
	listen(t, p)
	deadSockets(t, dir, 1)
	bound, err := BoundSocketFiles()
	if err != nil {
		t.Fatal(err)
	}
	id := func(p string) SocketFile {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		return SocketFileOf(&st)
	}
	if !bound[id(p)] {
		t.Errorf("sock_diag does not list %s (%d files listed)", p, len(bound))
	}
	if bound[id(filepath.Join(dir, "dead00000.sock"))] {
		t.Error("sock_diag lists a dead socket file")
	}
}

// BenchmarkSocketScan times the launcher's socket scan of this machine's
// real places (with this process's environment): cold, with an empty cache
// as in a fresh process, and cached, as in every later run of a long-lived
// warden:
//
//	go test -run '^$' -bench SocketScan ./sandbox
func BenchmarkSocketScan(b *testing.B) {
	env := os.Environ()
	b.Run("cold", func(b *testing.B) {
		for range b.N {
			if _, _, err := NewSocketScanner().scan(env, "/"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		s := NewSocketScanner()
		if _, _, err := s.scan(env, "/"); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if _, _, err := s.scan(env, "/"); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		s.mu.Lock()
		b.ReportMetric(float64(len(s.dirs)), "cached-dirs")
		s.mu.Unlock()
	})
}

// BenchmarkSocketScanFlood times the scan of a $TMPDIR a command filled
// with 200,000 files, against plain walks of the same directory in the same
// run, and the liveness check of 10,000 dead socket files (what a flood of
// them costs instead of a mount each):
//
//	go test -run '^$' -bench SocketScanFlood -benchtime 10x ./sandbox
func BenchmarkSocketScanFlood(b *testing.B) {
	tmp := floodDir(b)
	fill(b, tmp, 200_000)
	xdg, home := b.TempDir(), b.TempDir()
	env := []string{"HOME=" + home, "TMPDIR=" + tmp, "XDG_RUNTIME_DIR=" + xdg}
	old := time.Now().Add(time.Hour) // the directory counts as settled
	b.Run("baseline-filepath.WalkDir", func(b *testing.B) {
		for range b.N {
			n := 0
			filepath.WalkDir(tmp, func(string, fs.DirEntry, error) error { n++; return nil })
		}
	})
	b.Run("baseline-Readdirnames", func(b *testing.B) {
		for range b.N {
			f, err := os.Open(tmp)
			if err != nil {
				b.Fatal(err)
			}
			f.Readdirnames(-1)
			f.Close()
		}
	})
	b.Run("scan-cold", func(b *testing.B) {
		for range b.N {
			if _, _, err := NewSocketScanner().scan(env, "/"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("scan-cached", func(b *testing.B) {
		s := NewSocketScanner()
		s.now = func() time.Time { return old }
		if _, _, err := s.scan(env, "/"); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if _, _, err := s.scan(env, "/"); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Service-named directories are each read: 20,000 of them cost a
	// read each per run past what the cache holds (maxCachedDirs).
	svc := floodDir(b)
	for i := range 20_000 {
		if err := os.Mkdir(filepath.Join(svc, fmt.Sprintf("tmux-%d", i)), 0o700); err != nil {
			b.Fatal(err)
		}
	}
	svcEnv := []string{"HOME=" + home, "TMPDIR=" + svc, "XDG_RUNTIME_DIR=" + xdg}
	b.Run("scan-20k-service-dirs-cold", func(b *testing.B) {
		for range b.N {
			if _, _, err := NewSocketScanner().scan(svcEnv, "/"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("scan-20k-service-dirs-cached", func(b *testing.B) {
		s := NewSocketScanner()
		s.now = func() time.Time { return old }
		if _, _, err := s.scan(svcEnv, "/"); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if _, _, err := s.scan(svcEnv, "/"); err != nil {
				b.Fatal(err)
			}
		}
	})
	dead := b.TempDir()
	deadSockets(b, dead, 10_000)
	var paths []string
	for i := range 10_000 {
		paths = append(paths, filepath.Join(dead, fmt.Sprintf("dead%05d.sock", i)))
	}
	known := NewSocketScanner()
	known.now = func() time.Time { return old }
	if _, err := known.keepLive(paths); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		s    func() *SocketScanner
	}{{"keepLive-10k-dead-sockets-cold", NewSocketScanner}, {"keepLive-10k-dead-sockets-known", func() *SocketScanner { return known }}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if live, err := c.s().keepLive(paths); err != nil || len(live) != 0 {
					b.Fatalf("keepLive: %d live, %v", len(live), err)
				}
			}
		})
	}
}

func TestSocketScanCacheIsBounded(t *testing.T) {
	w := newScanWorld(t)
	var want []string
	for i := range 40 {
		p := filepath.Join(w.xdg, fmt.Sprintf("d%02d", i), "s")
		listen(t, p)
		want = append(want, p)
	}
	s := NewSocketScanner()
	s.maxDirs, s.maxNames = 16, 30
	s.now = func() time.Time { return time.Now().Add(time.Hour) }
	for range 3 {
		got := mustScan(t, s, w.env)
		for _, p := range want {
			if !slices.Contains(got, p) {
				t.Fatalf("%s not found with a full cache", p)
			}
		}
		s.mu.Lock()
		dirs, names := len(s.dirs), s.names
		s.mu.Unlock()
		if dirs > s.maxDirs || names > s.maxNames {
			t.Fatalf("cache holds %d directories and %d names, bounds %d and %d", dirs, names, s.maxDirs, s.maxNames)
		}
	}
}
