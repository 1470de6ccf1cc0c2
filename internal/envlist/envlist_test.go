package envlist

import (
	"slices"
	"testing"
)

func TestGetAndSet(t *testing.T) {
	env := []string{"A=1", "AB=2", "A=3"}
	if got := Get(env, "A"); got != "1" {
		t.Errorf("Get A = %q, want the first, 1", got)
	}
	if got := Get(env, "B"); got != "" {
		t.Errorf("Get B = %q, want empty", got)
	}
	env = Set(env, "AB", "x")
	env = Set(env, "C", "y")
	if want := []string{"A=1", "AB=x", "A=3", "C=y"}; !slices.Equal(env, want) {
		t.Errorf("after Set: %q, want %q", env, want)
	}
}
