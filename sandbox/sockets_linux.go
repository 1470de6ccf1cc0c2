package sandbox

import (
	"github.com/wardenhq/warden/sandbox/linux"
	"github.com/wardenhq/warden/sandbox/protect"
)

// socketCache is the launcher's process-wide socket scanner: it lives as
// long as the launcher, so it can keep what it read.
var socketCache = linux.NewSocketScanner()

// socketsToMask is what a namespaced run must cover: the unix sockets
// outside it (with /dev/null) and the directories it can enter but not list
// (with an empty tmpfs). Landlock ABI 9 refuses connect() to them itself,
// so there is nothing to scan. Sockets that cannot all be masked refuse
// the run.
func socketsToMask(env []string, cwd string, roots []protect.Root) (sockets, hidden []string, err error) {
	if linux.EffectiveLandlockABI() >= 9 {
		return nil, nil, nil
	}
	sockets, hidden, err = socketCache.ToMask(env, cwd, roots)
	if err != nil {
		return nil, nil, refuse("%v", err)
	}
	return sockets, hidden, nil
}
