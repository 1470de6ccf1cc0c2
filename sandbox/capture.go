package sandbox

import (
	"io"
	"os"
	"sync"
	"time"
)

// Stream names an output stream of a command.
type Stream int

const (
	Stdout Stream = 1
	Stderr Stream = 2
)

func (s Stream) String() string {
	if s == Stderr {
		return "stderr"
	}
	return "stdout"
}

// capture keeps up to limit bytes of each stream and of both interleaved,
// and passes every chunk to onChunk as it arrives.
type capture struct {
	mu        sync.Mutex
	limit     int
	stdout    []byte
	stderr    []byte
	combined  []byte
	truncated bool
	onChunk   func(Stream, []byte)
}

func (c *capture) writer(s Stream) io.Writer { return streamWriter{c, s} }

type streamWriter struct {
	c *capture
	s Stream
}

func (w streamWriter) Write(p []byte) (int, error) {
	c := w.c
	c.mu.Lock()
	dst := &c.stdout
	if w.s == Stderr {
		dst = &c.stderr
	}
	*dst = c.appendCapped(*dst, p)
	c.combined = c.appendCapped(c.combined, p)
	cb := c.onChunk
	c.mu.Unlock()
	if cb != nil {
		cb(w.s, p)
	}
	return len(p), nil
}

func (c *capture) appendCapped(dst, p []byte) []byte {
	room := c.limit - len(dst)
	if room < len(p) {
		c.truncated = true
		if room <= 0 {
			return dst
		}
		p = p[:room]
	}
	return append(dst, p...)
}

// outputCopy copies a command's stdout and stderr pipes into a capture
// until every writer has closed them.
type outputCopy struct {
	files []*os.File
	done  chan struct{}
}

func startCopying(c *capture, stdout, stderr *os.File) *outputCopy {
	o := &outputCopy{files: []*os.File{stdout, stderr}, done: make(chan struct{})}
	var wg sync.WaitGroup
	for i, s := range []Stream{Stdout, Stderr} {
		wg.Add(1)
		go func(f *os.File, w io.Writer) {
			defer wg.Done()
			io.Copy(w, f)
		}(o.files[i], c.writer(s))
	}
	go func() {
		wg.Wait()
		for _, f := range o.files {
			f.Close()
		}
		close(o.done)
	}()
	return o
}

// wait waits until the output is complete, or for grace and then gives up
// on writers that outlived the command (as exec.Cmd.WaitDelay does).
func (o *outputCopy) wait(grace time.Duration) {
	select {
	case <-o.done:
		return
	case <-time.After(grace):
	}
	for _, f := range o.files {
		f.Close()
	}
	<-o.done
}
