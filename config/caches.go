package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/internal/pathmemo"
)

// CacheDir is $XDG_CACHE_HOME/warden (default ~/.cache/warden): nothing
// there is configuration or state, so sandboxed commands may write parts
// of it (see ToolchainCaches).
func CacheDir() string { return xdgDir("XDG_CACHE_HOME", ".cache") }

// ToolchainCaches is the root of the sandbox's private toolchain caches,
// one set per workspace; "" when it would fall inside Warden's config or
// state (an XDG_CACHE_HOME set there), which must stay read-only.
func ToolchainCaches() string {
	root := filepath.Join(CacheDir(), "toolchains")
	res := resolver{pathmemo.New()} // the three share their directories
	if !filepath.IsAbs(root) || res.holdsAny(ConfigDir(), []string{root}) || res.holdsAny(StateDir(), []string{root}) {
		return ""
	}
	return root
}

// DefaultCacheMaxSize caps the toolchain caches when cache_max_size is unset.
const DefaultCacheMaxSize = 5 << 30

// CacheLimit is cache_max_size in bytes: DefaultCacheMaxSize when unset, 0
// (no cap) for "0" or "unlimited".
func (c Config) CacheLimit() int64 {
	n, err := ParseSize(c.CacheMaxSize)
	if err != nil {
		return DefaultCacheMaxSize
	}
	return n
}

// ParseSize reads a size such as "5GB", "500MB", "2GiB" or "1048576"
// (bytes); "" is the default, "0" and "unlimited" mean no cap.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "":
		return DefaultCacheMaxSize, nil
	case "unlimited", "0":
		return 0, nil
	}
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.ToUpper(strings.TrimSpace(s[i:]))
	}
	v, err := strconv.ParseFloat(num, 64)
	mult, ok := map[string]float64{"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10,
		"M": 1 << 20, "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
		"T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}[unit]
	if err != nil || !ok || v < 0 {
		return 0, fmt.Errorf("cache_max_size %q: write a size such as 5GB or 500MB, or unlimited", s)
	}
	return int64(v * mult), nil
}

// userCaches are the user's own toolchain caches and tool homes: a
// sandboxed write there would poison what the user's unsandboxed builds
// run next (and ~/.cargo/bin, ~/go/bin are on PATH). They stay read-only
// wherever they fall in a writable root (the workspace is $HOME, or HOME
// is under /tmp); sandboxed commands get their own (ToolchainCaches).
//
// A cache variable pointing inside a workspace or writable root (inside
// holds) is the user's choice to share it with the sandbox, which keeps it.
func userCaches(home string, inside []string) []string {
	j := func(p ...string) string { return filepath.Join(append([]string{home}, p...)...) }
	out := []string{
		j(".cache", "go-build"), j("go", "pkg"), j("go", "bin"), j(".npm"), j(".cargo"), j(".rustup"),
		j(".cache", "pip"), j(".cache", "uv"), j(".cache", "yarn"), j(".yarn"), j(".cache", "pnpm"),
		j(".local", "share", "pnpm"), j(".gradle"), j(".m2"),
	}
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "CARGO_HOME", "RUSTUP_HOME", "GRADLE_USER_HOME", "PIP_CACHE_DIR", "UV_CACHE_DIR", "npm_config_cache", "NPM_CONFIG_CACHE", "YARN_CACHE_FOLDER"} {
		if p := os.Getenv(v); filepath.IsAbs(p) && !insideAny(p, inside) {
			out = append(out, filepath.Clean(p))
		}
	}
	if x := os.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		for _, n := range []string{"go-build", "pip", "uv", "yarn", "pnpm"} {
			out = append(out, filepath.Join(x, n))
		}
	}
	for _, gp := range filepath.SplitList(os.Getenv("GOPATH")) {
		if filepath.IsAbs(gp) {
			out = append(out, filepath.Join(gp, "pkg"), filepath.Join(gp, "bin"))
		}
	}
	return out
}

// insideAny reports whether p is one of dirs or below one.
func insideAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if holdsAny(d, []string{p}) {
			return true
		}
	}
	return false
}
