package toolcache

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/envlist"
	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/protect"
)

// Caches are the sandbox's own toolchain caches for one workspace: Go's
// build and module caches, npm, yarn, pnpm, pip, uv, cargo, Gradle, Maven
// and anything that follows $XDG_CACHE_HOME. A sandboxed command may not
// write the user's own caches (it would poison what the user's unsandboxed
// builds run next), so under workspace-write it gets this directory as an
// extra writable root and each tool's variable pointing into it. Escalated
// and unsandboxed runs keep the user's environment as it is.
type Caches struct {
	// Root holds one cache set per workspace (SetDir); the set of the
	// policy's first workspace is used. Empty means no private caches.
	Root string
	// MaxSize caps all the sets under Root; the least recently used go
	// first, after a run, at most once a minute. 0 means no cap.
	MaxSize int64
}

// DataDir is the subdirectory of a set that the sandbox may write; the
// set's own records (last use, workspace) stay beside it, out of reach.
const DataDir = "data"

// toolDirs name each tool's directory inside the data directory.
var toolDirs = struct{ goBuild, goMod, npm, yarn, yarnGlobal, pnpm, pip, uv, cargo, gradle, maven, xdg string }{
	"go-build", "go-mod", "npm", "yarn", "yarn-global", "pnpm-store", "pip", "uv", "cargo", "gradle", "m2", "xdg",
}

// cacheVars are the variables pointing a tool at one location; a value the
// user set is kept when it already points inside a writable root.
func cacheVars(data string) [][2]string {
	j := func(n string) string { return filepath.Join(data, n) }
	return [][2]string{
		{"GOCACHE", j(toolDirs.goBuild)},
		{"GOMODCACHE", j(toolDirs.goMod)},
		{"npm_config_cache", j(toolDirs.npm)},
		{"YARN_CACHE_FOLDER", j(toolDirs.yarn)},
		{"YARN_GLOBAL_FOLDER", j(toolDirs.yarnGlobal)},
		{"npm_config_store_dir", j(toolDirs.pnpm)},
		{"pnpm_config_store_dir", j(toolDirs.pnpm)},
		{"PIP_CACHE_DIR", j(toolDirs.pip)},
		{"UV_CACHE_DIR", j(toolDirs.uv)},
		{"CARGO_HOME", j(toolDirs.cargo)},
		{"GRADLE_USER_HOME", j(toolDirs.gradle)},
		{"XDG_CACHE_HOME", j(toolDirs.xdg)},
	}
}

// linkedConfig are the user's tool settings (under home) that a private
// tool home links to, read through the link so the read policy still
// applies and a write lands outside the writable roots: settings only,
// never credentials (cargo's credentials.toml, and Gradle's
// gradle.properties, which usually holds tokens, stay out).
var linkedConfig = []struct {
	tool, user string
	names      []string
}{
	{toolDirs.cargo, ".cargo", []string{"config.toml", "config"}},
	{toolDirs.gradle, ".gradle", []string{"init.gradle", "init.gradle.kts", "init.d"}},
}

// Prepare creates the set and its records and links the user's tool
// settings into the private tool homes. It is cheap enough for every run: a
// few stats, and writes only the first time. Everything is done through
// os.Root, so a link the sandbox planted in the set cannot turn Warden's
// writes elsewhere.
func Prepare(dir, workspace, home string) error {
	if err := os.MkdirAll(filepath.Join(dir, DataDir), 0o700); err != nil {
		return err
	}
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("cache set %s is not a directory", dir)
	}
	set, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer set.Close()
	now := time.Now()
	if err := set.Chtimes(lastUsedFile, now, now); err != nil {
		f, err := set.OpenFile(lastUsedFile, os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		f.Close()
	}
	if _, err := set.Lstat(workspaceFile); err != nil {
		set.WriteFile(workspaceFile, []byte(workspace+"\n"), 0o600)
	}
	if home == "" {
		return nil
	}
	data, err := set.OpenRoot(DataDir)
	if err != nil {
		return err
	}
	defer data.Close()
	for _, lc := range linkedConfig {
		for _, n := range lc.names {
			target := filepath.Join(home, lc.user, n)
			link := filepath.Join(lc.tool, n)
			if _, err := os.Lstat(target); err != nil {
				continue
			}
			if got, err := data.Readlink(link); err == nil && got == target {
				continue
			}
			if err := data.MkdirAll(lc.tool, 0o700); err != nil {
				return err
			}
			data.Remove(link)
			if err := data.Symlink(target, link); err != nil {
				return err
			}
		}
	}
	return nil
}

