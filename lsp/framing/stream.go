package framing

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// DefaultMaxMessageBytes bounds one incoming message. The largest legitimate
// message is a didOpen of a big file; anything past this is skipped without
// being buffered.
const DefaultMaxMessageBytes = 32 << 20

// maxHeaderLine bounds one header line; longer lines are garbage.
const maxHeaderLine = 4096

// Stream frames JSON-RPC messages with LSP's Content-Length headers. Unlike
// jsonrpc2.NewStream, which fails the whole connection on the first bad byte,
// it reports a malformed message (in the log, and to the client as an error
// response when the message may have been a request), resynchronises on the
// next header and keeps serving. Only the end of input ends the stream.
type Stream struct {
	log    *slog.Logger
	max    int64
	in     *bufio.Reader
	closer io.Closer

	writeMu sync.Mutex
	out     io.Writer

	// OnSkip, if set, hears about a message skipped for its size, with the
	// document URI when one could be found in it.
	OnSkip func(method string, uri protocol.DocumentURI)
}

// New returns a Stream over rwc that skips messages over max bytes (0:
// DefaultMaxMessageBytes).
func New(rwc io.ReadWriteCloser, max int64, log *slog.Logger) *Stream {
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	return &Stream{log: log, max: max, in: bufio.NewReaderSize(rwc, 64<<10), closer: rwc, out: rwc}
}

var _ jsonrpc2.Stream = (*Stream)(nil)

// Read returns the next well-formed message, skipping and reporting bad ones.
func (s *Stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		length, n, err := s.readHeader()
		if err != nil {
			return nil, n, err
		}
		if length > s.max {
			s.skipHuge(length)
			continue
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(s.in, body); err != nil {
			return nil, n, fmt.Errorf("input ended inside a %d-byte message: %w", length, err)
		}
		body = s.trimOverlongBody(body)
		msg, err := jsonrpc2.DecodeMessage(body)
		if err != nil {
			s.rejectBody(body, err)
			continue
		}
		return msg, n + length, nil
	}
}

// readHeader reads one header block and returns its Content-Length. Lines that
// are not headers are skipped (and logged), so input after a broken message is
// resynchronised at the next "Content-Length:".
func (s *Stream) readHeader() (length int64, total int64, err error) {
	length = -1
	var skipped int
	for {
		line, err := s.readLine()
		total += int64(len(line))
		if err != nil {
			if errors.Is(err, io.EOF) && total == 0 {
				return 0, 0, io.EOF
			}
			return 0, total, fmt.Errorf("reading message header: %w", err)
		}
		text := strings.TrimRight(string(line), "\r\n")
		if text == "" {
			if length >= 0 {
				return length, total, nil
			}
			if skipped > 0 {
				s.log.Error("skipped input that is not an LSP message: a header block without a valid Content-Length", "bytes", total)
				s.sendError(nil, jsonrpc2.ParseError, "warden skipped input that was not an LSP message (no valid Content-Length header); each message needs \"Content-Length: N\\r\\n\\r\\n\" before its JSON body")
			}
			total, skipped = 0, 0
			continue
		}
		// A short Content-Length leaves the rest of a body in front of the
		// next header on the same line: resynchronise on the header.
		if i := indexFold(text, "content-length:"); i > 0 {
			s.log.Error("skipped input before a header: the previous message's Content-Length was probably wrong", "skipped", truncate(text[:i], 80))
			text = text[i:]
		}
		name, value, ok := strings.Cut(text, ":")
		if !ok || !isHeaderName(name) {
			skipped++
			s.log.Error("skipped a malformed header line", "line", truncate(text, 80))
			continue
		}
		if strings.EqualFold(name, "Content-Length") {
			v, perr := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if perr != nil || v <= 0 {
				s.log.Error("bad Content-Length header; skipping to the next message", "value", truncate(value, 40))
				s.sendError(nil, jsonrpc2.ParseError, fmt.Sprintf("bad Content-Length %q: want a positive number of bytes", truncate(strings.TrimSpace(value), 40)))
				length = -1
				continue
			}
			length = v
		}
	}
}

// isHeaderName reports whether name looks like an HTTP-style header name.
func isHeaderName(name string) bool {
	if name == "" || !isLetter(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !isLetter(c) && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// readLine reads up to a newline, dropping the rest of over-long lines.
func (s *Stream) readLine() ([]byte, error) {
	line, err := s.in.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || (err == nil && len(line) > maxHeaderLine) {
		dropped := len(line)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = s.in.ReadSlice('\n')
			dropped += len(line)
		}
		s.log.Error("skipped an over-long header line", "bytes", dropped)
		return []byte("\x00garbage\n"), err
	}
	return append([]byte(nil), line...), err
}

// skipHuge discards a message over the size limit without buffering it. The
// request id, when it comes early in the body (as editors send it), gets an
// error reply so the client is not left waiting.
func (s *Stream) skipHuge(length int64) {
	head, _ := s.in.Peek(min(int(length), 4096))
	id := findTopID(head)
	method := findMethod(head)
	uri := findURI(head, false)
	s.log.Error("skipped a message over the size limit", "bytes", length, "limit", s.max, "method", method)
	tail := &tailWriter{keep: 4096}
	if _, err := io.CopyN(tail, s.in, length); err != nil {
		return
	}
	if uri == "" {
		// Editors that sort keys put textDocument after the content.
		uri = findURI(tail.buf, true)
	}
	if s.OnSkip != nil {
		s.OnSkip(method, protocol.DocumentURI(uri))
	}
	msg := fmt.Sprintf("Warden: skipped a %d-byte %s message: the limit is %d bytes", length, orUnknown(method), s.max)
	if id != nil {
		s.sendError(id, jsonrpc2.InvalidRequest, msg)
		return
	}
	s.notify("window/showMessage", map[string]any{"type": 1, "message": msg})
}

// tailWriter discards what it is given but keeps the last keep bytes.
type tailWriter struct {
	keep int
	buf  []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p[max(0, len(p)-w.keep):]...)
	if over := len(w.buf) - w.keep; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	return len(p), nil
}

