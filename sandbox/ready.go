package sandbox

import "sync"

// onceReady wraps Command.Ready so that every start of the run (a spare
// that died is replaced by a fresh helper) waits for the same call, and its
// error refuses the run.
func onceReady(ready func() error) func() error {
	if ready == nil {
		return nil
	}
	return sync.OnceValue(func() error {
		if err := ready(); err != nil {
			return refuse("%v", err)
		}
		return nil
	})
}

// waitReady waits for the run's Ready (Command.Ready).
func (p *Process) waitReady() error {
	if p.ready == nil {
		return nil
	}
	return p.ready()
}
