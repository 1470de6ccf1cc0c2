package sandbox

import (
	"testing"
	"time"
)

func TestClockExpires(t *testing.T) {
	c := NewClock(20 * time.Millisecond)
	select {
	case <-c.Expired():
	case <-time.After(5 * time.Second):
		t.Fatal("clock never expired")
	}
	if c.Remaining() != 0 {
		t.Errorf("remaining after expiry: %v", c.Remaining())
	}
}

func TestClockPauseHoldsTheBudget(t *testing.T) {
	// Counting starts at NewClock: a budget a loaded machine cannot spend
	// before the Pause on the next line.
	c := NewClock(2 * time.Second)
	c.Pause()
	c.Pause() // nested
	left := c.Remaining()
	time.Sleep(300 * time.Millisecond)
	select {
	case <-c.Expired():
		t.Fatal("expired while paused")
	default:
	}
	if c.Remaining() != left {
		t.Errorf("budget moved while paused: %v then %v", left, c.Remaining())
	}
	c.Resume()
	time.Sleep(250 * time.Millisecond)
	select {
	case <-c.Expired():
		t.Fatal("expired while still paused once")
	default:
	}
	c.Resume()
	select {
	case <-c.Expired():
	case <-time.After(5 * time.Second):
		t.Fatal("never expired after resume")
	}
}

func TestNilClockNeverExpires(t *testing.T) {
	var c *Clock
	c.Pause()
	c.Resume()
	if c.Expired() != nil || c.Remaining() != 0 {
		t.Error("nil clock should be inert")
	}
}
