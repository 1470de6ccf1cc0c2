package agent

import (
	"strings"
	"testing"
)

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	c := &Capture{Keep: 10}
	c.Write([]byte("0123456789abc"))
	for i := 0; i < 100; i++ {
		c.Write([]byte("xyz"))
	}
	c.Write([]byte("-THE-END"))
	got := c.String()
	if !strings.HasPrefix(got, "0123456789\n[... ") || !strings.HasSuffix(got, "\nyz-THE-END") {
		t.Errorf("capture = %q", got)
	}
	if c.Total() != 13+300+8 {
		t.Errorf("total = %d", c.Total())
	}
	small := &Capture{Keep: 10}
	small.Write([]byte("hello "))
	small.Write([]byte("world, again"))
	if got := small.String(); got != "hello world, again" {
		t.Errorf("small = %q", got)
	}
}
