//go:build unix

package patch

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unsafe"
)

// rename is os.Rename without its Lstat of the target: the targets here are
// files Warden just checked.
func rename(from, to string) error {
	if err := syscall.Rename(from, to); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// stage writes content to a new temporary file in dir and returns its name.
func stage(dir, base, content string, mode fs.FileMode) (string, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, "."+base+".warden-"+strconv.FormatUint(uint64(rand.Uint32()), 36))
		err := stageAs(name, content, mode, false)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return name, err
	}
}

// stageAs writes content to the new file name (which must not exist), with
// mode, flushed to the disk when durable is set. It calls the system
// directly: os.CreateTemp also registers the descriptor with the runtime
// poller, which costs more system calls than the write of a source file,
// and a patch writes hundreds of them.
func stageAs(name, content string, mode fs.FileMode, durable bool) error {
	fd, err := ignoringEINTR(func() (int, error) {
		return syscall.Open(name, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, uint32(mode.Perm()))
	})
	if err != nil {
		return &fs.PathError{Op: "create", Path: name, Err: err}
	}
	werr := writeAll(fd, content)
	// Open applied the umask; the file must have the mode asked for.
	cerr := syscall.Fchmod(fd, uint32(mode.Perm()))
	var serr error
	if durable && werr == nil {
		serr = syscall.Fsync(fd)
	}
	if err := errors.Join(werr, cerr, serr, syscall.Close(fd)); err != nil {
		syscall.Unlink(name)
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return nil
}

func writeAll(fd int, content string) error {
	data := unsafe.Slice(unsafe.StringData(content), len(content)) // only read
	for len(data) > 0 {
		n, err := ignoringEINTR(func() (int, error) { return syscall.Write(fd, data) })
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// readFile reads a whole file, with as few system calls as stage writes one.
func readFile(path string) ([]byte, error) {
	fd, err := ignoringEINTR(func() (int, error) { return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0) })
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	buf := make([]byte, 0, int(st.Size)+1) // one more byte sees the end at once
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := ignoringEINTR(func() (int, error) { return syscall.Read(fd, buf[len(buf):cap(buf)]) })
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

func ignoringEINTR(fn func() (int, error)) (int, error) {
	for {
		n, err := fn()
		if err != syscall.EINTR {
			return n, err
		}
	}
}
