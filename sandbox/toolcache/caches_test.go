package toolcache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/envlist"
	"github.com/wardenhq/warden/sandbox/protect"
)

// makeSet makes a cache set of size bytes, last used at used, with a
// read-only directory inside (as Go's module cache leaves them).
func makeSet(t *testing.T, root, ws string, size int, used time.Time) string {
	t.Helper()
	dir := SetDir(root, ws)
	mod := filepath.Join(dir, DataDir, "go-mod", "m@v1")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(mod, "blob"), make([]byte, size), 0o444)
	os.Chmod(mod, 0o555)
	os.WriteFile(filepath.Join(dir, workspaceFile), []byte(ws+"\n"), 0o600)
	os.WriteFile(filepath.Join(dir, lastUsedFile), nil, 0o600)
	os.Chtimes(filepath.Join(dir, lastUsedFile), used, used)
	return dir
}

func TestCacheEvictionLeastRecentlyUsed(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	old := makeSet(t, root, "/src/old", 4000, now.Add(-48*time.Hour))
	mid := makeSet(t, root, "/src/mid", 4000, now.Add(-time.Hour))
	cur := makeSet(t, root, "/src/cur", 4000, now)
	// A link planted in a set to a file outside: eviction must not follow it.
	outside := filepath.Join(t.TempDir(), "keep")
	os.WriteFile(outside, []byte("user file"), 0o600)
	os.Symlink(filepath.Dir(outside), filepath.Join(old, DataDir, "escape"))

	sets, err := ListSets(root)
	if err != nil || len(sets) != 3 || sets[0].Dir != old || sets[2].Dir != cur || sets[0].Workspace != "/src/old" || sets[0].Size < 4000 {
		t.Fatalf("ListSets: %+v %v", sets, err)
	}
	Evict(root, 9000, cur)
	if _, err := os.Stat(old); err == nil {
		t.Errorf("the least recently used set survived")
	}
	for _, keep := range []string{mid, cur} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s evicted although the rest fit the cap", keep)
		}
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "user file" {
		t.Errorf("eviction followed a planted link out of the set: %q %v", b, err)
	}
	// At most once a minute: a second pass right away does nothing.
	Evict(root, 1, cur)
	if _, err := os.Stat(mid); err != nil {
		t.Errorf("a second eviction within the minute ran")
	}
	// A cap the current set alone exceeds empties its caches, not its records.
	os.Chtimes(filepath.Join(root, evictedFile), now.Add(-time.Hour), now.Add(-time.Hour))
	os.Chtimes(filepath.Join(mid, lastUsedFile), now.Add(-time.Hour), now.Add(-time.Hour))
	Evict(root, 1000, cur)
	if _, err := os.Stat(mid); err == nil {
		t.Errorf("the older set survived a cap below the current set")
	}
	if ents, _ := os.ReadDir(filepath.Join(cur, DataDir)); len(ents) != 0 {
		t.Errorf("the current set over the cap kept %v", ents)
	}
	if _, err := os.Stat(filepath.Join(cur, lastUsedFile)); err != nil {
		t.Errorf("the current set lost its records")
	}
	// Twin: no cap evicts nothing.
	os.Chtimes(filepath.Join(root, evictedFile), now.Add(-time.Hour), now.Add(-time.Hour))
	Evict(root, 0, "")
	if _, err := os.Stat(cur); err != nil {
		t.Errorf("no cap, yet evicted")
	}
}

func TestCacheSetDirNames(t *testing.T) {
	a, b := SetDir("/c", "/home/u/src/app"), SetDir("/c", "/home/u/other/app")
	if a == b || !strings.HasPrefix(filepath.Base(a), "app-") || filepath.Dir(a) != "/c" {
		t.Errorf("set dirs %s %s", a, b)
	}
	if d := SetDir("/c", "/"); !strings.HasPrefix(filepath.Base(d), "root-") {
		t.Errorf("set of / is %s", d)
	}
	if d := SetDir("/c", "/x/../../etc"); filepath.Dir(d) != "/c" {
		t.Errorf("set dir escapes the root: %s", d)
	}
}