// Env points each tool at the set, in env (the command's environment built
// so far): a variable the user set is kept only when it points inside a
// writable root (and outside its protected paths).
func Env(env []string, dir, workspace string, roots []protect.Root, home string) []string {
	data := filepath.Join(dir, DataDir)
	proxy := goProxy(env, home) // from the user's module cache, before it is replaced
	for _, kv := range cacheVars(data) {
		if v := envlist.Get(env, kv[0]); v != "" && insideWritable(v, roots) {
			continue
		}
		env = envlist.Set(env, kv[0], kv[1])
	}
	if v := envlist.Get(env, "NPM_CONFIG_CACHE"); v != "" && !insideWritable(v, roots) {
		env = envlist.Set(env, "NPM_CONFIG_CACHE", filepath.Join(data, toolDirs.npm))
	}
	env = envlist.Set(env, "GOPROXY", proxy)
	if f := buildVCSFlag(envlist.Get(env, "GOFLAGS"), workspace); f != "" {
		env = envlist.Set(env, "GOFLAGS", f)
	}
	env = envlist.Set(env, "MAVEN_OPTS", mavenOpts(envlist.Get(env, "MAVEN_OPTS"), filepath.Join(data, toolDirs.maven), home, roots))
	return env
}

// buildVCSFlag turns Go's VCS stamping off when the workspace root has no
// .git of its own: a .git the command makes there is moved away, which a
// build that stamps could trip on ("error obtaining VCS status"). "" leaves
// GOFLAGS as it is (a repository, or the user chose -buildvcs).
func buildVCSFlag(goflags, workspace string) string {
	if strings.Contains(goflags, "-buildvcs") {
		return ""
	}
	if _, err := os.Lstat(filepath.Join(workspace, ".git")); err == nil {
		return ""
	}
	return strings.TrimSpace(goflags + " -buildvcs=false")
}

// insideWritable reports whether p is inside a writable root and none of
// its protected paths.
func insideWritable(p string, roots []protect.Root) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	p = (*pathmemo.Memo)(nil).ResolveExisting(filepath.Clean(p))
	for _, r := range roots {
		if !pathutil.Within(r.Path, p) {
			continue
		}
		for _, prot := range append(append([]string(nil), r.Protected...), r.Found...) {
			if pathutil.Within(prot, p) {
				return false
			}
		}
		return true
	}
	return false
}

// goProxy puts the user's module download cache first, read-only, so what
// the user already downloaded builds offline (verified against go.sum as
// always), then the proxy the user chose (or Go's default).
func goProxy(env []string, home string) string {
	goenv := userGoEnv(env, home)
	user := goenv("GOPROXY")
	if user == "" {
		user = "https://proxy.golang.org,direct"
	}
	mod := userModCache(goenv, home)
	dl := filepath.Join(mod, "cache", "download")
	if !filepath.IsAbs(mod) || strings.HasPrefix(user, "file://"+filepath.ToSlash(dl)) {
		return user
	}
	if st, err := os.Stat(dl); err != nil || !st.IsDir() {
		return user
	}
	return "file://" + filepath.ToSlash(dl) + "," + user
}

// userModCache is the user's Go module cache, as the go command finds it.
func userModCache(goenv func(string) string, home string) string {
	if mod := goenv("GOMODCACHE"); mod != "" {
		return mod
	}
	if first, _, _ := strings.Cut(goenv("GOPATH"), string(filepath.ListSeparator)); filepath.IsAbs(first) {
		return filepath.Join(first, "pkg", "mod")
	} else if home != "" {
		return filepath.Join(home, "go", "pkg", "mod")
	}
	return ""
}

// layerTools are the caches to layer on the user's own (toolcache): each
// tool whose variable in env (the command's, after Env) points at its
// private cache, paired with the user's cache as the user's tools find it
// (from user, the environment before Env).
func layerTools(user, env []string, data, home string) []Tool {
	var out []Tool
	for _, c := range userCacheDirs(user, home) {
		if pointsAt(env, c.variable) != filepath.Join(data, strings.SplitN(c.Name, "/", 2)[0]) {
			continue // the user's own choice inside a writable root, kept
		}
		out = append(out, c.Tool)
	}
	return out
}

