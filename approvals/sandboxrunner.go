package approvals

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/sandbox"
)

// SandboxRunner is the Runner that runs attempts through package sandbox: a
// sandboxed attempt under the request's sandbox, an escalated one with no
// sandbox at all.
type SandboxRunner struct {
	// Env is the environment policy commands get.
	Env sandbox.EnvPolicy
	// Helper is the warden binary that re-executes itself as the sandbox
	// helper; empty means this executable.
	Helper string
	// OnNotEnforced, if set, hears what this machine could not enforce for a
	// sandboxed run (an attempt with gaps still ran: the sandbox refuses
	// outright only what it cannot enforce at all).
	OnNotEnforced func(gaps []string)
	// Network, if set, serves the proxy connections of a sandboxed attempt
	// under network ask; without it such an attempt is refused.
	Network *NetworkProxy
	// Changes, if set, records what each attempt that can write changes
	// in the workspace, for undo.
	Changes *ChangeLog
}

// Run implements Runner. A *sandbox.RefusedError means nothing started.
func (r *SandboxRunner) Run(ctx context.Context, spec RunSpec) (RunResult, error) {
	pol, err := spec.Sandbox.Policy().WithGrant(spec.Grant)
	if err != nil && !spec.Unsandboxed {
		return RunResult{ExitCode: -1}, &sandbox.RefusedError{Reason: "additional permissions: " + err.Error()}
	}
	if spec.Unsandboxed {
		pol = sandbox.Policy{Mode: sandbox.DangerFullAccess, Network: sandbox.NetworkOn}
	}
	var proxy sandbox.ProxyHandler
	var run *runProxy
	if r.Network != nil && pol.NetworkMode() == sandbox.NetworkAsk {
		var stop context.CancelFunc
		ctx, stop = context.WithCancel(ctx)
		defer stop()
		var done func()
		run, done = r.Network.forRun(spec, stop)
		proxy = run
		defer done()
	}
	// Reported by the sandbox as they happen, or listed while it prepares.
	rec := r.Changes.start(spec, !spec.Unsandboxed && sandbox.RecordsWrites(pol))
	spec.Ready = rec.before(spec.Ready)
	res, err := sandbox.Run(ctx, sandbox.Command{
		Proxy: proxy,
		Argv:  spec.Argv, Cwd: spec.Cwd, Policy: pol, Env: r.Env, Timeout: spec.Timeout, Helper: r.Helper,
		Ready: spec.Ready, Record: rec.sandboxRecord(),
		OnOutput: func(s sandbox.Stream, b []byte) {
			w := spec.Stdout
			if s == sandbox.Stderr {
				w = spec.Stderr
			}
			if w != nil {
				w.Write(b)
			}
		},
	})
	if err != nil {
		rec.cancel()
		return RunResult{ExitCode: -1}, err
	}
	if len(res.NotEnforced) > 0 && r.OnNotEnforced != nil {
		r.OnNotEnforced(res.NotEnforced)
	}
	out := RunResult{
		ExitCode: res.ExitCode, SandboxDenied: res.SandboxDenied, TimedOut: res.TimedOut,
		Canceled: res.Canceled, Duration: res.Duration, Removed: res.Removed,
		NetworkNotes: res.NetworkNotes, Changes: rec.finish(),
	}
	if run != nil {
		out.RefusedHosts = run.RefusedHosts()
	}
	if res.SandboxDenied {
		out.Denial = res.DenialReason
		out.Suggest, _ = pol.DeriveGrant(spec.Cwd, res.Stderr, res.Stdout)
		// Quote the line that matched, not merely the last one (git prints
		// "Read-only file system" and then a line about something else).
		// Everything the command prints is the model's text: escaped.
		line := sandbox.DenialEvidence(res.Stderr, res.Stdout)
		if line == "" {
			line = lastLine(res.Stderr)
		}
		if line = shortLine(line); line != "" {
			out.Denial += ": " + command.EscapeText(line)
		}
	}
	return out, nil
}

// RecordsChanges reports whether what runs change is recorded for undo.
func (r *SandboxRunner) RecordsChanges() bool { return r.Changes != nil && r.Changes.Recorder != nil }

// CallsReady implements ReadyCaller: sandbox.Run calls spec.Ready just
// before the command can start and refuses the run when it fails.
func (r *SandboxRunner) CallsReady() bool { return true }

// RunEnv is the environment an unsandboxed attempt starts with, so the
// evaluator looks programs up on the PATH that will really be searched.
func (r *SandboxRunner) RunEnv() []string { return r.Env.Build(os.Environ()) }

// lastLine is the last non-empty line of output.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// shortLine shortens a line for a dialog, on a character boundary.
func shortLine(s string) string {
	if len(s) <= 200 {
		return s
	}
	cut := 200
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// SandboxFor describes a sandbox policy for approvals: its mode, network,
// its workspace, and every writable root it grants (the workspace, extra
// roots, and the temporary directories workspace-write includes), so risk
// facts call "outside the workspace" exactly what the sandbox would block.
// No command's working directory enters into it.
func SandboxFor(p sandbox.Policy) (Sandbox, error) {
	mode := SandboxMode(p.Mode)
	if mode == "" {
		mode = WorkspaceWrite
	}
	if _, err := ParseSandboxMode(string(mode)); err != nil {
		return Sandbox{}, err
	}
	s := Sandbox{Mode: mode, Network: p.Network, ProtectedPaths: p.ProtectedPaths, HomeWritable: p.HomeWritable, Reads: p.Reads, Caches: p.Caches}
	for _, w := range p.Workspace {
		real, err := filepath.EvalSymlinks(w)
		if err != nil {
			return Sandbox{}, fmt.Errorf("workspace %s: %w", w, err)
		}
		s.Workspace = append(s.Workspace, real)
	}
	if mode == WorkspaceWrite {
		roots, err := p.Roots()
		if err != nil {
			return Sandbox{}, fmt.Errorf("sandbox roots: %w", err)
		}
		for _, root := range roots {
			s.WritableRoots = append(s.WritableRoots, root.Path)
		}
		// Roots are symlink-resolved; keep the workspace as written too so
		// paths written the way the user wrote them still count as inside.
		for _, w := range p.Workspace {
			if !slices.Contains(s.WritableRoots, w) {
				s.WritableRoots = append(s.WritableRoots, filepath.Clean(w))
			}
		}
	}
	return s, nil
}
