//go:build !linux

package toolcache

// ProbeOverlay reports why the toolchain caches are not layered here: only
// Linux's overlay filesystem can layer them.
func ProbeOverlay(string) string {
	return "only Linux layers the toolchain caches (overlay); here each workspace's private caches start empty"
}
