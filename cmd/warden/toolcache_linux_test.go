package main

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/sandbox/toolcache"
)

// The toolchain caches are layered: the user's own read-only underneath,
// the workspace's private cache on top (sandbox/toolcache).

// plainGo runs go unsandboxed as the user whose environment is env.
func plainGo(t testing.TB, env []string, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = dir, append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// treeSums are the contents of every file under dir, by path.
func treeSums(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	sums := map[string][32]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			sums[p] = sha256.Sum256(b)
		}
		return nil
	})
	if len(sums) == 0 {
		t.Fatalf("no files under %s", dir)
	}
	return sums
}

func userCacheUnchanged(t *testing.T, dir string, before map[string][32]byte) {
	t.Helper()
	after := treeSums(t, dir)
	for p, sum := range before {
		if after[p] != sum {
			t.Errorf("the user's cache changed: %s", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("the sandbox added %s to the user's cache", p)
		}
	}
}

// privateData is the data directory of ws's cache set under home.
func privateData(t *testing.T, home, ws string) string {
	t.Helper()
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(toolcache.SetDir(filepath.Join(home, ".cache", "warden", "toolchains"), real), "data")
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

const poisonScript = `for f in $(find "$GOCACHE" -type f -name '*-d'); do echo warden-poison-7f3a > "$f"; done; grep -rl warden-poison-7f3a "$GOCACHE" | wc -l`

// A new workspace's first sandboxed `go test` reads the user's warm cache
// (its result is cached already), writes only what is new into its private
// layer, and what it writes, even over the user's entries, never reaches
// the user's cache or another workspace's.
func TestCacheLayerStartsWarmWritesPrivately(t *testing.T) {
	need(t, "go")
	home, ws, other := toolHome(t), goModule(t), goModule(t)
	env := toolEnv(home)
	plainGo(t, env, ws, "test", "./...")
	userCache := filepath.Join(home, ".cache", "go-build")
	before := treeSums(t, userCache)

	out, errOut, code := sandboxed(t, env, ws, "go test ./...")
	if code != 0 || !strings.Contains(out, "(cached)") {
		t.Fatalf("the first sandboxed go test should hit the user's cache: exit %d\n%s\n%s", code, out, errOut)
	}
	data := privateData(t, home, ws)
	if n := dirSize(filepath.Join(data, "go-build")); n > 1<<20 {
		t.Errorf("the private layer holds %d bytes after a cached run: it should hold only what is new", n)
	}

	// Attack: overwrite every cache entry the sandbox sees, the user's too.
	out, errOut, code = sandboxed(t, env, ws, poisonScript)
	if code != 0 || strings.TrimSpace(out) == "0" {
		t.Fatalf("writing the layered cache: exit %d\n%s\n%s", code, out, errOut)
	}
	userCacheUnchanged(t, userCache, before)
	if out := plainGo(t, env, ws, "test", "./..."); !strings.Contains(out, "(cached)") {
		t.Errorf("the user's next build does not use its own cache:\n%s", out)
	}
	// Another workspace sees the user's entries, not this one's poison.
	out, errOut, code = sandboxed(t, env, other, `grep -rl warden-poison-7f3a "$GOCACHE" | wc -l; go test ./...`)
	if code != 0 || !strings.HasPrefix(out, "0\n") || !strings.Contains(out, "ok  \texample.com/sum") {
		t.Errorf("another workspace: exit %d\n%s\n%s", code, out, errOut)
	}
	// Twin: the workspace keeps what it wrote.
	if out, _, _ := sandboxed(t, env, ws, `grep -rl warden-poison-7f3a "$GOCACHE" | wc -l`); strings.TrimSpace(out) == "0" {
		t.Errorf("the private layer lost the workspace's writes")
	}
}

// Two runs of one workspace overlap: the second stacks the private layer
// read-only on the user's under a scratch upper of its own, so it is warm,
// sees the first run's writes, and what it writes alone is dropped.
func TestCacheLayerConcurrentRuns(t *testing.T) {
	need(t, "go")
	home, ws := toolHome(t), goModule(t)
	env := toolEnv(home)
	plainGo(t, env, ws, "test", "./...")
	data := privateData(t, home, ws)

	first := exec.Command(wardenBin(t), "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "sh", "-c", `echo a > "$GOCACHE/from-first" && sleep 5`)
	first.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	firstOut := &strings.Builder{}
	first.Stdout, first.Stderr = firstOut, firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(data, "go-build", "from-first")); err == nil {
			break
		}
		if i == 200 {
			first.Process.Kill()
			t.Fatalf("the first run never wrote its private layer")
		}
		time.Sleep(50 * time.Millisecond)
	}
	out, errOut, code := sandboxed(t, env, ws, `cat "$GOCACHE/from-first" && echo b > "$GOCACHE/from-second" && go test ./... && stat -f -c %T "$GOCACHE"`)
	if code != 0 || !strings.HasPrefix(out, "a\n") || !strings.Contains(out, "(cached)") || !strings.HasSuffix(out, "overlayfs\n") {
		t.Errorf("a run beside another: exit %d\n%s\n%s", code, out, errOut)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("the first run: %v\n%s", err, firstOut)
	}
	if _, err := os.Stat(filepath.Join(data, "go-build", "from-second")); err == nil {
		t.Errorf("the second run's scratch write reached the private layer")
	}
	if runs, _ := os.ReadDir(filepath.Join(filepath.Dir(data), "layers-runs")); len(runs) != 0 {
		t.Errorf("scratch layers left behind: %v", runs)
	}
	// Alone again, a run writes the private layer.
	out, errOut, code = sandboxed(t, env, ws, `cat "$GOCACHE/from-first"; test ! -e "$GOCACHE/from-second" && echo c > "$GOCACHE/from-third" && stat -f -c %T "$GOCACHE"`)
	if code != 0 || out != "a\noverlayfs\n" {
		t.Errorf("a run alone after the overlap: exit %d %q %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(data, "go-build", "from-third")); err != nil {
		t.Errorf("a run alone after the overlap does not write the private layer: %v", err)
	}
}

// What the user's module cache holds builds sandboxed with GOPROXY=off and
// no network: the module cache is layered, extracted modules and all.
func TestCacheLayerGoModulesOffline(t *testing.T) {
	need(t, "go")
	home := toolHome(t)
	proxy := filepath.Join(toolHome(t), "example.org", "dep", "@v")
	writeGoModuleDownload(t, proxy)
	ws := goModule(t)
	writeFiles(t, ws, map[string]string{
		"go.mod":          "module example.com/app\n\ngo 1.21\n\nrequire example.org/dep v1.0.0\n",
		"cmd/sum/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.org/dep\"\n)\n\nfunc main() { fmt.Println(dep.Answer) }\n",
	})
	os.Remove(filepath.Join(ws, "sum_test.go"))
	os.Remove(filepath.Join(ws, "sum.go"))
	env := toolEnv(home, "GOSUMDB=off", "GOFLAGS=-mod=mod")
	plainGo(t, append(env, "GOPROXY=file://"+filepath.Dir(filepath.Dir(filepath.Dir(proxy)))), ws, "mod", "download", "example.org/dep")
	out, errOut, code := sandboxed(t, env, ws, "GOPROXY=off go run ./cmd/sum")
	if code != 0 || out != "42\n" {
		t.Fatalf("GOPROXY=off build from the user's module cache: exit %d\n%s\n%s", code, out, errOut)
	}
}

// Where the kernel refuses the overlay the private cache is used as it is:
// the run works, cold, and still writes only its own cache.
func TestCacheLayerFallbackWhenMountFails(t *testing.T) {
	need(t, "go")
	home, ws := toolHome(t), goModule(t)
	env := toolEnv(home)
	writeFiles(t, home, map[string]string{".cache/go-build/00/entry-d": "user object"})
	data := privateData(t, home, ws)
	// A work directory on another file system: overlay refuses the mount.
	elsewhere, err := os.MkdirTemp("/dev/shm", "warden-work-")
	if err != nil {
		t.Skip("no /dev/shm")
	}
	t.Cleanup(func() { os.RemoveAll(elsewhere) })
	if err := os.MkdirAll(filepath.Join(filepath.Dir(data), "layers-work"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(filepath.Dir(data), "layers-work", "go-build")); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := sandboxed(t, env, ws, `test ! -e "$GOCACHE/00/entry-d" && go build ./... && stat -f -c %T "$GOCACHE"`)
	if code != 0 || out == "overlayfs\n" || out == "" {
		t.Fatalf("fallback: the user's entry should be out of sight and no overlay mounted: exit %d\n%s\n%s", code, out, errOut)
	}
	if dirSize(filepath.Join(data, "go-build")) == 0 {
		t.Errorf("the fallback run wrote nothing into the private cache")
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".cache/go-build/00/entry-d")); string(b) != "user object" {
		t.Errorf("the user's cache changed: %q", b)
	}
}

// What the user's npm cache holds installs sandboxed with `npm ci
// --offline` in a new workspace, and the user's cache stays as it was.
func TestCacheLayerNpmOffline(t *testing.T) {
	need(t, "npm", "node")
	home, ws := toolHome(t), t.TempDir()
	env := toolEnv(home)
	tgz := packNpmDep(t, env)
	hostTool(t, env, filepath.Dir(tgz), "npm", "cache", "add", tgz)
	sum := sha512.Sum512(readFile(t, tgz))
	writeFiles(t, ws, map[string]string{
		"package.json": `{"name":"app","version":"1.0.0","dependencies":{"wdep":"1.0.0"}}`,
		"package-lock.json": `{"name":"app","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"app","version":"1.0.0","dependencies":{"wdep":"1.0.0"}},` +
			`"node_modules/wdep":{"version":"1.0.0","resolved":"https://registry.npmjs.org/wdep/-/wdep-1.0.0.tgz","integrity":"sha512-` + base64.StdEncoding.EncodeToString(sum[:]) + `"}}}`,
	})
	before := treeSums(t, filepath.Join(home, ".npm", "_cacache"))
	out, errOut, code := sandboxed(t, env, ws, `npm ci --offline --no-audit --no-fund >/dev/null && node -e 'console.log(require("wdep"))'`)
	if code != 0 || out != "42\n" {
		t.Fatalf("npm ci --offline from the user's npm cache: exit %d\n%s\n%s", code, out, errOut)
	}
	userCacheUnchanged(t, filepath.Join(home, ".npm", "_cacache"), before)
}

// packNpmDep packs the npm package wdep 1.0.0 (index.js exports 42) and
// returns its tarball's path.
func packNpmDep(t *testing.T, env []string) string {
	t.Helper()
	dep := t.TempDir()
	writeFiles(t, dep, map[string]string{
		"package.json": `{"name":"wdep","version":"1.0.0","main":"index.js"}`,
		"index.js":     "module.exports = 42\n",
	})
	hostTool(t, env, dep, "npm", "pack", "--silent")
	return filepath.Join(dep, "wdep-1.0.0.tgz")
}

// hostTool runs a tool unsandboxed, as the user whose environment is env.
func hostTool(t *testing.T, env []string, dir, tool string, args ...string) string {
	t.Helper()
	cmd := exec.Command(tool, args...)
	cmd.Dir, cmd.Env = dir, append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", tool, args, err, out)
	}
	return string(out)
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each toolchain's cache shows the user's entries, takes writes into the
// private layer only, and never shows a tool home's credentials.
func TestCacheLayerEachTool(t *testing.T) {
	need(t, "go")
	home, ws := toolHome(t), goModule(t)
	files := map[string]string{
		".npm/_cacache/index-v5/x":         "user npm",
		".cache/yarn/v6/x":                 "user yarn",
		".local/share/pnpm/store/v11/x":    "user pnpm store",
		".cache/pnpm/v12/x":                "user pnpm metadata",
		".cache/pip/http/x":                "user pip",
		".cache/uv/x":                      "user uv",
		".cargo/registry/index/x":          "user cargo registry",
		".cargo/git/db/x":                  "user cargo git",
		".cargo/credentials.toml":          "token = \"secret\"\n",
		".gradle/caches/modules-2/x":       "user gradle",
		".gradle/gradle.properties":        "token=secret\n",
		".cache/go-build/00/x-d":           "user go-build",
		"go/pkg/mod/cache/download/x/@v/x": "user go-mod",
	}
	writeFiles(t, home, files)
	// As root, yarn's cache is under /usr/local/share unless XDG_CACHE_HOME is set.
	env := toolEnv(home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	private := map[string]string{
		`$npm_config_cache/_cacache/index-v5/x`: "user npm",
		`$YARN_CACHE_FOLDER/v6/x`:               "user yarn",
		`$npm_config_store_dir/v11/x`:           "user pnpm store",
		`$XDG_CACHE_HOME/pnpm/v12/x`:            "user pnpm metadata",
		`$PIP_CACHE_DIR/http/x`:                 "user pip",
		`$UV_CACHE_DIR/x`:                       "user uv",
		`$CARGO_HOME/registry/index/x`:          "user cargo registry",
		`$CARGO_HOME/git/db/x`:                  "user cargo git",
		`$GRADLE_USER_HOME/caches/modules-2/x`:  "user gradle",
		`$GOCACHE/00/x-d`:                       "user go-build",
		`$GOMODCACHE/cache/download/x/@v/x`:     "user go-mod",
	}
	for p, want := range private {
		out, errOut, code := sandboxed(t, env, ws, `cat "`+p+`" && echo && echo mine > "`+p+`" && cat "`+p+`"`)
		if code != 0 || out != want+"\nmine\n" {
			t.Errorf("%s: the user's entry under the private layer, then the workspace's: exit %d %q %s", p, code, out, errOut)
		}
	}
	out, _, code := sandboxed(t, env, ws, `cat "$CARGO_HOME/credentials.toml" "$GRADLE_USER_HOME/gradle.properties" 2>/dev/null; echo done`)
	if code != 0 || out != "done\n" {
		t.Errorf("a tool home's credentials showed through: exit %d %q", code, out)
	}
	checkUnchanged(t, home, files)
}

// ATTACK: a run replaces a private cache directory that is not layered yet
// with a link to a directory of the user's; once the user's own cache
// exists, the next run must not mount the overlay's upper through that
// link (the overlay writes its upper with Warden's rights, past the
// sandbox's read-only mounts and Landlock rules).
func TestCacheLayerUpperLinkRefused(t *testing.T) {
	need(t, "go")
	home, ws := toolHome(t), goModule(t)
	env := toolEnv(home)
	victim := filepath.Join(home, "victim")
	writeFiles(t, home, map[string]string{"victim/keep": "user file"})
	// --yes: the sandbox is under test, not the dialog (a script hides it).
	approved := func(script string) (string, string, int) {
		return wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--yes", "--cwd", ws, "--", "sh", "-c", script)
	}
	out, errOut, code := approved(`rmdir "$PIP_CACHE_DIR" 2>/dev/null; ln -s "$HOME/victim" "$PIP_CACHE_DIR" && echo linked`)
	if code != 0 || out != "linked\n" {
		t.Fatalf("plant the link: exit %d %q %s", code, out, errOut)
	}
	writeFiles(t, home, map[string]string{".cache/pip/http/x": "user pip"})
	approved(`echo pwned > "$PIP_CACHE_DIR/pwned"; mkdir "$PIP_CACHE_DIR/dir"`)
	if out, _, _ := approved(`grep -c "$HOME/victim" /proc/self/mounts`); out != "0\n" {
		t.Errorf("an overlay was mounted through the planted link: %q", out)
	}
	if ents, _ := os.ReadDir(victim); len(ents) != 1 {
		t.Errorf("a sandboxed run wrote through the planted link into %s: %v", victim, ents)
	}
	// Twin: the other caches are layered still.
	writeFiles(t, home, map[string]string{".cache/go-build/00/x-d": "user go-build"})
	if out, errOut, code := sandboxed(t, env, ws, `cat "$GOCACHE/00/x-d"`); code != 0 || out != "user go-build" {
		t.Errorf("twin: the Go cache layered beside the refused one: exit %d %q %s", code, out, errOut)
	}
}

// A run longer than a minute keeps its cache set: another workspace's run
// that ends meanwhile, over the cap, evicts around it (the run holds its
// set's lock), and the set goes once no run holds it.
func TestCacheLayerEvictionSparesRunningSet(t *testing.T) {
	home, ws, other := toolHome(t), goModule(t), goModule(t)
	env := toolEnv(home)
	writeFiles(t, home, map[string]string{".config/warden/config.toml": "cache_max_size = \"1MB\"\n"})
	data := privateData(t, home, ws)
	long := exec.Command(wardenBin(t), "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "sh", "-c",
		`mkdir -p "$GOCACHE" && head -c 2000000 /dev/zero > "$GOCACHE/big.tmp" && mv "$GOCACHE/big.tmp" "$GOCACHE/big" && while [ ! -e done ]; do sleep 0.1; done; wc -c < "$GOCACHE/big"`)
	long.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	longOut := &strings.Builder{}
	long.Stdout, long.Stderr = longOut, longOut
	if err := long.Start(); err != nil {
		t.Fatal(err)
	}
	defer long.Process.Kill()
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(data, "go-build", "big")); err == nil {
			break
		}
		if i == 200 {
			t.Fatalf("the long run never wrote its cache: %s", longOut)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// As if it had started two hours ago.
	aged := time.Now().Add(-2 * time.Hour)
	os.Chtimes(filepath.Join(filepath.Dir(data), "last-used"), aged, aged)

	if out, errOut, code := sandboxed(t, env, other, "echo other"); code != 0 || out != "other\n" {
		t.Fatalf("the other workspace's run: exit %d %q %s", code, out, errOut)
	}
	writeFiles(t, ws, map[string]string{"done": ""})
	if err := long.Wait(); err != nil || !strings.HasPrefix(longOut.String(), "2000000\n") {
		t.Fatalf("the long run lost its cache to eviction: %v %q", err, longOut)
	}
	if _, err := os.Stat(filepath.Join(data, "go-build", "big")); err != nil {
		t.Errorf("the long run's set was evicted while it ran: %v", err)
	}
	// Twin: idle, the set goes on the next pass over the cap.
	os.Chtimes(filepath.Join(filepath.Dir(data), "last-used"), aged, aged)
	os.Chtimes(filepath.Join(home, ".cache", "warden", "toolchains", ".evicted"), aged, aged)
	if _, _, code := sandboxed(t, env, other, "true"); code != 0 {
		t.Fatalf("the other workspace's second run: exit %d", code)
	}
	if _, err := os.Stat(filepath.Dir(data)); err == nil {
		t.Errorf("the idle set over the cap survived eviction")
	}
}

// warden cache clean keeps a set a running command holds, says so, and
// removes the others; once the run ends, clean removes it too.
func TestCacheCleanKeepsRunningSet(t *testing.T) {
	home, ws, other := toolHome(t), goModule(t), goModule(t)
	env := toolEnv(home)
	if _, errOut, code := sandboxed(t, env, other, "true"); code != 0 {
		t.Fatalf("the other workspace's run: %s", errOut)
	}
	data := privateData(t, home, ws)
	set, otherSet := filepath.Dir(data), filepath.Dir(privateData(t, home, other))
	long := exec.Command(wardenBin(t), "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "sh", "-c",
		`mkdir -p "$GOCACHE" && echo kept > "$GOCACHE/mark" && touch started && while [ ! -e done ]; do sleep 0.1; done; cat "$GOCACHE/mark"`)
	long.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	longOut := &strings.Builder{}
	long.Stdout, long.Stderr = longOut, longOut
	if err := long.Start(); err != nil {
		t.Fatal(err)
	}
	defer long.Process.Kill()
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
			break
		}
		if i == 200 {
			t.Fatalf("the long run never started: %s", longOut)
		}
		time.Sleep(50 * time.Millisecond)
	}

	base := filepath.Base(set)
	out, errOut, code := wardenIn(t, env, "cache", "clean", "--workspace", ws)
	if code != 0 || !strings.Contains(out, "kept "+base+": a running sandboxed command uses it") {
		t.Errorf("cache clean --workspace beside a run: exit %d %q %s", code, out, errOut)
	}
	out, errOut, code = wardenIn(t, env, "cache", "clean")
	if code != 0 || !strings.Contains(out, "kept "+base) || !strings.Contains(out, "removed "+filepath.Base(otherSet)) {
		t.Errorf("cache clean beside a run: exit %d %q %s", code, out, errOut)
	}
	if _, err := os.Stat(otherSet); err == nil {
		t.Errorf("cache clean left the idle set %s", otherSet)
	}
	writeFiles(t, ws, map[string]string{"done": ""})
	if err := long.Wait(); err != nil || !strings.HasPrefix(longOut.String(), "kept\n") {
		t.Fatalf("the run lost its cache to cache clean: %v %q", err, longOut)
	}

	// Twin: the run over, clean removes its set.
	if out, errOut, code := wardenIn(t, env, "cache", "clean"); code != 0 || !strings.Contains(out, "removed "+base) {
		t.Errorf("cache clean after the run: exit %d %q %s", code, out, errOut)
	}
	if _, err := os.Stat(set); err == nil {
		t.Errorf("cache clean after the run left %s", set)
	}
}
