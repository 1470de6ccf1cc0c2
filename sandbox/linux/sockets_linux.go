package linux

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/envlist"
	"github.com/wardenhq/warden/sandbox/protect"
	"golang.org/x/sys/unix"
)

// On Landlock ABI < 9 a read-only mount does not stop connect() to a
// pathname unix socket, so the helper bind-mounts /dev/null over every
// socket in the places services keep theirs. The launcher finds them: it
// lives long, so it can cache what it read, and the helper starts faster.
// From ABI 9 Landlock refuses connect() to every socket bound outside the
// sandbox (the helper handles the right and grants it nowhere) and keeps
// those the command binds usable, so there is nothing to scan.
//
// A command can write the places scanned when they lie in a writable root
// (/tmp, $TMPDIR), so their contents must never stop the next run: the scan
// has no bound on entries (getdents with d_type, no stat per entry, and a
// directory read once is reused while unchanged), and a flood of socket
// files, which would cost a mount each, is cut down to the sockets someone
// still listens on (see keepLive).

// serviceSocketDirs are the /tmp subdirectories where services keep their
// sockets (X11, ICE, tmux, ssh-agent, screen, editors, D-Bus, PulseAudio).
var serviceSocketDirs = []string{".X11-unix", ".ICE-unix", ".font-unix", "tmux-*", "ssh-*", "screen*", "S-*",
	"nvim*", "emacs*", "kitty*", "wezterm*", "dbus-*", "pulse-*"}

// Masks cost a mount each (about 40 us; the kernel allows 100,000 mounts
// per namespace). Past probeAbove sockets the scan's finds are checked for
// a listener and dead ones are left alone; past maxMasks live sockets and
// hidden directories the run is refused. A command can cause that only
// while it still runs (everything it started dies with it) or, for a user
// other than root, by leaving that many service-named directories it made
// unlistable.
const (
	probeAbove = 256
	maxMasks   = 20_000
)

// The cache holds at most this many directories and names in them; what
// does not fit is read again next time.
const (
	maxCachedDirs  = 8192
	maxCachedNames = 65536
)

// A listing is reused only if the directory's mtime and ctime were older
// than the start of the scan that read it by this margin. Timestamps come
// from the kernel's coarse clock (one tick, up to 10 ms), so an entry made
// in the same tick right after the read leaves them unchanged: the "racy
// git index" problem. Filesystems that store whole seconds get a margin
// covering their granularity.
const (
	SocketRacyMargin = 100 * time.Millisecond
	racyMarginCoarse = 2 * time.Second
)

// SocketScanner finds the unix sockets a sandboxed command must not reach
// (needed below Landlock ABI 9), caching each directory's listing under its
// identity. Safe for concurrent use; the launcher keeps one for its life.
type SocketScanner struct {
	mu    sync.Mutex
	dirs  map[dirKey]*dirListing
	names int // sockets and subdirectories held by dirs
	dead  map[deadSocket]bool
	seq   uint64 // scans started, for eviction

	maxDirs  int              // maxCachedDirs
	maxNames int              // maxCachedNames
	now      func() time.Time // the clock racy timestamps are judged by
	onRead   func(dir string) // tests count what is read from disk
}

// dirKey names a directory as walked: service directories at the top of
// /tmp keep only matching subdirectories.
type dirKey struct {
	path    string
	service bool
}

// dirID is a directory's identity: any entry added, removed or renamed in
// it changes mtime and ctime, and ctime cannot be set back by anyone.
type dirID struct {
	dev, ino     uint64
	mtime, ctime unix.Timespec
}

// Cached reports whether the scanner holds the listing of dir, which it
// reuses while the directory is unchanged.
func (s *SocketScanner) Cached(dir string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dirs[dirKey{path: dir}] != nil
}

type dirListing struct {
	id      dirID
	sockets []string // paths
	subdirs []string // paths of the subdirectories to descend
	used    uint64   // the last scan that used it
}

// NewSocketScanner returns a scanner with an empty cache.
func NewSocketScanner() *SocketScanner {
	return &SocketScanner{dirs: map[dirKey]*dirListing{}, dead: map[deadSocket]bool{},
		maxDirs: maxCachedDirs, maxNames: maxCachedNames, now: time.Now}
}

