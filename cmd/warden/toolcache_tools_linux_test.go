package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// More toolchains whose caches are layered (sandbox/toolcache): what the
// user's own cache holds installs sandboxed, offline, in a new workspace.

// pnpmDir is the directory of a pnpm to test with: pnpm on PATH, else the
// one .ci/setup.sh go installs (make gotest names it in WARDEN_PNPM).
func pnpmDir(t *testing.T) string {
	t.Helper()
	need(t, "node")
	if p, err := exec.LookPath("pnpm"); err == nil {
		return filepath.Dir(p)
	}
	if p := os.Getenv("WARDEN_PNPM"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return filepath.Dir(p)
		}
	}
	t.Skip("pnpm is not installed here: skipped (.ci/setup.sh go installs it, and make gotest passes it as WARDEN_PNPM)")
	return ""
}

// npmRegistry serves one package, its tarball at tgz, as an npm registry
// does, on 127.0.0.1.
func npmRegistry(t *testing.T, name, version, tgz string) *httptest.Server {
	t.Helper()
	body := readFile(t, tgz)
	sha := sha1.Sum(body)
	sum := sha512.Sum512(body)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	tarball := "/" + name + "/-/" + filepath.Base(tgz)
	mux.HandleFunc("/"+name, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"name":      name,
			"dist-tags": map[string]string{"latest": version},
			"versions": map[string]any{version: map[string]any{
				"name": name, "version": version, "main": "index.js",
				"dist": map[string]string{
					"tarball":   srv.URL + tarball,
					"shasum":    hex.EncodeToString(sha[:]),
					"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum[:]),
				},
			}},
		})
	})
	mux.HandleFunc(tarball, func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	return srv
}

