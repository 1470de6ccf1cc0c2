//go:build !linux && !windows

package sandbox

import "runtime"

func layersFor(r Report) []Layer {
	if runtime.GOOS == "darwin" {
		return []Layer{{Name: "seatbelt", Enforced: r.Mechanism == "seatbelt", Detail: "sandbox-exec with a generated profile: deny by default, writes only to the writable roots minus protected subpaths, network off unless allowed, reads of the read policy's credential stores denied"}}
	}
	return nil
}

func residualGaps(Report) []string {
	return []string{
		"processes that leave the command's process group survive a timeout (no pid namespace)",
	}
}
