package sandbox

import "testing"

func TestDetectDenial(t *testing.T) {
	cases := []struct {
		sandboxed bool
		code, sig int
		out       string
		want      bool
	}{
		{true, 0, 0, "permission denied", false},
		{false, 1, 0, "permission denied", false},
		{true, 1, 0, "touch: cannot touch '/etc/x': Read-only file system", true},
		{true, 1, 0, "curl: (7) Couldn't connect: Operation not permitted", true},
		{true, 127, 0, "sh: foo: not found", false},
		{true, 2, 0, "usage", false},
		{true, 159, 31, "", true},
		{true, 1, 0, "tests failed", false},
		{true, 255, 0, "error: could not write config file /w/.git/config: Device or resource busy", true},
	}
	for _, c := range cases {
		got, reason := detectDenial(c.sandboxed, c.code, c.sig, []byte(c.out))
		if got != c.want || (got && reason == "") {
			t.Errorf("%+v: got %v %q", c, got, reason)
		}
	}
}

// TestDenialEvidence: the quoted line is the one that matched, wherever it
// sits, not the last line; with no marker there is none.
func TestDenialEvidence(t *testing.T) {
	cases := []struct{ stderr, stdout, want string }{
		{"Cloning into 'b'...\nerror: could not lock config file b/.git/config: Read-only file system\nfatal: Failed to clone 'b' a second time\n", "", "error: could not lock config file b/.git/config: Read-only file system"},
		{"building\n  touch: cannot touch 'x': Permission denied  \n", "", "touch: cannot touch 'x': Permission denied"},
		{"tests failed\n", "curl: (7) Couldn't connect: Operation not permitted\nmore\n", "curl: (7) Couldn't connect: Operation not permitted"},
		{"tests failed\n", "", ""},
	}
	for _, c := range cases {
		if got := DenialEvidence([]byte(c.stderr), []byte(c.stdout)); got != c.want {
			t.Errorf("%q %q: got %q, want %q", c.stderr, c.stdout, got, c.want)
		}
	}
}
