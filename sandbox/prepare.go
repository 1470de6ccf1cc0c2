package sandbox

import "github.com/wardenhq/warden/sandbox/protect"

// PrepareRun starts, in a process about to run one command under pol, the
// parts of the sandbox's set-up that depend on neither the command nor its
// approval: the scan of the writable roots for nested repositories, and
// the helper's start (Linux; helper as Command.Helper). The caller goes on
// with its own start-up (configuration, rules, audit log) meanwhile; the run
// that follows takes both. A run that never comes wastes the work and
// nothing else: the helper waits for a spec, and ends when this process
// does.
func PrepareRun(pol Policy, helper string) {
	if pol.Validate() != nil {
		return
	}
	prestartHelper(pol, helper)
	if pol.mode() == WorkspaceWrite && scansRoots() {
		if roots, err := pol.Roots(); err == nil {
			protect.ScanRoots(roots, true, nil)
		}
	}
}

// StartHelper is the first half of PrepareRun, for a caller that knows the
// sandbox's mode and network before the rest of the policy: the helper's
// start is the longest step of a one-shot run's set-up, and it needs only
// those two. Nothing else of pol counts; PrepareRun after it starts no
// second helper.
func StartHelper(pol Policy, helper string) {
	if pol.Validate() == nil {
		prestartHelper(pol, helper)
	}
}
