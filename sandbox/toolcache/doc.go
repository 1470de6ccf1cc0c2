// Package toolcache owns the sandbox's private toolchain caches: one cache
// set per workspace under a root (SetDir, ListSets, Evict), the
// variables that point each tool at it (Env) and its preparation (Prepare).
//
// It also layers each toolchain cache of a sandboxed run: the
// user's own cache read-only underneath, the workspace's private cache on
// top (an overlay mount in the sandbox's mount namespace), so a new
// workspace starts warm and every write lands in the private layer, never
// in the user's cache or another workspace's.
//
// An overlay's upper directory may serve one mount at a time, and runs of
// one workspace overlap (a test watcher beside a build). The first run
// takes the set's lock and mounts the private layer as its upper; a run
// that finds the lock held stacks the private layer read-only on the
// user's, under a scratch upper of its own that is dropped when it ends:
// it starts as warm as the first, and only what it alone built is lost.
// Where the kernel refuses the mount the private cache is used as it is.
package toolcache
