package netproxy

import (
	"context"
	"net"
	"net/netip"
	"time"
)

// Resolver turns a host name into addresses. *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer opens the upstream connection. *net.Dialer implements it. The
// proxy only ever passes it an IP:port, never a name.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Options tune a Server. The zero value is what production uses.
type Options struct {
	// DialTimeout bounds resolving and connecting to an approved
	// destination (default 10s).
	DialTimeout time.Duration
	// HandshakeTimeout bounds reading the first request of a connection:
	// the SOCKS greeting and request, or the first HTTP request header
	// (default 30s).
	HandshakeTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a kept-alive
	// HTTP connection (default 90s).
	IdleTimeout time.Duration
	// MaxHeaderBytes caps one HTTP request header (default 64 KiB).
	MaxHeaderBytes int
	// Resolver resolves approved host names (default net.DefaultResolver).
	Resolver Resolver
	// Dialer connects to checked addresses (default a plain net.Dialer).
	Dialer Dialer
	// AllowPrivate, when set, lets an approved host name reach a private
	// address it resolved to. Tests set it to reach servers on 127.0.0.1
	// by name; production leaves it nil so no name can be rebound onto the
	// user's own services.
	AllowPrivate func(host string, addr netip.Addr) bool
}

const (
	defaultDialTimeout      = 10 * time.Second
	defaultHandshakeTimeout = 30 * time.Second
	defaultIdleTimeout      = 90 * time.Second
	defaultMaxHeaderBytes   = 64 << 10
)

func (o Options) withDefaults() Options {
	if o.DialTimeout <= 0 {
		o.DialTimeout = defaultDialTimeout
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = defaultHandshakeTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = defaultIdleTimeout
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = defaultMaxHeaderBytes
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.Dialer == nil {
		o.Dialer = &net.Dialer{}
	}
	return o
}

// StaticResolver resolves from a fixed map of host to addresses and fails
// for any other name. It is for tests (pair it with Options.AllowPrivate);
// production uses the system resolver.
type StaticResolver map[string][]netip.Addr

// LookupNetIP implements Resolver.
func (r StaticResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range r[host] {
		switch {
		case network == "ip4" && !a.Unmap().Is4(), network == "ip6" && !a.Is6():
			continue
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}
