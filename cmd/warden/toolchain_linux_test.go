package main

import (
	"archive/zip"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/testhome"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

// Everyday toolchains run inside the sandbox with the defaults
// (workspace-write, network off), HOME a fresh directory outside the
// writable roots, unasked (--deny: any prompt would fail the run).

// toolHome is a fresh HOME outside the writable roots (/var/tmp is none of
// them; t.TempDir is under /tmp, which is), removed at the end even where
// Go's module cache made directories read-only.
func toolHome(t testing.TB) string {
	t.Helper()
	home, err := os.MkdirTemp("/var/tmp", "warden-home-")
	if err != nil {
		home = t.TempDir()
	}
	t.Cleanup(func() {
		filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o700)
			}
			return nil
		})
		os.RemoveAll(home)
	})
	return home
}

// toolEnv is the environment of a user whose HOME is home (and no XDG or Go
// cache variables). A rustup proxy still finds its toolchains in the real
// user's ~/.rustup.
func toolEnv(home string, extra ...string) []string {
	env := append(testhome.HomeOnly(home), "GOTOOLCHAIN=local", "GOFLAGS=", "LANG=C")
	if real, err := os.UserHomeDir(); err == nil {
		if _, err := os.Stat(filepath.Join(real, ".rustup")); err == nil && os.Getenv("RUSTUP_HOME") == "" {
			env = append(env, "RUSTUP_HOME="+filepath.Join(real, ".rustup"))
		}
	}
	if r := os.Getenv("RUSTUP_HOME"); r != "" {
		env = append(env, "RUSTUP_HOME="+r)
	}
	return append(env, extra...)
}

// sandboxed runs script in ws through `warden exec` with the defaults.
func sandboxed(t *testing.T, env []string, ws, script string) (string, string, int) {
	t.Helper()
	return wardenIn(t, env, "exec", "--sandbox", "workspace-write", "--deny", "--cwd", ws, "--", "sh", "-c", script)
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func goModule(t testing.TB) string {
	// Outside /tmp: while other tests' sandboxes run, /tmp holds the mask of
	// a missing /tmp/.git, and a host `go build` below /tmp would stamp VCS
	// information from it (issue 12's "no trace" work removes such masks).
	ws, err := os.MkdirTemp("/var/tmp", "warden-mod-")
	if err != nil {
		ws = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(ws) })
	}
	writeFiles(t, ws, map[string]string{
		"go.mod":          "module example.com/sum\n\ngo 1.21\n",
		"sum.go":          "package sum\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
		"sum_test.go":     "package sum\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
		"cmd/sum/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/sum\"\n)\n\nfunc main() { fmt.Println(sum.Add(2, 3)) }\n",
	})
	return ws
}

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed here: skipped", tool)
		}
	}
}

