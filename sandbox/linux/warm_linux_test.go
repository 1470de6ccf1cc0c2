package linux

import (
	"encoding/json"
	"testing"
)

func TestWarmSpecDecodes(t *testing.T) {
	var s Spec
	if err := json.Unmarshal([]byte(warmSpec), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Roots) != 1 || len(s.Roots[0].Protected) != 1 || !s.Layers.Namespaces || s.Mode == "" {
		t.Fatalf("warmSpec leaves fields unset: %+v", s)
	}
}
