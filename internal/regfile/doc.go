// Package regfile opens and reads files that a sandboxed command may have
// written or put in place: only regular files (or the null device, which
// reads as empty), opened without blocking, so that a FIFO left where a
// config or a list was expected cannot stop the reader, nor a device
// feed it without end.
package regfile
