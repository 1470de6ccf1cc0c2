package textdoc

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// Document is an immutable snapshot of one open editor buffer. Later changes
// make new snapshots, so a job may keep one as long as it likes.
type Document struct {
	URI        protocol.DocumentURI
	Path       string // file system path; empty for non-file URIs (untitled:)
	LanguageID string
	Version    int32
	Text       string

	starts []int
}

// NewDocument is the first snapshot of a document the editor opened.
func NewDocument(u protocol.DocumentURI, lang string, version int32, text string) *Document {
	return &Document{URI: u, Path: URIToPath(u), LanguageID: lang, Version: version, Text: text, starts: LineStarts(text)}
}

// LineCount is the number of lines (a final line break starts an empty line).
func (d *Document) LineCount() int { return len(d.starts) }

// Line returns line i without its line break ("" past the end). It costs
// nothing per call: prefer it to splitting Text.
func (d *Document) Line(i int) string {
	if i < 0 || i >= len(d.starts) {
		return ""
	}
	return d.Text[d.starts[i]:lineEnd(d.Text, d.starts, i)]
}

// Offset converts an LSP position (UTF-16 columns) to a byte offset in Text.
func (d *Document) Offset(p protocol.Position) (int, error) { return offsetOf(d.Text, d.starts, p) }

// PositionAt converts a byte offset in Text to an LSP position.
func (d *Document) PositionAt(offset int) protocol.Position {
	return PositionAt(d.Text, d.starts, offset)
}

// Slice returns the text inside r.
func (d *Document) Slice(r protocol.Range) (string, error) {
	start, err := d.Offset(r.Start)
	if err != nil {
		return "", fmt.Errorf("range start: %w", err)
	}
	end, err := d.Offset(r.End)
	if err != nil {
		return "", fmt.Errorf("range end: %w", err)
	}
	if end < start {
		return "", fmt.Errorf("range end %d:%d is before its start %d:%d", r.End.Line, r.End.Character, r.Start.Line, r.Start.Character)
	}
	return d.Text[start:end], nil
}

// ContentChange is one entry of didChange's contentChanges: a replacement of
// Range, or of the whole document when Range is nil.
type ContentChange struct {
	Range *protocol.Range `json:"range,omitempty"`
	Text  string          `json:"text"`
}

// apply returns the document after changes, all or nothing.
func (d *Document) apply(version int32, changes []ContentChange) (*Document, error) {
	text, starts := d.Text, d.starts
	for i, c := range changes {
		if c.Range == nil {
			text = c.Text
			starts = LineStarts(text)
			continue
		}
		start, err := offsetOf(text, starts, c.Range.Start)
		if err != nil {
			return nil, fmt.Errorf("contentChanges[%d].range.start: %w", i, err)
		}
		end, err := offsetOf(text, starts, c.Range.End)
		if err != nil {
			return nil, fmt.Errorf("contentChanges[%d].range.end: %w", i, err)
		}
		if end < start {
			return nil, fmt.Errorf("contentChanges[%d].range: end %d:%d is before start %d:%d", i, c.Range.End.Line, c.Range.End.Character, c.Range.Start.Line, c.Range.Start.Character)
		}
		var b strings.Builder
		b.Grow(len(text) - (end - start) + len(c.Text))
		b.WriteString(text[:start])
		b.WriteString(c.Text)
		b.WriteString(text[end:])
		text = b.String()
		starts = LineStarts(text)
	}
	return &Document{URI: d.URI, Path: d.Path, LanguageID: d.LanguageID, Version: version, Text: text, starts: starts}, nil
}

// EventKind says what happened to a document.
type EventKind int

const (
	Opened EventKind = iota + 1
	Changed
	Closed
)

func (k EventKind) String() string {
	switch k {
	case Opened:
		return "opened"
	case Changed:
		return "changed"
	case Closed:
		return "closed"
	}
	return "unknown"
}

// Event is delivered to observers after the store changed. For
// Closed, Doc is the last snapshot before the close.
type Event struct {
	Kind EventKind
	Doc  *Document
}

