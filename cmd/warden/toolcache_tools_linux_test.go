package main

import (
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
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