// What the user's pnpm store holds installs sandboxed with `pnpm install
// --offline` in a new workspace, network off; the store is layered, so
// the user's store stays as it was. Across the overlay pnpm cannot hard
// link (EXDEV: the store and node_modules are different mounts in the
// sandbox, layered or not), so it copies each file, as npm extracts.
func TestCacheLayerPnpmOffline(t *testing.T) {
	bin := pnpmDir(t)
	// pnpm takes an empty XDG_DATA_HOME or XDG_CACHE_HOME for a relative one.
	userEnv := func(home string) []string {
		return toolEnv(home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	}
	home, project, ws := toolHome(t), t.TempDir(), t.TempDir()
	env := userEnv(home)
	registry := npmRegistry(t, "wdep", "1.0.0", packNpmDep(t, env))
	manifest := map[string]string{
		"package.json": `{"name":"app","version":"1.0.0","dependencies":{"wdep":"1.0.0"}}`,
		".npmrc":       "registry=" + registry.URL + "/\n",
	}
	writeFiles(t, project, manifest)
	hostTool(t, env, project, filepath.Join(bin, "pnpm"), "install", "--reporter=silent")
	manifest["pnpm-lock.yaml"] = string(readFile(t, filepath.Join(project, "pnpm-lock.yaml")))
	writeFiles(t, ws, manifest)
	registry.Close()

	store, meta := filepath.Join(home, ".local", "share", "pnpm", "store"), filepath.Join(home, ".cache", "pnpm")
	before, beforeMeta := treeSums(t, store), treeSums(t, meta)
	out, errOut, code := sandboxed(t, env, ws, `pnpm install --offline --frozen-lockfile --reporter=silent && node -e 'console.log(require("wdep"))' && stat -c %h node_modules/wdep/index.js`)
	if code != 0 || !strings.HasPrefix(out, "42\n") {
		t.Fatalf("pnpm install --offline from the user's store: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Logf("links of an installed file: %s", strings.TrimPrefix(out, "42\n"))
	userCacheUnchanged(t, store, before)
	userCacheUnchanged(t, meta, beforeMeta)
	// Control: a user without that store has nothing to install offline.
	os.RemoveAll(filepath.Join(ws, "node_modules"))
	fresh := toolHome(t)
	if out, errOut, code := sandboxed(t, userEnv(fresh), ws, `pnpm install --offline --frozen-lockfile --reporter=silent`); code == 0 {
		t.Errorf("pnpm install --offline with an empty store succeeded: is the store really layered? %s %s", out, errOut)
	}
}

// yarnDir is the directory of a yarn classic (1.x) to test with: yarn on
// PATH, else the one .ci/setup.sh go installs (make gotest names it in
// WARDEN_YARN).
func yarnDir(t *testing.T) string {
	t.Helper()
	need(t, "node")
	candidates := []string{os.Getenv("WARDEN_YARN")}
	if p, err := exec.LookPath("yarn"); err == nil {
		candidates = append([]string{p}, candidates...)
	}
	for _, p := range candidates {
		if p == "" {
			continue
		}
		if out, err := exec.Command(p, "--version").Output(); err == nil && strings.HasPrefix(string(out), "1.") {
			return filepath.Dir(p)
		}
	}
	t.Skip("yarn classic (1.x) is not installed here: skipped (.ci/setup.sh go installs it, and make gotest passes it as WARDEN_YARN)")
	return ""
}

// What the user's yarn cache holds installs sandboxed with `yarn install
// --offline` in a new workspace, network off; the cache is layered, so the
// user's cache stays as it was.
func TestCacheLayerYarnOffline(t *testing.T) {
	bin := yarnDir(t)
	// As root, yarn puts its cache under /usr/local/share unless
	// XDG_CACHE_HOME is set.
	userEnv := func(home string) []string {
		return toolEnv(home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
	}
	home, project, ws := toolHome(t), t.TempDir(), t.TempDir()
	env := userEnv(home)
	registry := npmRegistry(t, "wdep", "1.0.0", packNpmDep(t, env))
	manifest := map[string]string{
		"package.json": `{"name":"app","version":"1.0.0","dependencies":{"wdep":"1.0.0"}}`,
		".yarnrc":      "registry \"" + registry.URL + "/\"\n",
	}
	writeFiles(t, project, manifest)
	hostTool(t, env, project, filepath.Join(bin, "yarn"), "install", "--silent", "--non-interactive")
	manifest["yarn.lock"] = readFileString(t, filepath.Join(project, "yarn.lock"))
	writeFiles(t, ws, manifest)
	registry.Close()

	cache := filepath.Join(home, ".cache", "yarn")
	before := treeSums(t, cache)
	if len(before) == 0 {
		t.Fatalf("the unsandboxed install left nothing in the user's yarn cache %s", cache)
	}
	out, errOut, code := sandboxed(t, env, ws, `yarn install --offline --frozen-lockfile --silent --non-interactive && node -e 'console.log(require("wdep"))'`)
	if code != 0 || !strings.HasPrefix(out, "42\n") {
		t.Fatalf("yarn install --offline from the user's cache: exit %d\n%s\n%s", code, out, errOut)
	}
	userCacheUnchanged(t, cache, before)
	// Control: a user without that cache has nothing to install offline.
	os.RemoveAll(filepath.Join(ws, "node_modules"))
	if out, errOut, code := sandboxed(t, userEnv(toolHome(t)), ws, `yarn install --offline --frozen-lockfile --silent --non-interactive`); code == 0 {
		t.Errorf("yarn install --offline with an empty cache succeeded: is the cache really layered? %s %s", out, errOut)
	}
}

// pipPython is the Python interpreter itself, not a shim (pyenv's fails
// a pip install where it cannot rehash), with pip.
func pipPython(t *testing.T) string {
	t.Helper()
	need(t, "python3")
	out, err := exec.Command("python3", "-c", "import sys, pip; print(sys.executable)").CombinedOutput()
	if err != nil {
		t.Skipf("pip is not installed here (python3 -c 'import pip': %v %s): skipped", err, out)
	}
	return strings.TrimSpace(string(out))
}

// pipEnv is the environment of a user whose pip reads no configuration
// file (the machine's may point pip at other indexes) and trusts the
// test's server: pip caches no plain-HTTP download from an untrusted host.
func pipEnv(home, host string) []string {
	return toolEnv(home, "PIP_CONFIG_FILE="+os.DevNull, "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", "PIP_TRUSTED_HOST="+host)
}

// wheelFile is the wheel of wpdep 1.0, a pure-Python package whose ANSWER
// is 42.
func wheelFile(t *testing.T) []byte {
	t.Helper()
	files := []struct{ name, body string }{
		{"wpdep/__init__.py", "ANSWER = 42\n"},
		{"wpdep-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: wpdep\nVersion: 1.0\n"},
		{"wpdep-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: warden-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, _ := z.Create(f.name)
		w.Write([]byte(f.body))
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString("wpdep-1.0.dist-info/RECORD,,\n")
	w, _ := z.Create("wpdep-1.0.dist-info/RECORD")
	w.Write([]byte(record.String()))
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pip has an offline path from its cache for a requirement pinned by URL:
// its HTTP cache answers a fresh download without asking the server. The
// user's pip cache is layered, so a wheel the user installed by URL
// installs sandboxed in a new workspace with the server gone, and what
// pip writes stays private. (A requirement by name does not: pip always
// asks the index again for its page.)
func TestCacheLayerPipOfflineByURL(t *testing.T) {
	python := pipPython(t)
	wheel := wheelFile(t)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	const file = "/wpdep-1.0-py3-none-any.whl"
	mux.HandleFunc(file, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=31536000, public")
		w.Write(wheel)
	})
	host := strings.TrimPrefix(srv.URL, "http://")
	home, ws := toolHome(t), t.TempDir()
	env := pipEnv(home, host)
	install := "'" + python + "' -m pip install -q --no-deps --target pkgs " + srv.URL + file
	hostTool(t, env, t.TempDir(), "sh", "-c", install)
	srv.Close()

	cache := filepath.Join(home, ".cache", "pip")
	before := treeSums(t, cache)
	if len(before) == 0 {
		t.Fatalf("the unsandboxed install left nothing in the user's pip cache %s", cache)
	}
	check := ` 2>/dev/null && PYTHONPATH=pkgs '` + python + `' -c 'import wpdep; print(wpdep.ANSWER)'`
	out, errOut, code := sandboxed(t, env, ws, install+check)
	if code != 0 || out != "42\n" || strings.Contains(errOut, "network to") {
		t.Fatalf("pip install by URL from the user's HTTP cache, the server gone, no network asked: exit %d\n%s\n%s", code, out, errOut)
	}
	userCacheUnchanged(t, cache, before)
	// Control: a user without that cache has nothing to install.
	if out, errOut, code := sandboxed(t, pipEnv(toolHome(t), host), t.TempDir(), install+" --retries 0"); code == 0 {
		t.Errorf("pip install by URL with an empty cache and no server succeeded: is the cache really layered? %s %s", out, errOut)
	}
}

// userMavenRepo writes the artifact org.example:wext:1.0 (an empty jar)
// into the user's local Maven repository under home, as downloaded from
// Maven Central.
func userMavenRepo(t *testing.T, home string) map[string]string {
	t.Helper()
	var jar bytes.Buffer
	z := zip.NewWriter(&jar)
	w, _ := z.Create("META-INF/MANIFEST.MF")
	w.Write([]byte("Manifest-Version: 1.0\n"))
	z.Close()
	dir := ".m2/repository/org/example/wext/1.0/"
	files := map[string]string{
		dir + "wext-1.0.pom":         "<project><modelVersion>4.0.0</modelVersion><groupId>org.example</groupId><artifactId>wext</artifactId><version>1.0</version></project>\n",
		dir + "wext-1.0.jar":         jar.String(),
		dir + "_remote.repositories": "wext-1.0.jar>central=\nwext-1.0.pom>central=\n",
		".m2/settings.xml":           "<settings><servers><server><id>central</id><password>secret</password></server></servers></settings>\n",
	}
	writeFiles(t, home, files)
	return files
}

// sandboxRepo is the local Maven repository a sandboxed run is given.
const sandboxRepo = `repo=$(printf '%s\n' $MAVEN_OPTS | sed -n 's/^-Dmaven.repo.local=//p' | tail -1); `

// The user's local Maven repository (never ~/.m2 itself: settings.xml
// holds credentials) is layered under the private one: its artifacts show
// read-only, writes land in the private layer only.
func TestCacheLayerMavenRepository(t *testing.T) {
	home, ws := toolHome(t), t.TempDir()
	env := toolEnv(home)
	files := userMavenRepo(t, home)
	pom := "org/example/wext/1.0/wext-1.0.pom"
	out, errOut, code := sandboxed(t, env, ws, sandboxRepo+`head -c 9 "$repo/`+pom+`" && echo && stat -f -c %T "$repo" && echo mine > "$repo/`+pom+`" && cat "$repo/`+pom+`" && cat "$repo/../settings.xml" "$repo/settings.xml" 2>/dev/null; echo done`)
	if code != 0 || out != "<project>\noverlayfs\nmine\ndone\n" {
		t.Fatalf("the user's artifact under the private layer, then the workspace's, and no settings.xml: exit %d %q %s", code, out, errOut)
	}
	if b := readFile(t, filepath.Join(privateData(t, home, ws), "m2", pom)); string(b) != "mine\n" {
		t.Errorf("the write did not land in the private layer: %q", b)
	}
	checkUnchanged(t, home, files)
}

// What the user's local Maven repository holds resolves sandboxed with
// `mvn -o` in a new workspace: a core extension (.mvn/extensions.xml) is
// resolved as Maven starts, before any plugin, so no Maven Central is
// needed to prove it.
func TestCacheLayerMavenOffline(t *testing.T) {
	need(t, "mvn")
	project := map[string]string{
		"pom.xml":             "<project><modelVersion>4.0.0</modelVersion><groupId>app</groupId><artifactId>app</artifactId><version>1</version><packaging>pom</packaging></project>\n",
		".mvn/extensions.xml": "<extensions><extension><groupId>org.example</groupId><artifactId>wext</artifactId><version>1.0</version></extension></extensions>\n",
	}
	home, ws := toolHome(t), t.TempDir()
	files := userMavenRepo(t, home)
	writeFiles(t, ws, project)
	out, errOut, code := sandboxed(t, toolEnv(home), ws, `mvn -o -q -B validate && echo ok`)
	if code != 0 || !strings.HasSuffix(out, "ok\n") {
		t.Fatalf("mvn -o from the user's local repository: exit %d\n%s\n%s", code, out, errOut)
	}
	checkUnchanged(t, home, files)
	// Control: a user without the artifact has nothing to resolve offline.
	other := t.TempDir()
	writeFiles(t, other, project)
	if out, _, code := sandboxed(t, toolEnv(toolHome(t)), other, `mvn -o -q -B validate`); code == 0 || !strings.Contains(out, "offline") {
		t.Errorf("mvn -o without the artifact: exit %d %s", code, out)
	}
}

// crateFile is a .crate (a gzipped tar of name-version/) of a library
// whose answer() is 42.
func crateFile(t *testing.T, name, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for p, body := range map[string]string{
		"Cargo.toml": "[package]\nname = \"" + name + "\"\nversion = \"" + version + "\"\nedition = \"2021\"\n",
		"src/lib.rs": "pub fn answer() -> i32 { 42 }\n",
	} {
		tw.WriteHeader(&tar.Header{Name: name + "-" + version + "/" + p, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// sparseRegistry serves one crate (a four-letter name) as a cargo sparse
// registry does, on 127.0.0.1.
func sparseRegistry(t *testing.T, name, version string) *httptest.Server {
	t.Helper()
	crate := crateFile(t, name, version)
	sum := sha256.Sum256(crate)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.HandleFunc("/config.json", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"dl": srv.URL + "/dl"})
	})
	mux.HandleFunc("/"+name[:2]+"/"+name[2:4]+"/"+name, func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"name": name, "vers": version, "deps": []any{}, "cksum": hex.EncodeToString(sum[:]), "features": map[string]any{}, "yanked": false})
	})
	mux.HandleFunc("/dl/"+name+"/"+version+"/download", func(w http.ResponseWriter, r *http.Request) { w.Write(crate) })
	return srv
}

// What the user's cargo registry cache holds builds sandboxed with `cargo
// build --offline` in a new workspace, network off; the registry is
// layered, so what the build writes there stays private.
func TestCacheLayerCargoOffline(t *testing.T) {
	need(t, "cargo")
	home, project, ws := toolHome(t), t.TempDir(), t.TempDir()
	env := toolEnv(home)
	if _, _, code := wardenIn(t, env, "exec", "--sandbox", "danger-full-access", "--yes", "--", "cargo", "--version"); code != 0 {
		t.Skip("cargo does not run with this HOME (no toolchain reachable): skipped")
	}
	registry := sparseRegistry(t, "wdep", "1.0.0")
	writeFiles(t, home, map[string]string{
		".cargo/config.toml": "[source.crates-io]\nreplace-with = \"local\"\n\n[source.local]\nregistry = \"sparse+" + registry.URL + "/\"\n",
	})
	app := map[string]string{
		"Cargo.toml":  "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nwdep = \"1.0.0\"\n",
		"src/main.rs": "fn main() { println!(\"{}\", wdep::answer()); }\n",
	}
	writeFiles(t, project, app)
	hostTool(t, env, project, "cargo", "fetch", "-q")
	app["Cargo.lock"] = string(readFile(t, filepath.Join(project, "Cargo.lock")))
	writeFiles(t, ws, app)
	registry.Close()

	userRegistry := filepath.Join(home, ".cargo", "registry")
	before := treeSums(t, userRegistry)
	out, errOut, code := sandboxed(t, env, ws, `cargo build --offline -q && ./target/debug/app && find "$CARGO_HOME/registry/src" -name lib.rs | head -1 | xargs -r sh -c 'echo poison >> "$0"; echo poisoned'`)
	if code != 0 || out != "42\npoisoned\n" {
		t.Fatalf("cargo build --offline from the user's registry cache: exit %d\n%s\n%s", code, out, errOut)
	}
	userCacheUnchanged(t, userRegistry, before)
	// Control: a user without the crate has nothing to build offline.
	fresh := toolHome(t)
	writeFiles(t, fresh, map[string]string{".cargo/config.toml": readFileString(t, filepath.Join(home, ".cargo", "config.toml"))})
	other := t.TempDir()
	writeFiles(t, other, app)
	if _, errOut, code := sandboxed(t, toolEnv(fresh), other, `cargo build --offline -q`); code == 0 {
		t.Errorf("cargo build --offline without the crate succeeded: is the registry really layered? %s", errOut)
	}
}

func readFileString(t *testing.T, p string) string { return string(readFile(t, p)) }
