package sandbox

func layersFor(Report) []Layer {
	return []Layer{{Name: "sandbox", Enforced: false, Detail: "Windows has no OS sandbox for Warden yet: read-only and workspace-write refuse to run commands (docs/windows-sandbox.md)"}}
}

func residualGaps(Report) []string {
	return []string{
		"no OS sandbox on Windows: nothing confines a command's writes, reads or network; read-only and workspace-write refuse to run commands",
		"processes a command starts survive a timeout (no job object yet)",
	}
}