func TestToolchainGoBuildVetTest(t *testing.T) {
	need(t, "go")
	home, ws := toolHome(t), goModule(t)
	env := toolEnv(home)
	out, errOut, code := sandboxed(t, env, ws, "go build ./... && go vet ./... && go run ./cmd/sum && go test ./...")
	if code != 0 || !strings.Contains(out, "5\n") || !strings.Contains(out, "ok  \texample.com/sum") {
		t.Fatalf("go build, vet, run, test in the sandbox: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = sandboxed(t, env, ws, "go test ./...")
	if code != 0 || !strings.Contains(out, "(cached)") {
		t.Fatalf("second go test should hit the private cache: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, ".cache", "go-build")); err == nil {
		t.Errorf("the sandboxed build wrote the user's ~/.cache/go-build")
	}
}

// A module the user already downloaded builds offline: the user's module
// download cache is GOPROXY's first entry, read-only.
func TestToolchainGoUsesUserModuleCacheOffline(t *testing.T) {
	need(t, "go")
	home := toolHome(t)
	dl := filepath.Join(home, "go", "pkg", "mod", "cache", "download", "example.org", "dep", "@v")
	writeGoModuleDownload(t, dl)
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"go.mod":  "module example.com/app\n\ngo 1.21\n\nrequire example.org/dep v1.0.0\n",
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.org/dep\"\n)\n\nfunc main() { fmt.Println(dep.Answer) }\n",
	})
	out, errOut, code := sandboxed(t, toolEnv(home, "GOSUMDB=off", "GOFLAGS=-mod=mod"), ws, "go run .")
	if code != 0 || out != "42\n" {
		t.Fatalf("offline build from the user's module cache: exit %d\n%s\n%s", code, out, errOut)
	}
	// Twin: with no such module anywhere, the same build fails (network off).
	os.RemoveAll(filepath.Join(home, "go"))
	if _, _, code := sandboxed(t, toolEnv(home, "GOSUMDB=off", "GOFLAGS=-mod=mod"), t.TempDir(), "cp -r "+ws+"/. . && rm -f go.sum && go run ."); code == 0 {
		t.Errorf("a module in no cache built offline: the test proves nothing")
	}
}

func TestToolchainMakeCC(t *testing.T) {
	need(t, "make", "cc")
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"hello.c":  "#include <stdio.h>\nint main(void){puts(\"hi from c\");return 0;}\n",
		"Makefile": "hello: hello.c\n\tcc -o hello hello.c\n",
	})
	out, errOut, code := sandboxed(t, toolEnv(toolHome(t)), ws, "make && ./hello")
	if code != 0 || !strings.Contains(out, "hi from c") {
		t.Fatalf("make+cc: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestToolchainNpmScript(t *testing.T) {
	need(t, "npm", "node")
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json": `{"name":"x","version":"1.0.0","scripts":{"test":"node t.js"}}`,
		"t.js":         "console.log('npm script ran')\n",
	})
	out, errOut, code := sandboxed(t, toolEnv(toolHome(t)), ws, "npm test && npm run test")
	if code != 0 || strings.Count(out, "npm script ran") != 2 {
		t.Fatalf("npm scripts: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestToolchainPythonVenvUnittest(t *testing.T) {
	need(t, "python3")
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"test_x.py": "import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertEqual(1 + 1, 2)\n\nif __name__ == '__main__':\n    unittest.main()\n",
	})
	out, errOut, code := sandboxed(t, toolEnv(toolHome(t)), ws, "python3 -m venv --without-pip .venv && .venv/bin/python -m unittest -v test_x")
	if code != 0 || !strings.Contains(out+errOut, "OK") {
		t.Fatalf("python venv + unittest: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestToolchainCargo(t *testing.T) {
	need(t, "cargo")
	home := toolHome(t)
	env := toolEnv(home)
	if _, _, code := wardenIn(t, env, "exec", "--sandbox", "danger-full-access", "--yes", "--", "cargo", "--version"); code != 0 {
		t.Skip("cargo does not run with this HOME (no toolchain reachable): skipped")
	}
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"Cargo.toml":  "[package]\nname = \"x\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/lib.rs":  "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod t {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 3), 5); }\n}\n",
		"src/main.rs": "fn main() { println!(\"{}\", x::add(2, 3)); }\n",
	})
	out, errOut, code := sandboxed(t, env, ws, "cargo build --offline -q && cargo test --offline -q && cargo run --offline -q")
	if code != 0 || !strings.Contains(out, "5") {
		t.Fatalf("cargo build/test: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestToolchainJavac(t *testing.T) {
	need(t, "javac", "java")
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"Hi.java": "class Hi { public static void main(String[] a) { System.out.println(\"hi from java\"); } }\n"})
	out, errOut, code := sandboxed(t, toolEnv(toolHome(t)), ws, "javac Hi.java && java -cp . Hi")
	if code != 0 || !strings.Contains(out, "hi from java") {
		t.Fatalf("javac: exit %d\n%s\n%s", code, out, errOut)
	}
}

// userCachesFixture gives home the user's own caches, each with a file.
func userCachesFixture(t *testing.T, home string) map[string]string {
	t.Helper()
	files := map[string]string{
		".cache/go-build/00/entry-d":                        "user object",
		"go/pkg/mod/cache/download/example.org/dep/@v/list": "v1.0.0\n",
		".npm/_cacache/index":                               "user index",
		".cargo/config.toml":                                "[build]\njobs = 1\n",
		".cargo/registry/index/x":                           "user registry",
		".cache/pip/http/x":                                 "user pip",
	}
	writeFiles(t, home, files)
	return files
}

func checkUnchanged(t *testing.T, home string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if b, err := os.ReadFile(filepath.Join(home, name)); err != nil || string(b) != body {
			t.Errorf("the user's %s changed: %q %v", name, b, err)
		}
	}
}

var cacheAttacks = []string{
	`echo poison > ~/.cache/go-build/00/entry-d`,
	`mkdir -p ~/.cache/go-build/ff && echo poison > ~/.cache/go-build/ff/new-d`,
	`echo poison > ~/go/pkg/mod/cache/download/example.org/dep/@v/list`,
	`echo poison > ~/.npm/_cacache/index`,
	`echo '[build]' > ~/.cargo/config.toml`,
	`mkdir -p ~/.cargo/bin && printf '#!/bin/sh\nid\n' > ~/.cargo/bin/cargo`,
	`echo poison > ~/.cargo/registry/index/x`,
	`echo poison > ~/.cache/pip/http/x`,
	`GOCACHE=$HOME/.cache/go-build go build ./...`,
}