// ErrOutOfSync is returned for a document whose editor copy Warden lost track
// of (a didChange it could not apply). It clears when the editor reopens the
// file or sends its whole text.
var ErrOutOfSync = errors.New("warden's copy of this document is out of sync with the editor")

// Store mirrors the editor's open buffers. It is safe for concurrent use.
type Store struct {
	mu        sync.Mutex
	docs      map[protocol.DocumentURI]*docEntry
	byPath    map[string]protocol.DocumentURI
	observers map[int]func(Event)
	nextObs   int
	changed   chan struct{} // closed and replaced on every change
}

type docEntry struct {
	doc     *Document
	syncErr error // non-nil when a didChange could not be applied
}

// NewStore returns an empty store: no document is open.
func NewStore() *Store {
	return &Store{
		docs:      make(map[protocol.DocumentURI]*docEntry),
		byPath:    make(map[string]protocol.DocumentURI),
		observers: make(map[int]func(Event)),
		changed:   make(chan struct{}),
	}
}

// Get returns the snapshot of an open document. An out-of-sync document
// returns ErrOutOfSync (wrapped with its URI) so nobody works on stale text.
func (s *Store) Get(u protocol.DocumentURI) (*Document, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.docs[u]
	if !ok {
		return nil, fmt.Errorf("%s is not open in the editor", u)
	}
	if e.syncErr != nil {
		return nil, fmt.Errorf("%s: %w (%v); reopen the file in the editor", u, ErrOutOfSync, e.syncErr)
	}
	return e.doc, nil
}

// Open reports whether u is open.
func (s *Store) IsOpen(u protocol.DocumentURI) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.docs[u]
	return ok
}

// ReadFile returns a file's content as the editor has it: the open buffer
// (with its version) if the file is open, else the file on disk (open=false,
// version 0). path is a file system path; relative paths are not accepted.
func (s *Store) ReadFile(path string) (content []byte, version int32, open bool, err error) {
	content, version, open, err = s.Buffer(path)
	if open || err != nil {
		return content, version, open, err
	}
	data, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, 0, false, err
	}
	return data, 0, false, nil
}

// Buffer returns the open buffer of path (absolute) with its version, or
// open=false when the editor does not have it open.
func (s *Store) Buffer(path string) (content []byte, version int32, open bool, err error) {
	if !filepath.IsAbs(path) {
		return nil, 0, false, fmt.Errorf("read %s: want an absolute path", path)
	}
	path = filepath.Clean(path)
	s.mu.Lock()
	var doc *Document
	var syncErr error
	if u, isOpen := s.byPath[path]; isOpen {
		doc, syncErr = s.docs[u].doc, s.docs[u].syncErr
	}
	s.mu.Unlock()
	if syncErr != nil {
		return nil, 0, true, fmt.Errorf("%s: %w (%v); reopen the file in the editor", path, ErrOutOfSync, syncErr)
	}
	if doc != nil {
		return []byte(doc.Text), doc.Version, true, nil
	}
	return nil, 0, false, nil
}

// Version returns the current version of an open document.
func (s *Store) Version(u protocol.DocumentURI) (version int32, open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.docs[u]; ok {
		return e.doc.Version, true
	}
	return 0, false
}

// WaitVersion waits until the document u has reached at least version, and
// returns the version it has then. It returns an error if ctx ends first or
// the document is closed (or was never open).
func (s *Store) WaitVersion(ctx context.Context, u protocol.DocumentURI, version int32) (int32, error) {
	for {
		s.mu.Lock()
		e, ok := s.docs[u]
		var have int32
		if ok {
			have = e.doc.Version
		}
		ch := s.changed
		s.mu.Unlock()
		if !ok {
			return 0, fmt.Errorf("%s is not open in the editor", u)
		}
		if have >= version {
			return have, nil
		}
		select {
		case <-ctx.Done():
			return have, fmt.Errorf("waiting for version %d of %s (has %d): %w", version, u, have, ctx.Err())
		case <-ch:
		}
	}
}

