package main

import (
	"slices"
	"time"
)

// medianMs is the median of d in milliseconds (d is sorted in place).
func medianMs(d []time.Duration) float64 {
	slices.Sort(d)
	return msOf(d[len(d)/2])
}

// msOf is d in milliseconds, to the microsecond.
func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