// The user's own caches stay read-only; the private ones are writable.
func TestCacheUserCachesReadOnly(t *testing.T) {
	need(t, "go")
	home, ws := toolHome(t), goModule(t)
	files := userCachesFixture(t, home)
	env := toolEnv(home)
	for _, attack := range cacheAttacks {
		_, errOut, code := sandboxed(t, env, ws, attack)
		if code == 0 {
			t.Errorf("attack %q: exit 0 %s", attack, errOut)
		}
	}
	checkUnchanged(t, home, files)
	// Twin: the sandbox's own caches take the same writes.
	out, errOut, code := sandboxed(t, env, ws, `mkdir -p "$GOCACHE" "$npm_config_cache" && echo ok > "$GOCACHE/x" && echo ok > "$npm_config_cache/x" && mkdir -p "$CARGO_HOME/registry" && cat "$CARGO_HOME/config.toml" && go build ./...`)
	if code != 0 || !strings.Contains(out, "jobs = 1") {
		t.Fatalf("twin: writing the private caches (and reading the user's cargo config through them): exit %d\n%s\n%s", code, out, errOut)
	}
	// ... but the user's cargo config, linked in, is not writable through the link.
	if _, _, code := sandboxed(t, env, ws, `echo '[x]' >> "$CARGO_HOME/config.toml"`); code == 0 {
		t.Errorf("the user's ~/.cargo/config.toml was written through the private CARGO_HOME")
	}
	checkUnchanged(t, home, files)
}

// With the workspace at $HOME the caches are inside it, and still read-only.
func TestCacheUserCachesReadOnlyInHomeWorkspace(t *testing.T) {
	need(t, "go")
	home := toolHome(t)
	files := userCachesFixture(t, home)
	writeFiles(t, home, map[string]string{"go.mod": "module example.com/h\n\ngo 1.21\n", "h.go": "package h\n"})
	env := toolEnv(home)
	for _, attack := range cacheAttacks {
		if _, errOut, code := sandboxed(t, env, home, attack); code == 0 {
			t.Errorf("attack %q (HOME workspace): exit 0 %s", attack, errOut)
		}
	}
	checkUnchanged(t, home, files)
	// (./... would walk into the masks of missing startup directories.)
	out, errOut, code := sandboxed(t, env, home, `echo notes > notes.txt && go build . && go env GOCACHE`)
	if code != 0 || !strings.Contains(out, filepath.Join(".cache", "warden", "toolchains")) {
		t.Fatalf("twin (HOME workspace): exit %d\n%s\n%s", code, out, errOut)
	}
}