// Changed returns a channel that is closed at the next open, change or close
// of any document. Take it before reading state to never miss an event.
func (s *Store) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// Observe calls fn after every open, change and close, on the goroutine that
// handles editor messages: fn must be quick and must not call the client.
// The returned func stops the observation.
func (s *Store) Observe(fn func(Event)) (stop func()) {
	s.mu.Lock()
	id := s.nextObs
	s.nextObs++
	s.observers[id] = fn
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.observers, id)
		s.mu.Unlock()
	}
}

// All returns snapshots of every open, in-sync document, sorted by URI.
func (s *Store) All() []*Document {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Document, 0, len(s.docs))
	for _, e := range s.docs {
		if e.syncErr == nil {
			out = append(out, e.doc)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return out
}

// Count is the number of open documents.
func (s *Store) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.docs)
}

// Open records a document the editor opened (didOpen), replacing any
// earlier copy and its out-of-sync mark.
func (s *Store) Open(d *Document) {
	s.mu.Lock()
	s.docs[d.URI] = &docEntry{doc: d}
	if d.Path != "" {
		s.byPath[d.Path] = d.URI
	}
	s.notifyLocked(Event{Kind: Opened, Doc: d})
}

// Change applies an editor change. On failure the document is marked out of
// sync (unless a later full-text change or reopen repairs it).
func (s *Store) Change(u protocol.DocumentURI, version int32, changes []ContentChange) (*Document, error) {
	s.mu.Lock()
	e, ok := s.docs[u]
	if !ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("didChange for %s, which is not open: the editor must send didOpen first", u)
	}
	base := e.doc
	if e.syncErr != nil {
		// Only a change that replaces the whole text can repair it.
		last := -1
		for i, c := range changes {
			if c.Range == nil {
				last = i
			}
		}
		if last < 0 {
			s.mu.Unlock()
			return nil, fmt.Errorf("%s: %w; ignoring this change", u, ErrOutOfSync)
		}
		changes = changes[last:]
	}
	next, err := base.apply(version, changes)
	if err != nil {
		e.syncErr = err
		s.mu.Unlock()
		return nil, err
	}
	e.doc, e.syncErr = next, nil
	s.notifyLocked(Event{Kind: Changed, Doc: next})
	return next, nil
}

// MarkOutOfSync records that Warden missed a change to u.
func (s *Store) MarkOutOfSync(u protocol.DocumentURI, reason error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.docs[u]; ok {
		e.syncErr = reason
	}
}

// Close forgets a document the editor closed (didClose).
func (s *Store) Close(u protocol.DocumentURI) error {
	s.mu.Lock()
	e, ok := s.docs[u]
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("didClose for %s, which is not open", u)
	}
	delete(s.docs, u)
	if e.doc.Path != "" && s.byPath[e.doc.Path] == u {
		delete(s.byPath, e.doc.Path)
	}
	s.notifyLocked(Event{Kind: Closed, Doc: e.doc})
	return nil
}

// notifyLocked wakes waiters and calls observers; it unlocks s.mu.
func (s *Store) notifyLocked(ev Event) {
	close(s.changed)
	s.changed = make(chan struct{})
	obs := make([]func(Event), 0, len(s.observers))
	for _, fn := range s.observers {
		obs = append(obs, fn)
	}
	s.mu.Unlock()
	for _, fn := range obs {
		fn(ev)
	}
}

// URIToPath returns the file system path of a file: URI, or "".
func URIToPath(u protocol.DocumentURI) string {
	// uri.URI.Filename panics on a malformed URI; parse it here instead.
	parsed, err := url.Parse(string(u))
	if err != nil || parsed.Scheme != "file" || parsed.Path == "" {
		return ""
	}
	return filepath.Clean(filepath.FromSlash(parsed.Path))
}

// PathToURI returns the file: URI of an absolute path.
func PathToURI(path string) protocol.DocumentURI {
	return protocol.DocumentURI(uri.File(path))
}
