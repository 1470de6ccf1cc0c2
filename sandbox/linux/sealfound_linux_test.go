package linux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSealFoundSkipsARepositoryItsOwnerRemoved: in a private mount
// namespace, a found repository bound onto itself is made read-only; one
// whose owner removed it after the bind (which takes the bind with it) is
// skipped, whether its name is gone or now names a plain directory, instead
// of refusing the run (a parallel test suite's repositories come and go in
// a shared /tmp).
func TestSealFoundSkipsARepositoryItsOwnerRemoved(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root for a private mount namespace")
	}
	dir := t.TempDir()
	kept := filepath.Join(dir, "kept", ".git")
	gone := filepath.Join(dir, "gone", ".git")
	replaced := filepath.Join(dir, "replaced", ".git")
	for _, p := range []string{kept, gone, replaced} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with its goroutine, in its own
		// mount namespace.
		runtime.LockOSThread()
		errc <- func() error {
			if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
				return fmt.Errorf("unshare: %w", err)
			}
			if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
				return fmt.Errorf("make / private: %w", err)
			}
			for _, p := range []string{kept, gone, replaced} {
				if err := bind(p, p); err != nil {
					return err
				}
			}
			// Their owner removes two: the binds go with them; one name
			// is gone, the other holds a new directory.
			for _, p := range []string{gone, replaced} {
				if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
					return fmt.Errorf("detach %s: %w", p, err)
				}
			}
			if err := os.RemoveAll(filepath.Dir(gone)); err != nil {
				return err
			}
			if err := sealFound([]string{kept, gone, replaced}); err != nil {
				return fmt.Errorf("sealFound refused the run: %w", err)
			}
			if err := os.WriteFile(filepath.Join(kept, "x"), nil, 0o644); !errors.Is(err, unix.EROFS) {
				return fmt.Errorf("a write into the repository still bound: %v, want EROFS", err)
			}
			if err := os.WriteFile(filepath.Join(replaced, "x"), nil, 0o644); err != nil {
				return fmt.Errorf("the new directory at the removed one's name: %w", err)
			}
			return nil
		}()
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
