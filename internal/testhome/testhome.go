package testhome

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Main isolates the test process, runs the tests, removes the temporary
// home and exits with the tests' status.
func Main(m *testing.M) {
	cleanup, err := Setup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testhome: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// Setup points HOME, XDG_CONFIG_HOME, XDG_STATE_HOME, XDG_CACHE_HOME and
// XDG_DATA_HOME at a fresh temporary directory and returns what removes it.
// Tests that need their own still t.Setenv or set cmd.Env on top.
func Setup() (cleanup func(), err error) {
	pinGoDirs()
	root, err := mkdirOutsideTemp()
	if err != nil {
		return nil, fmt.Errorf("temporary home: %w", err)
	}
	home := filepath.Join(root, "home")
	vars := map[string]string{
		"HOME":            home,
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
	}
	for k, v := range vars {
		if err := os.MkdirAll(v, 0o700); err != nil {
			os.RemoveAll(root)
			return nil, err
		}
		os.Setenv(k, v)
	}
	return func() { removeAll(root) }, nil
}

// mkdirOutsideTemp makes the home in the package directory (the test's
// working directory), or /var/tmp, whichever lies outside /tmp and $TMPDIR:
// those are writable roots of the sandbox, and a home inside one changes
// what the policy decides (a shell reading startup files the sandbox could
// have written never leaves the sandbox).
func mkdirOutsideTemp() (string, error) {
	var temps []string
	for _, d := range []string{"/tmp", os.TempDir()} {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			temps = append(temps, r)
		}
	}
	for _, d := range []string{".", "/var/tmp"} {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue
		}
		if r, err = filepath.Abs(r); err != nil || inAny(r, temps) {
			continue
		}
		if dir, err := os.MkdirTemp(r, ".testhome-"); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("no directory outside %v to make it in", temps)
}

func inAny(dir string, parents []string) bool {
	for _, p := range parents {
		if rel, err := filepath.Rel(p, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// pinGoDirs fixes Go's build and module caches and its env file (and
// rustup's homes) at the places they have now, before HOME moves: tests
// build warden and run toolchains inside the sandbox, and must find the
// same caches, settings and toolchains.
func pinGoDirs() {
	home, _ := os.UserHomeDir()
	cache, _ := os.UserCacheDir()
	config, _ := os.UserConfigDir()
	setDefault := func(k, v string) {
		if os.Getenv(k) == "" && v != "" && filepath.IsAbs(v) {
			os.Setenv(k, v)
		}
	}
	if cache != "" {
		setDefault("GOCACHE", filepath.Join(cache, "go-build"))
	}
	if home != "" {
		setDefault("GOPATH", filepath.Join(home, "go"))
	}
	if gopath := filepath.SplitList(os.Getenv("GOPATH")); len(gopath) > 0 {
		setDefault("GOMODCACHE", filepath.Join(gopath[0], "pkg", "mod"))
	}
	if config != "" {
		setDefault("GOENV", filepath.Join(config, "go", "env"))
	}
	// rustup's proxies (cargo, rustc on PATH) find their toolchains here.
	if home != "" {
		if p := filepath.Join(home, ".rustup"); isDir(p) {
			setDefault("RUSTUP_HOME", p)
		}
	}
}

// HomeOnly is the environment, to add to os.Environ(), of a user whose
// HOME is home and who sets nothing else: the XDG base directories and the
// Go variables Setup set are emptied, so Warden's and Go's directories
// derive from home as they would for that user.
func HomeOnly(home string) []string {
	return []string{"HOME=" + home,
		"XDG_CONFIG_HOME=", "XDG_STATE_HOME=", "XDG_CACHE_HOME=", "XDG_DATA_HOME=",
		"GOCACHE=", "GOMODCACHE=", "GOPATH=", "GOENV="}
}

// removeAll removes dir even where Go's module cache (in the sandbox's
// private toolchain caches) left read-only directories.
func removeAll(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
	os.RemoveAll(dir)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
