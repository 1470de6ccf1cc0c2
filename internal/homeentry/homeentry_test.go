package homeentry

import "testing"

func TestClean(t *testing.T) {
	for in, want := range map[string]string{".npm": ".npm", "~/.cache/foo/": ".cache/foo", " .local/bin ": ".local/bin"} {
		if got, err := Clean(in); err != nil || got != want {
			t.Errorf("Clean(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "~", "~/", ".", "/etc", "~/../x", ".cache/../.."} {
		if got, err := Clean(in); err == nil {
			t.Errorf("Clean(%q) = %q, want an error", in, got)
		}
	}
}
