package agent

import (
	"fmt"
	"sync"
)

// Capture collects a command's output for the model, keeping at most the
// first and last Keep bytes however much the command prints, so a command
// that floods its output costs bounded memory. Safe for concurrent writes
// (stdout and stderr share it).
type Capture struct {
	// Keep is how many bytes of the head, and of the tail, are kept.
	Keep int

	mu    sync.Mutex
	head  []byte
	tail  []byte // ring buffer of the last Keep bytes once head is full
	start int    // ring start
	total int64
}

func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := c.keep()
	c.total += int64(len(p))
	n := len(p)
	if room := keep - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) >= keep {
		c.tail = append(c.tail[:0], p[len(p)-keep:]...)
		c.start = 0
		return n, nil
	}
	for len(p) > 0 {
		if len(c.tail) < keep {
			k := min(keep-len(c.tail), len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(c.tail[c.start:], p)
		p = p[k:]
		c.start = (c.start + k) % keep
	}
	return n, nil
}

func (c *Capture) keep() int {
	if c.Keep <= 0 {
		return 1 << 20
	}
	return c.Keep
}

// String returns the output, with a note where the middle was dropped.
func (c *Capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := append(append([]byte(nil), c.tail[c.start:]...), c.tail[:c.start]...)
	dropped := c.total - int64(len(c.head)) - int64(len(tail))
	if dropped <= 0 {
		return string(c.head) + string(tail)
	}
	return fmt.Sprintf("%s\n[... %d bytes dropped while capturing ...]\n%s", c.head, dropped, tail)
}

// Total is the number of bytes written.
func (c *Capture) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}
