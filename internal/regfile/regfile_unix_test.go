//go:build unix

package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO is refused at once, not waited on; a file over the bound is
// ErrTooLarge. Twin: a regular file within it, and the null device, read.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(fifo, 10); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a FIFO was read")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read blocked on a FIFO")
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 11), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(big, 10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("11 bytes read with a bound of 10: %v", err)
	}
	if data, err := Read(big, 11); err != nil || len(data) != 11 {
		t.Errorf("twin: %d bytes, %v", len(data), err)
	}
	if data, err := Read(os.DevNull, 10); err != nil || len(data) != 0 {
		t.Errorf("twin %s: %q, %v", os.DevNull, data, err)
	}
	if _, err := Open(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("missing: %v", err)
	}
}
