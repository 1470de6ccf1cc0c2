package sandbox

// waitReady calls the run's Ready (Command.Ready): nothing may start before
// it returns, and an error refuses the run.
func (p *Process) waitReady() error {
	if p.ready == nil {
		return nil
	}
	ready := p.ready
	p.ready = nil // once: a retried start does not wait again
	if err := ready(); err != nil {
		return refuse("%v", err)
	}
	return nil
}