// What the sandbox put in its private Go cache never reaches the user's
// unsandboxed builds: they use their own GOCACHE, and so does an escalated run.
func TestCacheSandboxObjectsNotUsedByUser(t *testing.T) {
	need(t, "go")
	home, ws := toolHome(t), goModule(t)
	env := toolEnv(home)
	out, errOut, code := sandboxed(t, env, ws, `go build ./... && go env GOCACHE GOMODCACHE GOPROXY`)
	if code != 0 {
		t.Fatalf("sandboxed build: exit %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	private := lines[0]
	if !strings.Contains(private, filepath.Join(".cache", "warden", "toolchains")) || !strings.Contains(lines[1], filepath.Join(".cache", "warden", "toolchains")) {
		t.Fatalf("sandboxed GOCACHE/GOMODCACHE not private: %q", lines)
	}
	if ents, _ := os.ReadDir(private); len(ents) < 3 {
		t.Fatalf("the private cache holds nothing: %v", ents)
	}
	userCache := filepath.Join(home, ".cache", "go-build")
	// The user's own build, outside Warden, and an escalated run.
	user := exec.Command("go", "build", "-x", "./...")
	user.Dir, user.Env = ws, append(os.Environ(), env...)
	userOut, err := user.CombinedOutput()
	if err != nil {
		t.Fatalf("the user's go build: %v\n%s", err, userOut)
	}
	if strings.Contains(string(userOut), private) {
		t.Errorf("the user's build read the sandbox's cache %s", private)
	}
	if ents, _ := os.ReadDir(userCache); len(ents) < 3 {
		t.Errorf("the user's build did not use its own cache %s: %v", userCache, ents)
	}
	out, errOut, code = wardenIn(t, env, "exec", "--sandbox", "danger-full-access", "--yes", "--cwd", ws, "--", "go", "env", "GOCACHE")
	if code != 0 || strings.TrimSpace(out) != userCache {
		t.Errorf("an unsandboxed run got GOCACHE %q (want the user's %s): exit %d %s", out, userCache, code, errOut)
	}
}

// A cache variable the user set is kept only inside a writable root.
func TestCacheUserVariables(t *testing.T) {
	need(t, "go")
	home, ws := toolHome(t), goModule(t)
	inside := filepath.Join(ws, "build-cache")
	out, errOut, code := sandboxed(t, toolEnv(home, "GOCACHE="+inside, "npm_config_cache="+filepath.Join(home, ".npm")), ws, `go build ./... && go env GOCACHE && echo "$npm_config_cache"`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || lines[0] != inside || !strings.Contains(lines[1], filepath.Join("warden", "toolchains")) {
		t.Fatalf("GOCACHE inside the workspace kept, npm cache outside replaced: exit %d %q %s", code, lines, errOut)
	}
	if _, err := os.Stat(inside); err != nil {
		t.Errorf("the user's GOCACHE inside the workspace was not used: %v", err)
	}
}

func TestCacheDoctorAndClean(t *testing.T) {
	need(t, "go")
	home, ws := toolHome(t), goModule(t)
	env := toolEnv(home)
	writeFiles(t, home, map[string]string{".cache/go-build/00/x-d": strings.Repeat("x", 2048)})
	if _, errOut, code := sandboxed(t, env, ws, "go build ./..."); code != 0 {
		t.Fatalf("build: %s", errOut)
	}
	out, _, code := wardenIn(t, env, "doctor")
	real, _ := filepath.EvalSymlinks(ws)
	if code != 0 || !strings.Contains(out, "toolchain caches") || !strings.Contains(out, real) || !strings.Contains(out, "MiB") && !strings.Contains(out, "KiB") {
		t.Errorf("doctor does not list the workspace's caches with a size:\n%s", out)
	}
	// Layered: the user's caches are the read-only layer, each with a size.
	userLayer := "go-build  " + filepath.Join(home, ".cache", "go-build") + "  2.0 KiB"
	if !strings.Contains(out, "private layer over the user's caches") || !strings.Contains(out, userLayer) || !strings.Contains(out, "cargo registry and git sources") {
		t.Errorf("doctor does not show the layers and their sizes (%q):\n%s", userLayer, out)
	}
	set := toolcache.SetDir(filepath.Join(home, ".cache", "warden", "toolchains"), real)
	if _, err := os.Stat(set); err != nil {
		t.Fatalf("no cache set at %s", set)
	}
	for _, bad := range [][]string{{"cache"}, {"cache", "purge"}, {"cache", "clean", "--nope"}, {"cache", "clean", "extra"}} {
		if _, _, code := wardenIn(t, env, bad...); code != 2 {
			t.Errorf("warden %v: exit %d, want 2", bad, code)
		}
	}
	if out, _, code := wardenIn(t, env, "cache", "clean", "--help"); code != 0 || !strings.Contains(out, "--workspace") && !strings.Contains(out, "-workspace") {
		t.Errorf("cache clean --help: exit %d %s", code, out)
	}
	other := goModule(t)
	if _, errOut, code := sandboxed(t, env, other, "go build ./..."); code != 0 {
		t.Fatalf("build: %s", errOut)
	}
	if out, errOut, code := wardenIn(t, env, "cache", "clean", "--workspace", ws); code != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("cache clean --workspace: exit %d %s %s", code, out, errOut)
	}
	if _, err := os.Stat(set); err == nil {
		t.Errorf("cache clean --workspace left %s", set)
	}
	otherReal, _ := filepath.EvalSymlinks(other)
	otherSet := toolcache.SetDir(filepath.Join(home, ".cache", "warden", "toolchains"), otherReal)
	if _, err := os.Stat(otherSet); err != nil {
		t.Errorf("cache clean --workspace removed another workspace's caches")
	}
	if _, _, code := wardenIn(t, env, "cache", "clean"); code != 0 {
		t.Errorf("cache clean: exit %d", code)
	}
	if _, err := os.Stat(otherSet); err == nil {
		t.Errorf("cache clean left %s", otherSet)
	}
}

// writeGoModuleDownload writes module example.org/dep v1.0.0 (its
// package dep has const Answer = 42) into dir, laid out as GOPROXY and the
// module download cache lay out example.org/dep/@v.
func writeGoModuleDownload(t *testing.T, dir string) {
	t.Helper()
	writeFiles(t, dir, map[string]string{
		"list":        "v1.0.0\n",
		"v1.0.0.info": `{"Version":"v1.0.0","Time":"2024-01-01T00:00:00Z"}`,
		"v1.0.0.mod":  "module example.org/dep\n",
	})
	zf, err := os.Create(filepath.Join(dir, "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	for name, body := range map[string]string{"go.mod": "module example.org/dep\n", "dep.go": "package dep\n\nconst Answer = 42\n"} {
		w, _ := zw.Create("example.org/dep@v1.0.0/" + name)
		w.Write([]byte(body))
	}
	zw.Close()
	zf.Close()
}
