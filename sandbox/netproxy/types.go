package netproxy

import (
	"context"
	"net"
	"strconv"
	"time"
)

// Protocol is how a sandboxed command reached the proxy.
type Protocol string

const (
	// HTTP is a plain proxied HTTP request (GET http://host/...).
	HTTP Protocol = "http"
	// HTTPS is an HTTP CONNECT tunnel (almost always TLS).
	HTTPS Protocol = "https"
	// SOCKS5 is a SOCKS5 CONNECT (any TCP protocol).
	SOCKS5 Protocol = "socks5-tcp"
)

// Destination is what a decision is about: one host, protocol and port.
// Host is lower-case with no trailing dot; an IPv6 literal has no brackets.
type Destination struct {
	Host     string
	Port     int
	Protocol Protocol
}

// String renders the destination as protocol://host:port.
func (d Destination) String() string {
	return string(d.Protocol) + "://" + net.JoinHostPort(d.Host, strconv.Itoa(d.Port))
}

// Origin is the sandboxed run a connection came from, as the caller that
// started the run described it.
type Origin struct {
	RunID   string
	Command []string
	Workdir string
}

// Request is one question to the Decider.
type Request struct {
	Dest   Destination
	Origin Origin
	// BytesUp is how many bytes this origin has sent through the proxy so far.
	BytesUp int64
}

// Verdict is the Decider's answer. Reason is one line that the refused
// command sees (HTTP 403 body, the result reported to the model).
type Verdict struct {
	Allow  bool
	Reason string
}

// Decider decides whether a destination may be reached. It may block (to
// ask the user); the context ends when the connection or the run does, and
// an ended context must mean a refusal.
type Decider interface {
	Decide(ctx context.Context, req Request) Verdict
}

// Record describes one connection (or refused attempt) for the audit log.
type Record struct {
	Dest      Destination
	Origin    Origin
	Verdict   Verdict
	BytesUp   int64
	BytesDown int64
	Start     time.Time
	Duration  time.Duration
	Err       string
}

// Recorder receives a Record when a connection ends or is refused.
type Recorder interface {
	Record(Record)
}