func TestCacheEnvKeepsOnlyWritableUserValues(t *testing.T) {
	roots := []protect.Root{{Path: "/ws", Protected: []string{"/ws/.git"}}}
	env := Env([]string{"GOCACHE=/ws/.cache/go", "GOMODCACHE=/home/u/go/pkg/mod", "PIP_CACHE_DIR=/ws/.git/pip", "MAVEN_OPTS=-Xmx1g"}, "/c/set", "/ws", roots, "")
	want := map[string]string{
		"GOCACHE":       "/ws/.cache/go",
		"GOMODCACHE":    "/c/set/data/go-mod",
		"PIP_CACHE_DIR": "/c/set/data/pip",
		"CARGO_HOME":    "/c/set/data/cargo",
		"MAVEN_OPTS":    "-Xmx1g -Dmaven.repo.local=/c/set/data/m2",
		"GOFLAGS":       "-buildvcs=false",
	}
	for k, v := range want {
		if got := envlist.Get(env, k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
}

// The user's pnpm store is found where pnpm looks: its store-dir setting
// (environment, then pnpm's rc, then ~/.npmrc), $PNPM_HOME, XDG_DATA_HOME.
func TestCachePnpmStoreWherePnpmLooks(t *testing.T) {
	home := t.TempDir()
	cases := []struct {
		env   []string
		rc    string
		npmrc string
		want  string
	}{
		{want: filepath.Join(home, ".local/share/pnpm/store")},
		{env: []string{"XDG_DATA_HOME=/d"}, want: "/d/pnpm/store"},
		{env: []string{"PNPM_HOME=/p", "XDG_DATA_HOME=/d"}, want: "/p/store"},
		{env: []string{"PNPM_HOME=/p"}, npmrc: "//registry/:_authToken=secret\nstore-dir = ~/pstore\n", want: filepath.Join(home, "pstore")},
		{rc: "store-dir=/rc/store\n", npmrc: "store-dir=/npmrc/store\n", want: "/rc/store"},
		{env: []string{"npm_config_store_dir=/env/store"}, rc: "store-dir=/rc/store\n", want: "/env/store"},
		{npmrc: "store-dir=relative\n", want: ""},
	}
	for _, c := range cases {
		os.RemoveAll(filepath.Join(home, ".config"))
		os.Remove(filepath.Join(home, ".npmrc"))
		if c.rc != "" {
			os.MkdirAll(filepath.Join(home, ".config/pnpm"), 0o700)
			os.WriteFile(filepath.Join(home, ".config/pnpm/rc"), []byte(c.rc), 0o600)
		}
		if c.npmrc != "" {
			os.WriteFile(filepath.Join(home, ".npmrc"), []byte(c.npmrc), 0o600)
		}
		if got := pnpmStore(c.env, home); got != c.want {
			t.Errorf("env %v, rc %q, npmrc %q: store %q, want %q", c.env, c.rc, c.npmrc, got, c.want)
		}
	}
}

// The user's yarn cache is found where yarn classic looks: root's is
// under /usr/local/share, not under its home, unless XDG_CACHE_HOME says.
func TestCacheYarnWhereYarnLooks(t *testing.T) {
	cases := []struct {
		env  []string
		root bool
		want string
	}{
		{want: "/home/u/.cache/yarn"},
		{root: true, want: "/usr/local/share/.cache/yarn"},
		{env: []string{"XDG_CACHE_HOME=/x"}, root: true, want: "/x/yarn"},
		{env: []string{"XDG_CACHE_HOME=relative"}, want: "/home/u/.cache/yarn"},
	}
	for _, c := range cases {
		if got := yarnCache(c.env, "/home/u", c.root); got != c.want {
			t.Errorf("env %v, root %v: yarn cache %q, want %q", c.env, c.root, got, c.want)
		}
	}
}

// A run longer than a minute holds its set's lock (or, beside another
// run, its scratch layer's): eviction leaves that set alone, whatever its
// last use, and takes it once the runs are over.
func TestCacheEvictionSkipsSetsInUse(t *testing.T) {
	root := t.TempDir()
	long := time.Now().Add(-2 * time.Hour)
	idle := makeSet(t, root, "/src/idle", 4000, long.Add(-time.Hour))
	holder := makeSet(t, root, "/src/holder", 4000, long)
	shared := makeSet(t, root, "/src/shared", 4000, long)
	cur := makeSet(t, root, "/src/cur", 4000, time.Now())
	lease := func(dir string) *Lease {
		l, err := Take(dir, filepath.Join(dir, DataDir), nil)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	holding := lease(holder)
	first, beside := lease(shared), lease(shared)
	first.Release() // the run beside it goes on, in its scratch layer
	curRun := lease(cur)
	for _, dir := range []string{holder, shared} {
		os.Chtimes(filepath.Join(dir, lastUsedFile), long, long) // the lease's Take does not record a use
	}
	stamp := filepath.Join(root, evictedFile)

	Evict(root, 1, cur)
	if _, err := os.Stat(idle); err == nil {
		t.Errorf("the idle set survived a cap below it")
	}
	for _, dir := range []string{holder, shared} {
		if _, err := os.Stat(filepath.Join(dir, DataDir, "go-mod", "m@v1", "blob")); err != nil {
			t.Errorf("eviction removed %s while a run held it: %v", dir, err)
		}
	}
	if _, err := os.Stat(filepath.Join(cur, DataDir, "go-mod", "m@v1", "blob")); err != nil {
		t.Errorf("the current set was emptied while another run of its workspace held it: %v", err)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 4 { // three sets and the stamp: nothing left aside
		t.Errorf("root after eviction: %v", ents)
	}

	// Twin: once the runs end, the same pass evicts them.
	holding.Release()
	beside.Release()
	curRun.Release()
	os.Chtimes(stamp, long, long)
	Evict(root, 1, cur)
	for _, dir := range []string{holder, shared} {
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s survived once its runs ended", dir)
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(cur, DataDir)); len(ents) != 0 {
		t.Errorf("the current set over the cap kept %v once alone", ents)
	}
}