// ToMask scans for the launcher before a namespaced run: the sockets to
// cover with /dev/null, and the directories to cover with an empty tmpfs
// because they can be entered but not listed. An error means the sockets
// cannot all be masked: the run must be refused.
func (s *SocketScanner) ToMask(env []string, cwd string, roots []protect.Root) (sockets, hidden []string, err error) {
	sockets, hidden, err = s.scan(env, cwd)
	if err != nil {
		return nil, nil, err
	}
	if len(sockets) > probeAbove {
		if sockets, err = s.keepLive(sockets); err != nil {
			return nil, nil, err
		}
	}
	if n := len(sockets) + len(hidden); n > maxMasks {
		return nil, nil, fmt.Errorf("%d unix sockets with a listener and unlistable directories to mask (more than %d), so Warden cannot mask them all; stop some services or remove the directories and retry", n, maxMasks)
	}
	for _, h := range hidden {
		for _, p := range append([]string{cwd}, RootPaths(roots)...) {
			if p == h || strings.HasPrefix(p, h+"/") {
				return nil, nil, fmt.Errorf("%s cannot be listed, so Warden cannot mask the unix sockets in it, and %s lies inside it so it cannot be hidden either; run the command from a directory elsewhere", h, p)
			}
		}
	}
	return sockets, hidden, nil
}

// scanState is one scan's progress.
type scanState struct {
	s       *SocketScanner
	start   time.Time
	seq     uint64
	visited map[visitKey]int // depth walked
	sockets []string
	hidden  []string
	buf     []byte
}

// visitKey is a directory walked in this scan, however it was reached.
type visitKey struct {
	dev, ino uint64
	service  bool
}

// scan lists the unix sockets a sandboxed command must not reach:
// everything under /run (docker.sock, D-Bus, systemd) and
// $XDG_RUNTIME_DIR, sockets at the top of /tmp and $TMPDIR and in the
// service directories there, those in ~/.ssh, ~/.gnupg and ~/.docker, and
// the ones the environment points at ($SSH_AUTH_SOCK, $TMUX, $NVIM,
// $DOCKER_HOST, $DBUS_SESSION_BUS_ADDRESS). A full walk of /tmp would cost
// too much for every command; doctor says what this leaves open. hidden
// are directories the launcher can enter but not list. An error means a
// place could not be scanned completely: the run must be refused.
func (s *SocketScanner) scan(env []string, cwd string) (sockets, hidden []string, err error) {
	s.mu.Lock()
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	st := &scanState{s: s, start: s.now(), seq: seq, visited: make(map[visitKey]int, 64)}

	type place struct {
		path    string
		depth   int
		service bool
	}
	places := []place{
		{"/run", 5, false}, {"/var/run", 5, false}, {envlist.Get(env, "XDG_RUNTIME_DIR"), 4, false},
		{"/tmp", 3, true}, {envlist.Get(env, "TMPDIR"), 3, true},
	}
	if home := envlist.Get(env, "HOME"); home != "" {
		for _, d := range []string{".ssh", ".gnupg", ".docker"} {
			places = append(places, place{filepath.Join(home, d), 3, false})
		}
	}
	for _, p := range places {
		if !filepath.IsAbs(p.path) {
			continue
		}
		if err := st.walk(filepath.Clean(p.path), p.depth, p.service, true); err != nil {
			return nil, nil, err
		}
	}
	for _, p := range envSocketPaths(env) {
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p) // where the command would resolve it
		}
		var stat unix.Stat_t
		if err := unix.Stat(p, &stat); err != nil {
			if unreachable(err) || errors.Is(err, unix.EACCES) {
				continue
			}
			return nil, nil, fmt.Errorf("cannot check the unix socket %s for masking: %v", p, err)
		}
		if stat.Mode&unix.S_IFMT == unix.S_IFSOCK {
			r, err := filepath.EvalSymlinks(p)
			if err != nil {
				return nil, nil, fmt.Errorf("cannot resolve the unix socket %s for masking: %v", p, err)
			}
			st.sockets = append(st.sockets, r)
		}
	}
	st.evict()
	slices.Sort(st.sockets)
	return slices.Compact(st.sockets), st.hidden, nil
}

