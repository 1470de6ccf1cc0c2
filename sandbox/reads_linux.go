package sandbox

import (
	"strings"
)

// readsNeedNamespaces refuses a run that must hide something when there is
// no mount namespace to hide it in: Landlock alone cannot take a path away
// from a command that may read the rest of the tree.
func readsNeedNamespaces(p Policy, hide []HiddenPath) error {
	if len(hide) == 0 {
		return nil
	}
	home := p.home()
	names := make([]string, 0, len(hide))
	for _, h := range hide {
		names = append(names, tildePath(home, h.Path))
	}
	return refuse("this machine gives the sandbox no mount namespace, so the read policy (%s) cannot hide %s; run with read_access = \"full\" (--read-access full) only if the command may read them",
		p.readAccess(), strings.Join(names, ", "))
}
