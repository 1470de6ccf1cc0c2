package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// SOCKS5 (RFC 1928) constants the proxy speaks.
const (
	socksVersion = 0x05

	socksNoAuth       = 0x00
	socksNoAcceptable = 0xff

	socksCmdConnect = 0x01

	socksATypIPv4   = 0x01
	socksATypDomain = 0x03
	socksATypIPv6   = 0x04

	socksSucceeded        = 0x00
	socksGeneralFailure   = 0x01
	socksNotAllowed       = 0x02
	socksNetUnreachable   = 0x03
	socksHostUnreachable  = 0x04
	socksConnRefused      = 0x05
	socksCmdNotSupported  = 0x07
	socksATypNotSupported = 0x08
)

// serveSOCKS serves a SOCKS5 client: no-auth method, CONNECT only.
func (cn *clientConn) serveSOCKS(ctx context.Context) {
	dest, err := cn.readSOCKSRequest()
	if err != nil {
		cn.recordMalformed(err)
		return
	}
	cn.c.SetReadDeadline(time.Time{})
	cn.failReply = func() { cn.socksReply(socksGeneralFailure) }
	start := time.Now()
	up, v, err := cn.open(ctx, dest)
	if err != nil {
		cn.socksReply(socksCode(err))
		cn.failReply = nil
		cn.s.record(Record{Dest: dest, Origin: cn.o, Verdict: v, Start: start, Duration: time.Since(start), Err: err.Error()})
		return
	}
	defer up.Close()
	stop := context.AfterFunc(ctx, func() { up.Close() })
	defer stop()
	t := &traffic{origin: cn.st}
	// The bound address is not the proxy's business to reveal: report 0.0.0.0:0.
	if !cn.socksReply(socksSucceeded) {
		cn.failReply = nil
		cn.s.record(Record{Dest: dest, Origin: cn.o, Verdict: v, Start: start, Duration: time.Since(start), Err: "client gone before the reply"})
		return
	}
	cn.failReply = nil
	pending, _ := cn.br.Peek(cn.br.Buffered())
	err = relay(cn.c, pending, up, t)
	rec := Record{Dest: dest, Origin: cn.o, Verdict: v, BytesUp: t.up.Load(), BytesDown: t.down.Load(), Start: start, Duration: time.Since(start)}
	if err != nil {
		rec.Err = err.Error()
	}
	cn.s.record(rec)
}

// readSOCKSRequest reads the greeting and the request and answers the
// greeting; a malformed or unsupported request gets its error reply here.
func (cn *clientConn) readSOCKSRequest() (Destination, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(cn.br, hdr[:]); err != nil {
		return Destination{}, fmt.Errorf("socks greeting: %w", err)
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(cn.br, methods); err != nil {
		return Destination{}, fmt.Errorf("socks greeting methods: %w", err)
	}
	noAuth := false
	for _, m := range methods {
		noAuth = noAuth || m == socksNoAuth
	}
	if !noAuth {
		cn.c.Write([]byte{socksVersion, socksNoAcceptable})
		return Destination{}, errors.New("socks: client offers no no-auth method")
	}
	if _, err := cn.c.Write([]byte{socksVersion, socksNoAuth}); err != nil {
		return Destination{}, fmt.Errorf("socks method reply: %w", err)
	}

	var req [4]byte
	if _, err := io.ReadFull(cn.br, req[:]); err != nil {
		return Destination{}, fmt.Errorf("socks request: %w", err)
	}
	if req[0] != socksVersion {
		cn.socksReply(socksGeneralFailure)
		return Destination{}, fmt.Errorf("socks request: version %d", req[0])
	}
	var host string
	switch req[3] {
	case socksATypIPv4:
		var b [4]byte
		if _, err := io.ReadFull(cn.br, b[:]); err != nil {
			return Destination{}, fmt.Errorf("socks address: %w", err)
		}
		host = netip.AddrFrom4(b).String()
	case socksATypIPv6:
		var b [16]byte
		if _, err := io.ReadFull(cn.br, b[:]); err != nil {
			return Destination{}, fmt.Errorf("socks address: %w", err)
		}
		host = netip.AddrFrom16(b).String()
	case socksATypDomain:
		n, err := cn.br.ReadByte()
		if err != nil {
			return Destination{}, fmt.Errorf("socks address: %w", err)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(cn.br, b); err != nil {
			return Destination{}, fmt.Errorf("socks address: %w", err)
		}
		host = string(b)
	default:
		cn.socksReply(socksATypNotSupported)
		return Destination{}, fmt.Errorf("socks request: address type %d", req[3])
	}
	var pb [2]byte
	if _, err := io.ReadFull(cn.br, pb[:]); err != nil {
		return Destination{}, fmt.Errorf("socks port: %w", err)
	}
	if req[1] != socksCmdConnect {
		// BIND and UDP ASSOCIATE would open the sandbox to inbound traffic
		// and to UDP the proxy cannot decide on per host.
		cn.socksReply(socksCmdNotSupported)
		return Destination{}, fmt.Errorf("socks request: command %d not supported", req[1])
	}
	dest, err := newDestination(host, int(pb[0])<<8|int(pb[1]), SOCKS5)
	if err != nil {
		cn.socksReply(socksNotAllowed)
		return Destination{}, fmt.Errorf("socks request: %w", err)
	}
	return dest, nil
}

// socksReply sends a reply with an all-zero bound address; false when the
// client could not be written to.
func (cn *clientConn) socksReply(code byte) bool {
	_, err := cn.c.Write([]byte{socksVersion, code, 0, socksATypIPv4, 0, 0, 0, 0, 0, 0})
	return err == nil
}

// socksCode maps why a connection failed to the SOCKS5 reply code.
func socksCode(err error) byte {
	var re *refusedError
	var rse *resolveError
	switch {
	case errors.As(err, &re):
		return socksNotAllowed
	case errors.As(err, &rse):
		return socksHostUnreachable
	case errors.Is(err, syscall.ECONNREFUSED):
		return socksConnRefused
	case errors.Is(err, syscall.ENETUNREACH):
		return socksNetUnreachable
	case errors.Is(err, syscall.EHOSTUNREACH):
		return socksHostUnreachable
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return socksHostUnreachable
	}
	return socksGeneralFailure
}
