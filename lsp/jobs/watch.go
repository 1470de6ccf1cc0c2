package jobs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/command"
)

// watchEvery is how often a running command's progress says how long it
// has run and what it printed last: a cold toolchain's first build can take
// minutes, and a progress line that never changes looks like a hang.
const watchEvery = time.Second

// maxWatchedLine bounds the last output line shown in the progress.
const maxWatchedLine = 100

// WatchRun reports, in the progress of the job running in ctx, the elapsed
// time and the last output line of the command spec runs, every watchEvery
// until stop is called. It taps spec's writers for that; without a job it
// changes nothing.
func WatchRun(ctx context.Context, spec *approvals.RunSpec) (stop func()) {
	job, _ := ctx.Value(jobKey{}).(*Job)
	if job == nil {
		return func() {}
	}
	last := &lastLine{}
	spec.Stdout, spec.Stderr = last.tap(spec.Stdout), last.tap(spec.Stderr)
	cmd := command.EscapeText(command.Display(spec.Argv))
	start, done, exited := time.Now(), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(watchEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case now := <-tick.C:
				msg := fmt.Sprintf("Running `%s` (%ds)", cmd, int(now.Sub(start).Seconds()))
				if line := last.String(); line != "" {
					msg += ": " + command.EscapeText(line)
				}
				job.Report(msg, -1)
			}
		}
	}()
	// Stopped, it reports no more: the command's outcome comes after.
	return sync.OnceFunc(func() { close(done); <-exited })
}

// lastLine keeps the last non-blank line a command printed (a carriage
// return ends a line too, for progress bars), its tail when long.
type lastLine struct {
	mu      sync.Mutex
	partial []byte // since the last line break
	done    string // the last finished non-blank line
}

// tap passes w's writes through and watches them; nil stays discarded.
func (l *lastLine) tap(w io.Writer) io.Writer {
	if w == nil {
		w = io.Discard
	}
	return io.MultiWriter(w, writerFunc(l.observe))
}

func (l *lastLine) observe(p []byte) (int, error) {
	n := len(p)
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			l.partial = keepTail(append(l.partial, p...))
			return n, nil
		}
		if s := strings.TrimSpace(string(keepTail(append(l.partial, p[:i]...)))); s != "" {
			l.done = s
		}
		l.partial, p = l.partial[:0], p[i+1:]
	}
}

func (l *lastLine) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := strings.TrimSpace(string(l.partial)); s != "" {
		return s
	}
	return l.done
}

// keepTail cuts b to its last maxWatchedLine bytes: the end of a long line
// says more about where a build is.
func keepTail(b []byte) []byte {
	if len(b) <= maxWatchedLine {
		return b
	}
	cut := len(b) - maxWatchedLine
	for cut < len(b) && !utf8.RuneStart(b[cut]) {
		cut++
	}
	return append(b[:0], b[cut:]...)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
