// Package framing reads and writes the server's JSON-RPC messages with LSP's
// Content-Length headers, and survives bad input: a malformed header or body
// is logged and answered with an error response when it may have been a
// request, an oversized message is skipped without being buffered (OnSkip
// hears of it), and reading resynchronises on the next header. Only the end of
// input ends a Stream.
package framing
