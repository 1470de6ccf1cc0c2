package sandbox

func sandboxName() string { return "none" }

// launch refuses: Warden runs commands only where it can sandbox them or
// at least kill what they leave behind.
func (p *Process) launch(c Command, path string, env []string) error {
	return refuse("Warden cannot run commands on Windows")
}

func (p *Process) killTree() {}
