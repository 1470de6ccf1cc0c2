package lazyre

import "testing"

func TestNewCompilesOnceOnFirstUse(t *testing.T) {
	re := New(`^a+$`)
	first := re()
	if !first.MatchString("aaa") || first.MatchString("ab") {
		t.Fatalf("pattern does not match as compiled: %v", first)
	}
	if re() != first {
		t.Fatal("second call compiled again")
	}
}

func TestNewPanicsOnBadExpressionAtFirstUse(t *testing.T) {
	re := New(`(`) // must not panic here
	defer func() {
		if recover() == nil {
			t.Fatal("a bad expression did not panic on first use")
		}
	}()
	re()
}
