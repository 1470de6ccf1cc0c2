package toolcache

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func fixture(t *testing.T) (dir, data string, tools []Tool) {
	t.Helper()
	base := t.TempDir()
	user := filepath.Join(base, "user", "go-build")
	dir = filepath.Join(base, "set")
	data = filepath.Join(dir, "data")
	for _, d := range []string{user, data} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return dir, data, []Tool{{Name: "go-build", User: user}, {Name: "npm", User: filepath.Join(base, "user", "missing")}}
}

// The first run's upper is the private layer; a run beside it stacks the
// private layer read-only under a scratch upper, removed at its end.
func TestTakeHolderThenShared(t *testing.T) {
	dir, data, tools := fixture(t)
	first, err := Take(dir, data, tools)
	if err != nil || first.Shared || len(first.Layers) != 1 {
		t.Fatalf("first lease: %+v %v", first, err)
	}
	if l := first.Layers[0]; l.Upper != filepath.Join(data, "go-build") || l.Target != l.Upper || !slices.Equal(l.Lower, []string{tools[0].User}) {
		t.Errorf("holder layer: %+v", l)
	}
	second, err := Take(dir, data, tools)
	if err != nil || !second.Shared || len(second.Layers) != 1 {
		t.Fatalf("second lease: %+v %v", second, err)
	}
	l := second.Layers[0]
	if l.Target != filepath.Join(data, "go-build") || !slices.Equal(l.Lower, []string{l.Target, tools[0].User}) || filepath.Dir(filepath.Dir(filepath.Dir(l.Upper))) != filepath.Join(dir, runsDir) {
		t.Errorf("shared layer: %+v", l)
	}
	second.Release()
	if _, err := os.Stat(second.scratch); err == nil {
		t.Errorf("scratch %s left after release", second.scratch)
	}
	first.Release()
	first.Release() // twice: harmless
	third, err := Take(dir, data, tools)
	if err != nil || third.Shared {
		t.Fatalf("after both released, a run holds the private layer again: %+v %v", third, err)
	}
	third.Release()
}

// A scratch upper whose run died (its lock free) is removed by the next
// run that holds the private layer, read-only directories and all.
func TestTakeRemovesStaleScratch(t *testing.T) {
	dir, data, tools := fixture(t)
	stale := filepath.Join(dir, runsDir, "run-dead")
	if err := os.MkdirAll(filepath.Join(stale, "upper", "go-mod", "m@v1"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(stale, runLock), nil, 0o600)
	os.Chmod(filepath.Join(stale, "upper", "go-mod", "m@v1"), 0o555)
	os.Chmod(filepath.Join(stale, "upper", "go-mod"), 0o000)
	l, err := Take(dir, data, tools)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("stale scratch %s kept", stale)
	}
}

// A link a run planted in the private caches, leading out of them, leaves
// its tool unlayered; a link in the user's own path is resolved.
func TestTakeRefusesPlantedLinks(t *testing.T) {
	dir, data, tools := fixture(t)
	if err := os.Symlink(t.TempDir(), filepath.Join(data, "go-build")); err != nil {
		t.Fatal(err)
	}
	l, err := Take(dir, data, tools)
	if err != nil || len(l.Layers) != 0 {
		t.Errorf("a planted link was layered: %+v %v", l, err)
	}
	l.Release()
	os.Remove(filepath.Join(data, "go-build"))
	link := filepath.Join(t.TempDir(), "cache")
	os.Symlink(tools[0].User, link)
	l, err = Take(dir, data, []Tool{{Name: "go-build", User: link}})
	if err != nil || len(l.Layers) != 1 || l.Layers[0].Lower[0] != tools[0].User {
		t.Errorf("the user's cache through a link: %+v %v", l, err)
	}
	l.Release()
}
