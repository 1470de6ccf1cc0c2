package netproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"
)

// ReasonPrivate is the reason given when an approved host name resolves to
// a loopback, private or otherwise non-public address.
const ReasonPrivate = "resolves to a private address"

// refusedError is a destination refused by the Decider or by the
// private-address check; Reason is the line the client sees.
type refusedError struct {
	Reason string
	Detail string // for the audit only
}

func (e *refusedError) Error() string {
	if e.Detail != "" {
		return "refused: " + e.Reason + " (" + e.Detail + ")"
	}
	return "refused: " + e.Reason
}

// resolveError is an approved name that did not resolve.
type resolveError struct{ err error }

func (e *resolveError) Error() string { return "resolve: " + e.err.Error() }
func (e *resolveError) Unwrap() error { return e.err }

// open decides dest, then resolves it, checks the addresses and connects
// to one of those very addresses. Nothing is resolved or dialled before
// the Decider allowed dest. The verdict is what the audit records.
func (cn *clientConn) open(ctx context.Context, dest Destination) (net.Conn, Verdict, error) {
	cn.dest = dest
	var v Verdict
	cn.awaitDecision(ctx, func(ctx context.Context) {
		v = cn.s.decider.Decide(ctx, Request{Dest: dest, Origin: cn.o, BytesUp: cn.st.bytesUp.Load()})
		if ctx.Err() != nil && v.Allow {
			// An ended context means a refusal, whatever came back.
			v = Verdict{Reason: "the connection or the run ended while the decision was pending"}
		}
	})
	v.Reason = oneLine(v.Reason)
	if !v.Allow {
		if v.Reason == "" {
			v.Reason = "refused by policy"
		}
		cn.st.refuse(dest, v.Reason, time.Now())
		return nil, v, &refusedError{Reason: v.Reason}
	}
	if ctx.Err() != nil {
		return nil, v, ctx.Err()
	}

	dctx, cancel := context.WithTimeout(ctx, cn.s.opts.DialTimeout)
	defer cancel()
	addrs, err := cn.resolve(dctx, dest)
	if err != nil {
		var re *refusedError
		if errors.As(err, &re) {
			cn.st.refuse(dest, re.Reason, time.Now())
			return nil, Verdict{Reason: re.Reason}, err
		}
		return nil, v, err
	}
	var errs []error
	for i, a := range addrs {
		c, err := cn.dialOne(dctx, a, dest.Port, len(addrs)-i)
		if err == nil {
			return c, v, nil
		}
		errs = append(errs, err)
		if dctx.Err() != nil {
			break
		}
	}
	return nil, v, fmt.Errorf("connect %s: %w", dest, errors.Join(errs...))
}

// resolve returns the addresses an approved destination may be reached
// at. An IP literal or localhost was approved as such and may be private;
// a name must resolve only to public addresses (one private answer refuses
// it all: no DNS rebinding onto the user's own services).
func (cn *clientConn) resolve(ctx context.Context, dest Destination) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(dest.Host); err == nil {
		return []netip.Addr{a}, nil
	}
	if dest.Host == "localhost" {
		return []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}, nil
	}
	addrs, err := cn.s.opts.Resolver.LookupNetIP(ctx, "ip", dest.Host)
	if err != nil {
		return nil, &resolveError{err: err}
	}
	if len(addrs) == 0 {
		return nil, &resolveError{err: fmt.Errorf("no address for %s", dest.Host)}
	}
	for _, a := range addrs {
		if isPrivate(a) && (cn.s.opts.AllowPrivate == nil || !cn.s.opts.AllowPrivate(dest.Host, a)) {
			return nil, &refusedError{Reason: ReasonPrivate, Detail: dest.Host + " resolved to " + a.String()}
		}
	}
	return addrs, nil
}

// dialOne connects to one checked address, leaving the addresses after it
// a share of the time left (so one black-holed address cannot use it all).
func (cn *clientConn) dialOne(ctx context.Context, a netip.Addr, port, left int) (net.Conn, error) {
	if dl, ok := ctx.Deadline(); ok && left > 1 {
		share := max(time.Until(dl)/time.Duration(left), 2*time.Second)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, share)
		defer cancel()
	}
	return cn.s.opts.Dialer.DialContext(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
}
