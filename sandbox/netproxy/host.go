package netproxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// errBadHost marks a destination the proxy will not even ask about.
var errBadHost = errors.New("invalid destination")

// normalizeHost returns the host as decisions see it: lower-case, no
// trailing dot, an IP literal in canonical form without brackets. Anything
// that is neither an IP literal nor a plain DNS name is refused before any
// question is asked, so the dialog never shows garbage or look-alikes.
func normalizeHost(h string) (string, error) {
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is6() {
			return "", fmt.Errorf("%w: bracketed host %q is not an IPv6 address", errBadHost, h)
		}
	}
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("%w: zoned address %q", errBadHost, h)
		}
		return a.String(), nil
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || len(h) > 253 {
		return "", fmt.Errorf("%w: host name is empty or too long", errBadHost)
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "", fmt.Errorf("%w: bad label in host %q", errBadHost, h)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("%w: host %q has a character outside a-z 0-9 - _ (use its punycode form)", errBadHost, h)
			}
		}
	}
	// A name whose last label is numeric (127.1, 2130706433, 0x7f.1) is an
	// address in disguise that some resolvers would accept: refuse it.
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return "", fmt.Errorf("%w: host %q looks like a numeric address", errBadHost, h)
	}
	return h, nil
}

// parsePort reads a TCP port in 1..65535.
func parsePort(p string) (int, error) {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || strings.TrimLeft(p, "0123456789") != "" {
		return 0, fmt.Errorf("%w: port %q", errBadHost, p)
	}
	return n, nil
}

// newDestination builds a checked Destination.
func newDestination(host string, port int, proto Protocol) (Destination, error) {
	h, err := normalizeHost(host)
	if err != nil {
		return Destination{}, err
	}
	if port < 1 || port > 65535 {
		return Destination{}, fmt.Errorf("%w: port %d", errBadHost, port)
	}
	return Destination{Host: h, Port: port, Protocol: proto}, nil
}

// oneLine makes a reason safe to show in a header or a one-line body.
func oneLine(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u2028' || r == '\u2029' {
			r = ' '
		}
		b.WriteRune(r)
		if b.Len() > 300 {
			b.WriteString("…")
			break
		}
	}
	return strings.TrimSpace(b.String())
}
