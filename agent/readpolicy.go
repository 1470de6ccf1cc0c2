package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/wardenhq/warden/approvals"
)

// Everything the agent reads itself for the model (read_file, list_dir, an
// editor buffer sent with a request) passes the sandbox's read policy: what
// a sandboxed command cannot read is refused, and a secret file is asked
// about as `cat FILE` would be. The decision is approvals.ReadGuard, the one
// the sandbox masks with; this file only opens, checks and asks.

// ReadGate decides the agent's own reads: the read policy of the session's
// sandbox and, for a secret file, the user. Orchestrated implements it.
type ReadGate interface {
	// ReadGuard resolves the read policy now, for reads from cwd.
	ReadGuard(cwd string) (*approvals.ReadGuard, error)
	// ApproveRead asks the user whether a secret file may go to the model.
	ApproveRead(ctx context.Context, req approvals.ReadRequest) approvals.ReadOutcome
}

// BufferReader is a FileReader that tells an open editor buffer from the
// disk, so the agent reads the disk from the file it opened and checked
// (never by name a second time, which a swapped link could redirect).
type BufferReader interface {
	// Buffer returns the editor's text of path when it is open there.
	Buffer(path string) (text []byte, open bool, err error)
}

// ReadGuard implements ReadGate: the read policy of o.Sandbox.
func (o *Orchestrated) ReadGuard(cwd string) (*approvals.ReadGuard, error) {
	return o.Sandbox.ReadGuard(cwd)
}

// ApproveRead implements ReadGate through the orchestrator's dialog and audit.
func (o *Orchestrated) ApproveRead(ctx context.Context, req approvals.ReadRequest) approvals.ReadOutcome {
	if o.Orchestrator == nil {
		return approvals.ReadOutcome{Refused: "no orchestrator: nobody can be asked"}
	}
	req.Sandbox = o.Sandbox
	return o.Orchestrator.ApproveRead(ctx, req)
}

// closedGate is the gate of a ToolEnv without one: the default read policy
// (credential stores hidden) and nobody to ask, so secret files are refused.
type closedGate struct{}

func (closedGate) ReadGuard(cwd string) (*approvals.ReadGuard, error) {
	return approvals.Sandbox{}.ReadGuard(cwd)
}

func (closedGate) ApproveRead(context.Context, approvals.ReadRequest) approvals.ReadOutcome {
	return approvals.ReadOutcome{Refused: "this session has no approval flow, so nobody can be asked"}
}

func (e *ToolEnv) reads() ReadGate {
	if e.Reads == nil {
		return closedGate{}
	}
	return e.Reads
}

// readRefusal is a read the policy or the user refused: the tool's result
// for the model, with the verdict the session counts repeats by, and why in
// words for the user.
type readRefusal struct {
	res ToolResult
	why string
}

func (r *readRefusal) Error() string { return r.why }

// hiddenRefusal is the refusal of a path the read policy hides.
func hiddenRefusal(err error) error {
	return &readRefusal{ToolResult{Verdict: Forbidden, Content: "Policy forbids this read: " + err.Error() +
		". Do not try to read it another way (a command cannot either)."}, err.Error()}
}

// refusalResult turns a refusal into the tool's result, other errors into
// the tool's error.
func refusalResult(err error) (ToolResult, error) {
	var r *readRefusal
	if errors.As(err, &r) {
		return r.res, nil
	}
	return ToolResult{}, err
}

// openChecked opens path (absolute, clean) for reading and checks where the
// opened file really is against the read policy: a link swapped after the
// check cannot redirect the read. A secret file is put to the user (tool
// names the reader in the dialog). The caller closes the file. A path that
// does not exist on disk is checked by name and f is nil: an editor buffer
// may still hold it.
func (e *ToolEnv) openChecked(ctx context.Context, tool, path string) (f *os.File, err error) {
	guard, err := e.reads().ReadGuard(e.Dir)
	if err != nil {
		return nil, err // fail closed: no policy, no read
	}
	f, openErr := openNoBlock(path)
	real := ""
	if openErr == nil {
		real = realPath(f, path)
	}
	defer func() {
		if err != nil && f != nil {
			f.Close()
			f = nil
		}
	}()
	if err := guard.Hidden(path, real); err != nil {
		return f, hiddenRefusal(err)
	}
	if openErr != nil && !errors.Is(openErr, os.ErrNotExist) {
		return nil, fmt.Errorf("cannot read %s: %v", path, unwrapPathError(openErr))
	}
	if risk, secret := guard.SecretRisk(path, real); secret {
		out := e.reads().ApproveRead(ctx, approvals.ReadRequest{Tool: tool, Path: path, Cwd: e.Dir, Risk: risk})
		switch {
		case out.Abort:
			return f, &readRefusal{ToolResult{Verdict: Stopped, Content: "The user denied reading " + path + " and stopped the task."}, out.Refused}
		case !out.Allowed:
			return f, &readRefusal{ToolResult{Verdict: Denied, Content: "Not read: " + path + " holds secrets and was not approved (" + out.Refused +
				"). Respect that: do not read it another way; continue without it, or explain what you need and stop."}, path + " holds secrets: " + out.Refused}
		}
	}
	return f, nil
}

// readChecked reads path for the model after openChecked: the editor's
// buffer when the file is open there, else the opened file.
func (e *ToolEnv) readChecked(ctx context.Context, tool, path string) ([]byte, error) {
	f, err := e.openChecked(ctx, tool, path)
	if err != nil {
		return nil, err
	}
	if f != nil {
		defer f.Close()
	}
	switch r := e.files().(type) {
	case BufferReader:
		text, open, err := r.Buffer(path)
		if err != nil || open {
			return text, err
		}
	default:
		return r.ReadFile(path) // a reader that cannot say; checked by name above
	}
	if f == nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: syscall.ENOENT}
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file; read only text files", path)
	}
	return io.ReadAll(f)
}

// CheckForward applies the read policy to editor text sent with a request
// (a selection, a diagnostic, a comment of file): refused when the sandbox
// hides the file, asked when it holds secrets. An error says why it may not
// be sent.
func (e *ToolEnv) CheckForward(ctx context.Context, file string) error {
	if !filepath.IsAbs(file) {
		return fmt.Errorf("%s: want an absolute path", file)
	}
	f, err := e.openChecked(ctx, "editor_text", filepath.Clean(file))
	if f != nil {
		f.Close()
	}
	return err
}
