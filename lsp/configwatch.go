package lsp

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/config"
)

// watchConfigFile reloads config.toml when it changes, for the life of the
// connection. Only the keys that changed in the file are applied, so
// settings the editor sent for other keys stay. A broken edit changes
// nothing and is reported; the last good settings stay in force. (Exec-
// policy rules are watched by their approvals.RuleBook.)
func (s *Server) watchConfigFile() {
	path := config.File()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.log.Warn("config.toml is not watched", "err", err)
		return
	}
	// Watch the directory: editors replace the file by renaming over it.
	// If it does not exist yet, watch its parent until it is created.
	dir := filepath.Dir(path)
	var settle <-chan time.Time
	if err := w.Add(dir); err != nil {
		if err := w.Add(filepath.Dir(dir)); err != nil {
			w.Close()
			s.log.Info("config.toml is not watched: neither its directory nor the parent exists", "dir", dir)
			return
		}
		// The directory may have been created between the two calls, its
		// event lost before the parent was watched: look once more.
		if w.Add(dir) == nil {
			settle = time.After(50 * time.Millisecond)
		}
	}
	last := s.opts.Config
	go func() {
		defer w.Close()
		for {
			select {
			case <-s.connCtx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				switch filepath.Clean(ev.Name) {
				case filepath.Clean(dir):
					if ev.Has(fsnotify.Create) {
						w.Add(dir)
						settle = time.After(50 * time.Millisecond)
					}
				case filepath.Clean(path):
					settle = time.After(50 * time.Millisecond)
				}
			case <-settle:
				next, err := config.Load(path)
				if err != nil {
					s.client.ShowMessage(protocol.MessageTypeWarning, fmt.Sprintf("Warden: config.toml not reloaded, keeping the current settings: %v", err))
					continue
				}
				prev := last
				if err := s.UpdateConfig(func(c *config.Config) error {
					c.ApplyChanged(prev, next)
					return nil
				}); err != nil {
					s.client.ShowMessage(protocol.MessageTypeWarning, fmt.Sprintf("Warden: config.toml not reloaded: %v", err))
					continue
				}
				last = next
				s.log.Info("config.toml reloaded")
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				s.log.Warn("watching config.toml", "err", err)
			}
		}
	}()
}
