package guard

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Looking into a mode-000 directory changes its mode and back, which the
// guard's own attribute watch reports: the second look at an unchanged
// directory must not change it again (it looped, a core busy for the whole
// run). A directory filled since is looked into again and found filled
// (the attack: content added after a first look).
func TestEmptyLockedDirLooksOnceAtAnUnchangedDirectory(t *testing.T) {
	d := filepath.Join(t.TempDir(), ".idea")
	if err := unix.Mkdir(d, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(d, 0o700)
	ctime := func() int64 {
		var st unix.Stat_t
		if err := unix.Lstat(d, &st); err != nil {
			t.Fatal(err)
		}
		return st.Ctim.Nano()
	}
	look := func() bool {
		st, err := os.Lstat(d)
		if err != nil {
			t.Fatal(err)
		}
		return emptyLockedDir(d, st)
	}
	if !look() {
		t.Fatal("an empty mode-000 directory was not found empty")
	}
	before := ctime()
	time.Sleep(20 * time.Millisecond)
	if !look() || ctime() != before {
		t.Fatal("an unchanged mode-000 directory was looked into again (its mode changed)")
	}
	os.Chmod(d, 0o700)
	os.WriteFile(filepath.Join(d, "settings.json"), []byte("{}"), 0o644)
	os.Chmod(d, 0)
	if look() {
		t.Fatal("a mode-000 directory filled after the first look was taken for empty")
	}
}
