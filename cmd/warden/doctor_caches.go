package main

import (
	"fmt"
	"io"
	"os"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

// doctorCaches lists the sandbox's private toolchain caches.
type doctorCaches struct {
	Root    string          `json:"root"`
	MaxSize int64           `json:"max_size"` // 0: no cap
	Total   int64           `json:"total"`
	Sets    []toolcache.Set `json:"sets"`
	Error   string          `json:"error,omitempty"`
	// SecondSources says which tools also read the user's own caches.
	SecondSources string `json:"second_sources"`
	// Layered says whether each set is layered on the user's caches (the
	// private layer is the set's size); Unlayered says why not.
	Layered   bool        `json:"layered"`
	Unlayered string      `json:"unlayered,omitempty"`
	User      []userLayer `json:"user_layers"`
}

// userLayer is one of the user's caches, read-only under every set.
type userLayer struct {
	Tool string `json:"tool"`
	Path string `json:"path"`
	Size int64  `json:"size"`
}

func cacheReport() doctorCaches {
	d := doctorCaches{Root: config.ToolchainCaches(), MaxSize: config.DefaultCacheMaxSize, Sets: []toolcache.Set{}, SecondSources: secondSources, User: []userLayer{}}
	d.Unlayered = toolcache.ProbeOverlay("")
	if d.Layered = d.Unlayered == ""; d.Layered {
		d.SecondSources = layeredSources
		home, _ := os.UserHomeDir()
		for _, t := range toolcache.UserCaches(os.Environ(), home) {
			if st, err := os.Stat(t.User); err == nil && st.IsDir() {
				d.User = append(d.User, userLayer{Tool: t.Name, Path: t.User, Size: toolcache.TreeSize(t.User)})
			}
		}
	}
	if cfg, err := config.Load(config.File()); err == nil {
		d.MaxSize = cfg.CacheLimit()
	}
	if d.Root == "" {
		d.Error = "no toolchain caches: the cache directory falls inside Warden's configuration or state"
		return d
	}
	sets, err := toolcache.ListSets(d.Root)
	if err != nil {
		d.Error = err.Error()
	}
	for _, s := range sets {
		d.Total += s.Size
		d.Sets = append(d.Sets, s)
	}
	return d
}

func printCaches(w io.Writer, d doctorCaches) {
	limit := "no cap"
	if d.MaxSize > 0 {
		limit = "cap " + humanSize(d.MaxSize) + " (cache_max_size), least recently used evicted"
	}
	fmt.Fprintf(w, "\ntoolchain caches of sandboxed commands: %s, %s in all; %s\n", d.Root, humanSize(d.Total), limit)
	if d.Error != "" {
		fmt.Fprintf(w, "  - %s\n", d.Error)
	}
	for i := len(d.Sets) - 1; i >= 0; i-- { // most recently used first
		s := d.Sets[i]
		fmt.Fprintf(w, "  - %s  %s, last used %s\n", s.Workspace, humanSize(s.Size), s.LastUsed.Format("2006-01-02 15:04"))
	}
	if d.Layered {
		fmt.Fprintln(w, "  each is the private layer over the user's caches, read-only underneath (overlay):")
		for _, u := range d.User {
			fmt.Fprintf(w, "    %s  %s  %s\n", u.Tool, u.Path, humanSize(u.Size))
		}
	} else {
		fmt.Fprintf(w, "  not layered on the user's caches: %s; each workspace's caches start empty\n", d.Unlayered)
	}
	fmt.Fprintln(w, "  clear them with: warden cache clean [--workspace D]")
	fmt.Fprintln(w, "  "+d.SecondSources)
}

// layeredSources says what the layers give each tool.
const layeredSources = "read-only from the user's caches too, through the layers: Go build and modules, npm, yarn, pnpm (store and metadata), pip, uv, cargo registry and git sources, Gradle, Maven's local repository (~/.m2/repository, never ~/.m2's settings)"

// secondSources says which tools read the user's own cache too, without
// the layers.
const secondSources = "read-only from the user's caches too: Go modules (GOPROXY file://…/cache/download first) and Maven (~/.m2/repository as a tail); npm, yarn, pnpm, pip, uv, cargo and Gradle cannot read a second cache safely and download once per workspace"

func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