// pointsAt is where the variable in env points its tool: for MAVEN_OPTS,
// the local repository it names.
func pointsAt(env []string, variable string) string {
	if variable == "MAVEN_OPTS" {
		return mavenRepoLocal(envlist.Get(env, variable))
	}
	return envlist.Get(env, variable)
}

// UserCaches are the user's own toolchain caches that sandboxed runs read
// through their layers, as the user's environment env names them.
func UserCaches(env []string, home string) []Tool {
	var out []Tool
	for _, c := range userCacheDirs(env, home) {
		out = append(out, c.Tool)
	}
	return out
}

type userCacheDir struct {
	Tool
	variable string // the variable that points the tool at its private cache
}

// userCacheDirs are the user's caches, by the tool's settings in user.
// Only caches: a tool home's settings and credentials (~/.cargo's config,
// ~/.gradle's properties) never show through a layer.
func userCacheDirs(user []string, home string) []userCacheDir {
	if !filepath.IsAbs(home) {
		return nil
	}
	goenv := userGoEnv(user, home)
	or := func(v, def string) string {
		if filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
		return def
	}
	xdgCache := or(envlist.Get(user, "XDG_CACHE_HOME"), filepath.Join(home, ".cache"))
	cargo := or(envlist.Get(user, "CARGO_HOME"), filepath.Join(home, ".cargo"))
	gradle := or(envlist.Get(user, "GRADLE_USER_HOME"), filepath.Join(home, ".gradle"))
	npm := or(envlist.Get(user, "npm_config_cache"), or(envlist.Get(user, "NPM_CONFIG_CACHE"), filepath.Join(home, ".npm")))
	dirs := []userCacheDir{
		{Tool{Name: toolDirs.goBuild, User: or(goenv("GOCACHE"), filepath.Join(xdgCache, "go-build"))}, "GOCACHE"},
		{Tool{Name: toolDirs.goMod, User: or(userModCache(goenv, home), "")}, "GOMODCACHE"},
		{Tool{Name: toolDirs.npm, User: npm}, "npm_config_cache"},
		{Tool{Name: toolDirs.yarn, User: or(envlist.Get(user, "YARN_CACHE_FOLDER"), yarnCache(user, home, os.Getuid() == 0))}, "YARN_CACHE_FOLDER"},
		{Tool{Name: toolDirs.pnpm, User: pnpmStore(user, home)}, "npm_config_store_dir"},
		// pnpm's metadata cache: --offline resolves, and pnpm 11+ checks a
		// lockfile's supply-chain policies, from it.
		{Tool{Name: toolDirs.xdg + "/pnpm", User: filepath.Join(xdgCache, "pnpm")}, "XDG_CACHE_HOME"},
		{Tool{Name: toolDirs.pip, User: or(envlist.Get(user, "PIP_CACHE_DIR"), filepath.Join(xdgCache, "pip"))}, "PIP_CACHE_DIR"},
		{Tool{Name: toolDirs.uv, User: or(envlist.Get(user, "UV_CACHE_DIR"), filepath.Join(xdgCache, "uv"))}, "UV_CACHE_DIR"},
		{Tool{Name: toolDirs.cargo + "/registry", User: filepath.Join(cargo, "registry")}, "CARGO_HOME"},
		{Tool{Name: toolDirs.cargo + "/git", User: filepath.Join(cargo, "git")}, "CARGO_HOME"},
		{Tool{Name: toolDirs.gradle + "/caches", User: filepath.Join(gradle, "caches")}, "GRADLE_USER_HOME"},
		{Tool{Name: toolDirs.gradle + "/wrapper", User: filepath.Join(gradle, "wrapper")}, "GRADLE_USER_HOME"},
		// The local repository only: ~/.m2 holds settings.xml, with credentials.
		{Tool{Name: toolDirs.maven, User: or(mavenRepoLocal(envlist.Get(user, "MAVEN_OPTS")), filepath.Join(home, ".m2", "repository"))}, "MAVEN_OPTS"},
	}
	return slices.DeleteFunc(dirs, func(d userCacheDir) bool { return !filepath.IsAbs(d.User) })
}

