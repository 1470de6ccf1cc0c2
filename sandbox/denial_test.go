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
