package sandbox

import (
	"sync"
	"time"
)

// Clock is a timeout whose countdown can be paused, so the time a human
// spends answering an approval dialog is not charged to the command. A nil
// *Clock never expires. Pause and Resume nest: the clock runs again when
// every Pause has been matched by a Resume.
type Clock struct {
	mu        sync.Mutex
	remaining time.Duration // budget left when the countdown last stopped
	started   time.Time     // when the countdown last (re)started; zero while paused
	paused    int
	timer     *time.Timer
	gen       int // which timer is current; a stopped timer's late fire is ignored
	expired   chan struct{}
	fired     bool
}

// NewClock starts a countdown of d. d <= 0 means no timeout.
func NewClock(d time.Duration) *Clock {
	c := &Clock{remaining: d, expired: make(chan struct{})}
	if d > 0 {
		c.started = time.Now()
		c.timer = c.arm(d)
	}
	return c
}

// arm starts a timer for d as the current one. A timer that Pause stopped
// too late (it had already fired and its callback was waiting for the lock)
// must not expire the clock once a Resume has restarted it with budget left.
func (c *Clock) arm(d time.Duration) *time.Timer {
	c.gen++
	gen := c.gen
	return time.AfterFunc(d, func() { c.fire(gen) })
}

func (c *Clock) fire(gen int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused > 0 || c.fired || gen != c.gen {
		return
	}
	c.fired = true
	c.remaining = 0
	close(c.expired)
}

// Expired is closed when the budget runs out.
func (c *Clock) Expired() <-chan struct{} {
	if c == nil {
		return nil
	}
	return c.expired
}

// Pause stops the countdown until the matching Resume.
func (c *Clock) Pause() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused++
	if c.paused > 1 || c.timer == nil || c.fired {
		return
	}
	c.timer.Stop()
	c.remaining -= time.Since(c.started)
	c.started = time.Time{}
}

// Resume restarts the countdown with the budget that was left.
func (c *Clock) Resume() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused == 0 {
		return
	}
	c.paused--
	if c.paused > 0 || c.timer == nil || c.fired {
		return
	}
	if c.remaining <= 0 {
		c.fired = true
		close(c.expired)
		return
	}
	c.started = time.Now()
	c.timer = c.arm(c.remaining)
}

// Remaining is the budget left; 0 for a clock without a timeout.
func (c *Clock) Remaining() time.Duration {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer == nil || c.fired {
		return 0
	}
	if c.started.IsZero() {
		return c.remaining
	}
	return max(0, c.remaining-time.Since(c.started))
}

// Stop releases the timer.
func (c *Clock) Stop() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
}
