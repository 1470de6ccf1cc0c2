package sandbox

import (
	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/protect"
)

// readsWithoutNamespaces refuses a run whose read policy must hide a path
// that Landlock alone cannot, where there is no mount namespace to hide it
// in: one inside a writable root, whose rule grants everything beneath it.
// Elsewhere the helper's Landlock rules leave the hidden paths out
// (sandbox/linux: addReadsAround).
func readsWithoutNamespaces(p Policy, roots []protect.Root, hide []HiddenPath) error {
	home := p.home()
	for _, h := range hide {
		for _, r := range roots {
			if pathutil.Within(r.Path, h.Target) {
				return refuse("this machine gives the sandbox no mount namespace, and Landlock cannot hide a path inside a writable root: the read policy (%s) hides %s, which lies in the writable root %s; open a workspace that does not hold it, or set read_access = \"full\" (--read-access full) only if commands may read it",
					p.readAccess(), tildePath(home, h.Path), tildePath(home, r.Path))
			}
		}
	}
	return nil
}
