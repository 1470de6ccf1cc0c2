package main

import (
	"fmt"
	"io"

	"github.com/wardenhq/warden/agent/patch"
	"github.com/wardenhq/warden/approvals/command"
)

// doctorInterrupted is what doctor did about the changes killed Wardens
// left half done, in any workspace.
type doctorInterrupted struct {
	Journal   string   `json:"journal"`
	Recovered []string `json:"recovered"`
	Error     string   `json:"error,omitempty"`
}

func interruptedReport() doctorInterrupted {
	r := doctorInterrupted{Journal: patch.JournalDir(), Recovered: []string{}}
	done, err := patch.Recover(r.Journal)
	for _, d := range done {
		r.Recovered = append(r.Recovered, d.String())
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}

func printInterrupted(w io.Writer, r doctorInterrupted) {
	if len(r.Recovered) == 0 && r.Error == "" {
		fmt.Fprintf(w, "\ninterrupted changes: none (journal %s)\n", r.Journal)
		return
	}
	fmt.Fprintf(w, "\ninterrupted changes (journal %s):\n", r.Journal)
	for _, d := range r.Recovered {
		fmt.Fprintf(w, "  - %s\n", command.EscapeLines(d))
	}
	if r.Error != "" {
		fmt.Fprintf(w, "  - NOT settled: %s\n", command.EscapeLines(r.Error))
	}
}
