package config

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestCacheMaxSize(t *testing.T) {
	for in, want := range map[string]int64{"": DefaultCacheMaxSize, "5GB": 5 << 30, "500MB": 500 << 20, "1.5GiB": 3 << 29, "1024": 1024, "unlimited": 0, "0": 0} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"lots", "5XB", "-1GB"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
		if err := (Config{ApprovalPolicy: "on-request", SandboxMode: "workspace-write", CacheMaxSize: bad}).Validate(); err == nil {
			t.Errorf("cache_max_size %q validated", bad)
		}
	}
}

func TestCacheUserCachesProtected(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("GOCACHE", filepath.Join(home, "ws", "gocache"))
	prot := ProtectedPaths(Default(), filepath.Join(home, "ws"))
	for _, p := range []string{".cache/go-build", "go/pkg", ".npm", ".cargo"} {
		if !slices.Contains(prot, filepath.Join(home, p)) {
			t.Errorf("%s not protected: %v", p, prot)
		}
	}
	// Twins: a GOCACHE the user put inside the workspace is theirs to share;
	// Warden's own cache directory is not protected (the sandbox writes it).
	for _, p := range []string{filepath.Join(home, "ws", "gocache"), CacheDir(), filepath.Join(home, ".cache")} {
		if slices.Contains(prot, p) {
			t.Errorf("%s protected", p)
		}
	}
	if r := ToolchainCaches(); r != filepath.Join(home, ".cache", "warden", "toolchains") {
		t.Errorf("ToolchainCaches = %s", r)
	}
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".config", "warden"))
	if r := ToolchainCaches(); r != "" {
		t.Errorf("caches inside Warden's config dir: %s", r)
	}
}
