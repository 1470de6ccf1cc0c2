package rules

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/wardenhq/warden/sandbox"
)

// RuleBook holds the rules currently in force. It reloads them when asked or
// when a rules file changes; a reload that fails keeps the last good rules
// and reports why. Only when no good set was ever loaded does evaluation fall
// back to asking for anything not known-safe.
type RuleBook struct {
	sources []RuleSource
	files   []string

	mu   sync.RWMutex
	set  *RuleSet
	err  error // the last load's error, nil when it succeeded
	good bool  // set came from a successful load
}

// NewRuleBook loads the rules from the directories and explicit files. The
// returned book is usable even when the load failed; the error says why.
func NewRuleBook(sources []RuleSource, files []string) (*RuleBook, error) {
	b := &RuleBook{sources: sources, files: files}
	return b, b.Reload()
}

// UserSources lists the rule directories for a workspace: the Codex rules
// directory (when configured), the user's rules directory, and the
// .warden/rules of the workspace root and the directories above it, each of
// which may only tighten unless trusted(its directory) (see
// WorkspaceRuleSources).
func UserSources(userDir, codexDir, workspace string, trusted func(dir string) bool) []RuleSource {
	var out []RuleSource
	if codexDir != "" {
		out = append(out, RuleSource{Dir: codexDir, Trust: TrustFull})
	}
	out = append(out, RuleSource{Dir: userDir, Trust: TrustFull})
	return append(out, WorkspaceRuleSources(workspace, trusted)...)
}

// BookOf is a book that always holds set, as if loaded from files: for
// callers that build their rules in memory.
func BookOf(set *RuleSet) *RuleBook { return &RuleBook{set: set, good: true} }

// Reload reads every source and explicit file again, into one set (so a
// host_executable or network_rule in a --rules file counts like one in a
// rules directory). On failure the previous good rules stay.
func (b *RuleBook) Reload() error {
	set, err := loadRules(b.sources, b.files)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.err = err
	if err == nil {
		b.set, b.good = set, true
	}
	return err
}

// Current returns the rules in force and, when no good set was ever loaded,
// the error that evaluation must treat as "ask".
func (b *RuleBook) Current() (*RuleSet, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if !b.good {
		return nil, b.err
	}
	return b.set, nil
}

// LastError is the most recent load error (nil after a good load).
func (b *RuleBook) LastError() error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.err
}

// AddAllow puts a just-persisted allow rule into force without a reload.
func (b *RuleBook) AddAllow(prefix []string, file string, grant *sandbox.Grant) {
	r := &Rule{Decision: Allow, Source: filepath.Base(file), File: file, Grant: grant}
	for _, t := range prefix {
		r.Pattern = append(r.Pattern, []string{t})
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.set = b.set.With(r)
}

// Watch reloads the rules whenever a *.rules file in a source directory
// changes, until ctx ends. report is called after each reload with its
// result (nil on success). Directories that do not exist yet are watched
// from their nearest existing parent so a newly created rules directory is
// noticed.
func (b *RuleBook) Watch(ctx context.Context, report func(error)) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch rules: %w", err)
	}
	watched := map[string]bool{}
	addWatches := func() {
		for _, dir := range b.watchDirs() {
			if watched[dir] {
				continue
			}
			if err := w.Add(dir); err == nil {
				watched[dir] = true
			}
		}
	}
	addWatches()
	go func() {
		defer w.Close()
		var timer *time.Timer
		fire := make(chan struct{}, 1)
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if !strings.HasSuffix(ev.Name, ".rules") && !b.isSourceDir(ev.Name) {
					continue
				}
				// Editors write in bursts (truncate, write, rename): settle first.
				if timer != nil {
					timer.Stop()
				}
				timer = time.AfterFunc(50*time.Millisecond, func() {
					select {
					case fire <- struct{}{}:
					default:
					}
				})
			case <-fire:
				addWatches()
				err := b.Reload()
				if report != nil {
					report(err)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				if report != nil {
					report(fmt.Errorf("watch rules: %w", err))
				}
			}
		}
	}()
	return nil
}

// isSourceDir reports whether p is a source directory or one of its
// parents: a rules directory is often made with its parents at once
// (mkdir -p), and only the first one's creation is seen from the nearest
// directory that existed.
func (b *RuleBook) isSourceDir(p string) bool {
	p = filepath.Clean(p)
	for _, s := range b.sources {
		d := filepath.Clean(s.Dir)
		if s.Dir != "" && (d == p || strings.HasPrefix(d, p+string(filepath.Separator))) {
			return true
		}
	}
	return false
}

// watchDirs are the source directories, or their nearest existing parent,
// and the directories of explicit files.
func (b *RuleBook) watchDirs() []string {
	var out []string
	for _, s := range b.sources {
		if s.Dir == "" {
			continue
		}
		d := s.Dir
		for {
			if info, err := os.Stat(d); err == nil && info.IsDir() {
				out = append(out, d)
				break
			} else if err != nil && !errors.Is(err, os.ErrNotExist) {
				break
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
	}
	for _, f := range b.files {
		if info, err := os.Stat(f); err == nil && info.IsDir() {
			out = append(out, f) // --rules DIR: its *.rules files
			continue
		}
		out = append(out, filepath.Dir(f))
	}
	return out
}
