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

// TestOfflineDenial: with the network off, a tool that says it could not
// reach the network failed for want of it, errno or not; success, or a
// failure that does not say so, is no denial.
func TestOfflineDenial(t *testing.T) {
	cases := []struct {
		code int
		out  string
		want bool
	}{
		{6, "curl: (6) Could not resolve host: pkg.test", true},
		{7, "curl: (7) Failed to connect to 127.0.0.1 port 80 after 0 ms: Couldn't connect to server", true},
		{128, "fatal: unable to access 'https://github.com/a/b/': Could not resolve host: github.com", true},
		{1, "npm ERR! request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org", true},
		{4, "wget: unable to resolve host address 'pkg.test'", true},
		{0, "curl: (6) Could not resolve host: pkg.test", false},
		{1, "3 tests failed", false},
	}
	for _, c := range cases {
		got, reason := offlineDenial(c.code, []byte(c.out))
		if got != c.want || (got && reason == "") {
			t.Errorf("%+v: got %v %q", c, got, reason)
		}
		if c.want && DenialEvidence([]byte(c.out)) != c.out {
			t.Errorf("%+v: evidence %q", c, DenialEvidence([]byte(c.out)))
		}
	}
}