// trimOverlongBody handles a Content-Length that was too large: when the body
// is one JSON value followed by the start of the next message, the extra bytes
// are pushed back into the input and the first value is kept.
func (s *Stream) trimOverlongBody(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return body
	}
	rest := bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")
	if len(rest) == 0 {
		return body
	}
	if indexFold(string(rest[:min(len(rest), 64)]), "content-length:") != 0 {
		return body
	}
	s.log.Error("Content-Length was larger than the message; re-reading the extra bytes as the next message", "declared", len(body), "actual", dec.InputOffset())
	s.in = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(rest), s.in), 64<<10)
	return body[:dec.InputOffset()]
}

// rejectBody answers a body that is not a JSON-RPC message.
func (s *Stream) rejectBody(body []byte, decodeErr error) {
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' && json.Valid(trimmed) {
		s.log.Error("skipped a JSON-RPC batch")
		s.sendError(nil, jsonrpc2.InvalidRequest, "JSON-RPC batches are not part of LSP: send each message on its own")
		return
	}
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		s.log.Error("skipped a message that is not valid JSON", "err", err, "body", truncate(string(body), 120))
		s.sendError(nil, jsonrpc2.ParseError, "warden could not parse a message as JSON: "+err.Error())
		return
	}
	s.log.Error("skipped a message that is not a valid JSON-RPC 2.0 message", "err", decodeErr, "method", probe.Method)
	s.sendError(probe.ID, jsonrpc2.InvalidRequest, fmt.Sprintf("not a valid JSON-RPC 2.0 message (it needs \"jsonrpc\":\"2.0\", a method or a result, and a number or string id): %v", decodeErr))
}

// Write sends one message.
func (s *Stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return 0, fmt.Errorf("marshaling message: %w", err)
	}
	return s.writeRaw(data)
}

// writeRaw frames data and writes header and body with one write, so the
// client wakes once per message.
func (s *Stream) writeRaw(data []byte) (int64, error) {
	frame := make([]byte, 0, len(data)+32)
	frame = append(frame, "Content-Length: "...)
	frame = strconv.AppendInt(frame, int64(len(data)), 10)
	frame = append(frame, "\r\n\r\n"...)
	frame = append(frame, data...)
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	n, err := s.out.Write(frame)
	if err != nil {
		return int64(n), fmt.Errorf("writing message: %w", err)
	}
	return int64(n), nil
}

// sendError writes an error response; a nil id is written as null, as
// JSON-RPC asks when the request's id could not be read.
func (s *Stream) sendError(id json.RawMessage, code jsonrpc2.Code, message string) {
	if len(id) == 0 || !validID(id) {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": message},
	})
	if _, err := s.writeRaw(data); err != nil {
		s.log.Debug("could not send error response", "err", err)
	}
}

func (s *Stream) notify(method string, params any) {
	data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if _, err := s.writeRaw(data); err != nil {
		s.log.Debug("could not send notification", "err", err)
	}
}

func (s *Stream) Close() error { return s.closer.Close() }

func validID(id json.RawMessage) bool {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// Patterns for the first and last bytes of a message too big to read,
// compiled on first use: they cost start-up time and are rarely needed.
var (
	topID     = lazyRegexp(`^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"]*"\s*,)*\s*"id"\s*:\s*(-?\d+|"[^"]*")`)
	topMethod = lazyRegexp(`"method"\s*:\s*"([^"]+)"`)
	docURI    = lazyRegexp(`"textDocument"\s*:\s*\{[^{}]*?"uri"\s*:\s*"([^"]+)"`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// findURI finds a textDocument's uri in part of a message: the first one, or
// the last when last is set.
func findURI(b []byte, last bool) string {
	all := docURI().FindAllSubmatch(b, -1)
	if len(all) == 0 {
		return ""
	}
	if last {
		return string(all[len(all)-1][1])
	}
	return string(all[0][1])
}

// findTopID finds the id of a message from its first bytes, when it comes
// before params (as every editor writes it).
func findTopID(head []byte) json.RawMessage {
	m := topID().FindSubmatch(head)
	if m == nil {
		return nil
	}
	return json.RawMessage(append([]byte(nil), m[1]...))
}

func findMethod(head []byte) string {
	if m := topMethod().FindSubmatch(head); m != nil {
		return string(m[1])
	}
	return ""
}

func orUnknown(method string) string {
	if method == "" {
		return "(method unknown)"
	}
	return method
}

// indexFold finds an ASCII substr in s ignoring case, in bytes of s (unlike
// strings.ToLower, which changes lengths on invalid UTF-8).
func indexFold(s, substr string) int {
	for i := 0; i+len(substr) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(substr)], substr) {
			return i
		}
	}
	return -1
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
