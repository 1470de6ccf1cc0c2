package framing

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
)

// FuzzStream feeds arbitrary bytes to the framing reader: it must never
// panic or hang, only return messages and finally the end of input.
func FuzzStream(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}Content-Length: 5\r\n\r\n"))
	f.Add([]byte("garbage\r\n\r\nContent-Length: abc\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s := New(nopRWC{bytes.NewReader(in), io.Discard}, 1<<16, slog.New(slog.DiscardHandler))
		for i := 0; ; i++ {
			if _, _, err := s.Read(context.Background()); err != nil {
				return
			}
			if i > len(in) {
				t.Fatal("more messages than input bytes")
			}
		}
	})
}

type nopRWC struct {
	io.Reader
	io.Writer
}

func (nopRWC) Close() error { return nil }
