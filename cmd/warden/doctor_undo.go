package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox"
)

// doctorUndo is the undo history's size on disk: the recorded changes of
// every workspace and the file contents kept for them.
type doctorUndo struct {
	Dir        string `json:"dir"`
	Changes    int    `json:"changes"`
	Workspaces int    `json:"workspaces"`
	StoreBytes int64  `json:"store_bytes"`
	Blobs      int    `json:"store_blobs"`
	CapBytes   int64  `json:"store_cap_bytes"`
	Clear      string `json:"clear"`
	// Commands says how a sandboxed command's changes are found here.
	Commands string `json:"commands"`
}

func undoReport() doctorUndo {
	dir := filepath.Join(config.StateDir(), "checkpoints")
	cps := patch.NewCheckpoints(dir)
	r := doctorUndo{Dir: dir, CapBytes: patch.DefaultStoreCap, Clear: "warden undo --clear",
		Commands: "listed before and after each run (one stat per workspace file)"}
	if sandbox.RecordsWrites(sandbox.Policy{Mode: sandbox.WorkspaceWrite}) {
		r.Commands = "reported by the sandbox as they happen (seccomp user notification): a record costs what the command changes"
	}
	r.StoreBytes, r.Blobs = cps.Store().Usage()
	roots, _ := os.ReadDir(dir)
	for _, root := range roots {
		if !root.IsDir() || root.Name() == "store" {
			continue
		}
		entries, _ := os.ReadDir(filepath.Join(dir, root.Name()))
		n := 0
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".json") {
				n++
			}
		}
		if n > 0 {
			r.Workspaces++
			r.Changes += n
		}
	}
	return r
}

func printUndo(w io.Writer, r doctorUndo) {
	fmt.Fprintf(w, "\nundo history (%s): %d recorded changes in %d workspaces; file contents kept: %s in %d files (at most %s, oldest dropped first); clear with `%s`\n",
		r.Dir, r.Changes, r.Workspaces, humanBytes(r.StoreBytes), r.Blobs, humanBytes(r.CapBytes), r.Clear)
	fmt.Fprintf(w, "  what a sandboxed command changes: %s\n", r.Commands)
}
