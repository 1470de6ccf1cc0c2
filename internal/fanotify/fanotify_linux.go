package fanotify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// DirID is the identity fanotify reports the directory open at fd by: its
// filesystem id and file handle, as DFIDName returns it.
func DirID(fd int) (string, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return "", fmt.Errorf("statfs: %w", err)
	}
	// AT_HANDLE_FID (Linux 6.5) asks for the encoding fanotify uses; older
	// kernels encode both alike where the filesystem decodes handles.
	h, _, err := unix.NameToHandleAt(fd, "", unix.AT_EMPTY_PATH|atHandleFID)
	if errors.Is(err, unix.EINVAL) {
		h, _, err = unix.NameToHandleAt(fd, "", unix.AT_EMPTY_PATH)
	}
	if err != nil {
		return "", fmt.Errorf("file handle: %w", err)
	}
	b := make([]byte, 0, 12+len(h.Bytes()))
	b = binary.NativeEndian.AppendUint32(b, uint32(st.Fsid.Val[0]))
	b = binary.NativeEndian.AppendUint32(b, uint32(st.Fsid.Val[1]))
	b = binary.NativeEndian.AppendUint32(b, uint32(h.Type()))
	return string(append(b, h.Bytes()...)), nil
}

const atHandleFID = 0x200

// DFIDName reads an event's info records (what follows its struct
// fanotify_event_metadata) for the first DFID_NAME record: the directory's
// identity (as DirID makes it) and the entry's name as the kernel gave it
// (possibly empty or "."). ok is false when there is none or the records
// are malformed.
func DFIDName(info []byte) (dirID, name string, ok bool) {
	for len(info) >= 4 {
		typ, l := info[0], int(binary.NativeEndian.Uint16(info[2:]))
		if l < 4 || l > len(info) {
			return "", "", false
		}
		rec := info[:l]
		info = info[l:]
		// header (4), fsid (8), handle_bytes (4), handle_type (4), handle, name.
		if typ != unix.FAN_EVENT_INFO_TYPE_DFID_NAME || len(rec) < 20 {
			continue
		}
		hlen := int(binary.NativeEndian.Uint32(rec[12:]))
		if 20+hlen > len(rec) {
			return "", "", false
		}
		n := string(rec[20+hlen:])
		if i := strings.IndexByte(n, 0); i >= 0 {
			n = n[:i]
		}
		return string(rec[4:12]) + string(rec[16:20]) + string(rec[20:20+hlen]), n, true
	}
	return "", "", false
}
