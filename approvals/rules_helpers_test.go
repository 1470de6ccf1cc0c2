package approvals

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wardenhq/warden/approvals/rules"
)

func writeRules(t *testing.T, dir, name, body string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustParse(t *testing.T, src string) *rules.ParsedRules {
	t.Helper()
	p, err := rules.ParseRules("t.rules", []byte(src))
	if err != nil {
		t.Fatalf("ParseRules: %v\n%s", err, src)
	}
	return p
}