// yarnCache is where yarn classic keeps its cache on Linux unless
// YARN_CACHE_FOLDER says: under XDG_CACHE_HOME when it is set, else under
// the home, which for root yarn takes to be /usr/local/share.
func yarnCache(user []string, home string, root bool) string {
	if xdg := envlist.Get(user, "XDG_CACHE_HOME"); filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "yarn")
	}
	if root {
		home = "/usr/local/share"
	}
	return filepath.Join(home, ".cache", "yarn")
}

// pnpmStore is the user's pnpm content-addressable store, where pnpm finds
// it on Linux: the store-dir setting (environment, then pnpm's rc and
// ~/.npmrc), else $PNPM_HOME/store, else $XDG_DATA_HOME/pnpm/store. Only
// the store-dir line of an rc file is read (~/.npmrc holds tokens).
func pnpmStore(user []string, home string) string {
	for _, v := range []string{"pnpm_config_store_dir", "npm_config_store_dir"} {
		if d := envlist.Get(user, v); d != "" {
			return expandHome(d, home)
		}
	}
	config := envlist.Get(user, "XDG_CONFIG_HOME")
	if !filepath.IsAbs(config) {
		config = filepath.Join(home, ".config")
	}
	for _, rc := range []string{filepath.Join(config, "pnpm", "rc"), filepath.Join(home, ".npmrc")} {
		if d := rcValue(rc, "store-dir"); d != "" {
			return expandHome(d, home)
		}
	}
	if d := envlist.Get(user, "PNPM_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "store")
	}
	data := envlist.Get(user, "XDG_DATA_HOME")
	if !filepath.IsAbs(data) {
		data = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(data, "pnpm", "store")
}

// rcValue is key's value in the npm-style rc file at path ("" when unset).
func rcValue(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok && strings.TrimSpace(k) == key {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}

// expandHome resolves a leading ~/ against home; anything not absolute
// then is "" (not a cache to layer).
func expandHome(p, home string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		p = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}

// userGoEnv reads a Go setting as the user's go command would: the
// environment first, then the go env file (`go env -w`). The module cache
// variables are read before Warden replaced them: env holds the user's
// values unless they pointed inside a writable root.
func userGoEnv(env []string, home string) func(string) string {
	file := map[string]string{}
	path := envlist.Get(env, "GOENV")
	if path == "" {
		if x := envlist.Get(env, "XDG_CONFIG_HOME"); filepath.IsAbs(x) {
			path = filepath.Join(x, "go", "env")
		} else if home != "" {
			path = filepath.Join(home, ".config", "go", "env")
		}
	}
	if f, err := os.Open(path); err == nil && filepath.IsAbs(path) {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok {
				file[k] = v
			}
		}
		f.Close()
	}
	return func(k string) string {
		if v := envlist.Get(env, k); v != "" {
			return v
		}
		return file[k]
	}
}

// mavenRepoLocal is the local repository opts name (the last
// -Dmaven.repo.local wins, as in Java), or "".
func mavenRepoLocal(opts string) string {
	repo := ""
	for _, f := range strings.Fields(opts) {
		if v, ok := strings.CutPrefix(f, "-Dmaven.repo.local="); ok {
			repo = v
		}
	}
	return repo
}

// mavenOpts adds a private local repository to MAVEN_OPTS, with the user's
// own as a read-only tail (Maven 3.9+, ignored before), unless the user's
// options already name a local repository inside a writable root.
func mavenOpts(opts, repo, home string, roots []protect.Root) string {
	for _, f := range strings.Fields(opts) {
		if v, ok := strings.CutPrefix(f, "-Dmaven.repo.local="); ok && insideWritable(v, roots) {
			return opts
		}
	}
	add := "-Dmaven.repo.local=" + repo
	if home != "" {
		add += " -Dmaven.repo.local.tail=" + filepath.Join(home, ".m2", "repository")
	}
	return strings.TrimSpace(opts + " " + add)
}

// TakeLayers leases the set for one run: its cache layers on Linux, where
// the helper mounts them, and everywhere a lock that keeps eviction off
// the set while the run lasts. A failure leaves the run with the private
// caches as they are: slower, never less isolated.
func TakeLayers(set string, user, env []string, home string) *Lease {
	data := filepath.Join(set, DataDir)
	var tools []Tool
	if runtime.GOOS == "linux" {
		tools = layerTools(user, env, data, home)
	}
	lease, err := Take(set, data, tools)
	if err != nil {
		return nil
	}
	return lease
}