// walk scans dir, and its subdirectories down to depth levels in all. A
// symbolic link is followed only where a place itself is one (/var/run).
func (st *scanState) walk(dir string, depth int, service, follow bool) error {
	var fresh unix.Stat_t
	if err := unix.Lstat(dir, &fresh); err != nil {
		if unreachable(err) || errors.Is(err, unix.EACCES) {
			return nil // gone, or an ancestor cannot be searched
		}
		return fmt.Errorf("cannot scan %s for unix sockets: %v; fix the directory or its filesystem", dir, err)
	}
	switch fresh.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFSOCK:
		// It was a directory when its parent was read.
		st.sockets = append(st.sockets, dir)
		return nil
	case unix.S_IFLNK:
		if !follow {
			return nil
		}
		r, err := filepath.EvalSymlinks(dir)
		if err != nil {
			if unreachable(err) || errors.Is(err, unix.EACCES) {
				return nil
			}
			return fmt.Errorf("cannot resolve %s to scan it for unix sockets: %v", dir, err)
		}
		return st.walk(r, depth, service, false)
	default:
		return nil
	}
	vk := visitKey{fresh.Dev, fresh.Ino, service}
	if d, ok := st.visited[vk]; ok && d >= depth {
		return nil
	}
	st.visited[vk] = depth
	l, err := st.list(dirKey{dir, service}, &fresh)
	if err != nil || l == nil {
		return err
	}
	st.sockets = append(st.sockets, l.sockets...)
	if depth > 1 {
		for _, sub := range l.subdirs {
			if err := st.walk(sub, depth-1, false, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// list returns the listing of the directory fresh describes, from the cache
// when its identity is unchanged, else read; nil when there is nothing the
// command could reach in it.
func (st *scanState) list(key dirKey, fresh *unix.Stat_t) (*dirListing, error) {
	s := st.s
	s.mu.Lock()
	if c := s.dirs[key]; c != nil && c.id == idOf(fresh) {
		c.used = st.seq
		s.mu.Unlock()
		return c, nil
	}
	s.mu.Unlock()

	l, local, err := st.read(key)
	if err != nil || l == nil {
		return nil, err
	}
	if local && !st.racy(l.id) {
		s.store(key, l, st.seq)
	}
	return l, nil
}

// read lists a directory from disk. local says whether its filesystem's
// timestamps can be trusted to change with its contents (a network
// filesystem's attributes may be cached or set by another clock).
func (st *scanState) read(key dirKey) (l *dirListing, local bool, err error) {
	dir := key.path
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		switch {
		case unreachable(err):
			return nil, false, nil // gone or replaced since it was listed
		case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
			// A directory this user cannot search hides nothing: connect()
			// needs search permission on every directory of the path, and
			// the sandboxed command has this user's permissions and no
			// capabilities. One it can search but not list may hold
			// sockets reachable by name: the helper hides it whole.
			if unix.Faccessat(unix.AT_FDCWD, dir, unix.X_OK, unix.AT_EACCESS) != nil {
				return nil, false, nil
			}
			if !slices.Contains(st.hidden, dir) {
				st.hidden = append(st.hidden, dir)
			}
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("cannot read %s to mask the unix sockets in it: %v; fix the directory or free the resource and retry", dir, err)
	}
	defer unix.Close(fd)
	if st.s.onRead != nil {
		st.s.onRead(dir)
	}
	var stat unix.Stat_t
	if err := unix.Fstat(fd, &stat); err != nil {
		return nil, false, fmt.Errorf("cannot stat %s to mask the unix sockets in it: %v", dir, err)
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err == nil {
		local = localFS(fs.Type)
	}
	l = &dirListing{id: idOf(&stat)}
	if st.buf == nil {
		st.buf = make([]byte, 32<<10)
	}
	for {
		n, err := unix.Getdents(fd, st.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.ENOENT) {
			return nil, false, nil // removed while being read
		}
		if err != nil {
			return nil, false, fmt.Errorf("cannot read %s to mask the unix sockets in it: %v", dir, err)
		}
		if n <= 0 {
			break
		}
		if err := st.parse(fd, key, st.buf[:n], l); err != nil {
			return nil, false, err
		}
	}
	return l, local, nil
}

// parse reads linux_dirent64 records: inode, offset, record length, type,
// NUL-terminated name.
func (st *scanState) parse(fd int, key dirKey, buf []byte, l *dirListing) error {
	for len(buf) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(buf[16:18]))
		if reclen < 19 || reclen > len(buf) {
			return fmt.Errorf("cannot read %s to mask the unix sockets in it: malformed directory entry", key.path)
		}
		typ := buf[18]
		name := buf[19:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		buf = buf[reclen:]
		if len(name) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		if typ == unix.DT_UNKNOWN { // some filesystems do not say
			var stat unix.Stat_t
			if err := unix.Fstatat(fd, string(name), &stat, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				// A directory readable but not searchable: nothing in it
				// can be reached by name either.
				if unreachable(err) || errors.Is(err, unix.EACCES) {
					continue
				}
				return fmt.Errorf("cannot check %s/%s for a unix socket: %v", key.path, name, err)
			}
			switch stat.Mode & unix.S_IFMT {
			case unix.S_IFSOCK:
				typ = unix.DT_SOCK
			case unix.S_IFDIR:
				typ = unix.DT_DIR
			}
		}
		switch typ {
		case unix.DT_SOCK:
			l.sockets = append(l.sockets, key.path+"/"+string(name))
		case unix.DT_DIR:
			if !key.service || isServiceDir(string(name)) {
				l.subdirs = append(l.subdirs, key.path+"/"+string(name))
			}
		}
	}
	return nil
}

func isServiceDir(name string) bool {
	for _, pat := range serviceSocketDirs {
		if ok, _ := filepath.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// racy reports whether a listing read in this scan may miss an entry made
// right after the read without changing the directory's timestamps.
func (st *scanState) racy(id dirID) bool {
	margin := SocketRacyMargin
	if id.mtime.Nsec == 0 && id.ctime.Nsec == 0 {
		margin = racyMarginCoarse
	}
	safe := st.start.Add(-margin)
	return !time.Unix(id.mtime.Unix()).Before(safe) || !time.Unix(id.ctime.Unix()).Before(safe)
}

func (s *SocketScanner) store(key dirKey, l *dirListing, seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	size := len(l.sockets) + len(l.subdirs)
	if old := s.dirs[key]; old != nil {
		s.names -= len(old.sockets) + len(old.subdirs)
		delete(s.dirs, key)
	}
	if len(s.dirs) >= s.maxDirs || s.names+size > s.maxNames {
		return // full of what recent scans use: read this one again next time
	}
	l.used = seq
	s.dirs[key] = l
	s.names += size
}

// evict drops, when the cache is more than half full, the listings no scan
// has used since this one started, so directories of old environments do
// not crowd out current ones.
func (st *scanState) evict() {
	s := st.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.dirs) < s.maxDirs/2 && s.names < s.maxNames/2 {
		return
	}
	for k, l := range s.dirs {
		if l.used < st.seq {
			s.names -= len(l.sockets) + len(l.subdirs)
			delete(s.dirs, k)
		}
	}
}

func idOf(st *unix.Stat_t) dirID {
	return dirID{dev: st.Dev, ino: st.Ino, mtime: st.Mtim, ctime: st.Ctim}
}

// localFS reports whether a filesystem's directory timestamps change with
// every entry made in it on this machine and are stamped by this machine's
// clock. Directories elsewhere (NFS, SMB, FUSE, 9p) are read every time.
func localFS(magic int64) bool {
	switch uint32(magic) {
	case unix.TMPFS_MAGIC, unix.RAMFS_MAGIC, unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC,
		unix.BTRFS_SUPER_MAGIC, unix.F2FS_SUPER_MAGIC, unix.OVERLAYFS_SUPER_MAGIC, zfsMagic:
		return true
	}
	return false
}

const zfsMagic = 0x2fc12fc1

// unreachable reports errors that mean the path is gone or cannot be
// resolved by anyone: nothing to mask there.
func unreachable(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) ||
		errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENAMETOOLONG)
}

// envSocketPaths are the socket paths named by well-known variables.
func envSocketPaths(env []string) []string {
	var out []string
	out = append(out, envlist.Get(env, "SSH_AUTH_SOCK"), envlist.Get(env, "NVIM"), envlist.Get(env, "NVIM_LISTEN_ADDRESS"))
	if t := envlist.Get(env, "TMUX"); t != "" { // socket,pid,session
		out = append(out, strings.SplitN(t, ",", 2)[0])
	}
	if d, ok := strings.CutPrefix(envlist.Get(env, "DOCKER_HOST"), "unix://"); ok {
		out = append(out, d)
	}
	for _, part := range strings.Split(envlist.Get(env, "DBUS_SESSION_BUS_ADDRESS"), ",") {
		if p, ok := strings.CutPrefix(strings.TrimPrefix(part, "unix:"), "path="); ok {
			out = append(out, p)
		}
	}
	return out
}
