package lsp

import (
	"path/filepath"

	"github.com/wardenhq/warden/config"
)

// ownDir names the Warden directory that holds path: "state" (transcripts,
// the audit log, checkpoints) or "config" (config.toml, rules), or "" for
// any other file. Warden's own files are never an agent's file context: a
// transcript quoted back to the model would feed it its own past output as
// the user's, and the audit log and rules are not the user's code.
func ownDir(path string) string {
	for _, d := range []struct{ name, dir string }{{"state", config.StateDir()}, {"config", config.ConfigDir()}} {
		if within(path, d.dir) {
			return d.name
		}
	}
	return ""
}

// within reports whether path is dir or below it, as written or with
// symbolic links resolved on either side.
func within(path, dir string) bool {
	if isWithin(path, dir) {
		return true
	}
	rp, err1 := filepath.EvalSymlinks(path)
	rd, err2 := filepath.EvalSymlinks(dir)
	return err1 == nil && err2 == nil && isWithin(rp, rd)
}
