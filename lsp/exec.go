package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/approvals"
	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/lsp/jobs"
	"github.com/wardenhq/warden/sandbox"
)

// warden.exec runs one command the user gives through the approvals
// orchestrator: policy, the approval dialog, the sandbox and the retry
// without it. Its output goes to the log (window/logMessage); the outcome is
// shown with window/showMessage and closes the job's progress.
func init() {
	RegisterCommand(Command{
		Name:  "warden.exec",
		Title: "Running a command",
		Start: startExec,
	})
}

// execArgs is warden.exec's argument: {command, cwd?, justification?,
// sandbox_permissions?, additional_permissions?}. command is an argv array,
// or a string run as `bash -lc <string>`. sandbox_permissions =
// "with_additional_permissions" asks to run in the sandbox plus
// additional_permissions ({write, read, network}: paths absolute or
// relative to cwd), which the user approves in the dialog.
type execArgs struct {
	Command               json.RawMessage `json:"command"`
	Cwd                   string          `json:"cwd"`
	Justification         string          `json:"justification"`
	SandboxPermissions    string          `json:"sandbox_permissions"`
	AdditionalPermissions *sandbox.Grant  `json:"additional_permissions"`
}

func startExec(s *Server, args []json.RawMessage) (JobFunc, error) {
	var a execArgs
	if err := DecodeArg(args, 0, &a); err != nil {
		return nil, err
	}
	argv, err := execArgv(a.Command)
	if err != nil {
		return nil, err
	}
	cwd := a.Cwd
	if cwd == "" {
		cwd = s.defaultRoot()
	}
	if !filepath.IsAbs(cwd) {
		return nil, InvalidParams("arguments[0].cwd: %q is not an absolute path", cwd)
	}
	if info, err := os.Stat(cwd); err != nil || !info.IsDir() {
		return nil, InvalidParams("arguments[0].cwd: %s is not a directory", cwd)
	}
	grant, err := execGrant(a)
	if err != nil {
		return nil, err
	}
	root := s.rootOf(cwd)
	return func(ctx context.Context, job *jobs.Job) (string, error) {
		job.Report("checking policy: "+command.EscapeText(command.Display(argv)), -1)
		o, sb, err := s.Orchestrator(root)
		if err != nil {
			return "", err
		}
		log := &logLines{s: s, prefix: "[warden.exec] "}
		out, err := o.Exec(ctx, approvals.ExecRequest{
			CommandRequest: approvals.CommandRequest{Argv: argv, Cwd: cwd, Sandbox: sb, Justification: a.Justification, Grant: grant},
			Stdout:         log, Stderr: log,
		})
		log.flush()
		if err != nil {
			return "", err
		}
		summary, typ := execSummary(argv, out)
		if out.Ran && !out.Escalated && !out.Grant.IsZero() {
			summary += " with " + command.EscapeText(sb.DescribeGrant(out.Grant))
		}
		if out.Ran && out.Result.Changes != nil {
			summary += "; " + command.EscapeText(out.Result.Changes.Summary)
		}
		if out.Ran && len(out.Result.NetworkNotes) > 0 {
			// `curl -f` ends "exited 22" whatever refused it: say who did.
			summary += "; proxy: " + command.EscapeText(strings.Join(out.Result.NetworkNotes, "; "))
			typ = protocol.MessageTypeWarning
		}
		job.Show(typ, summary)
		return summary, nil
	}, nil
}

// execGrant reads sandbox_permissions and additional_permissions.
func execGrant(a execArgs) (sandbox.Grant, error) {
	switch a.SandboxPermissions {
	case "", "use_default":
		if a.AdditionalPermissions != nil {
			return sandbox.Grant{}, InvalidParams(`arguments[0].additional_permissions goes with sandbox_permissions "with_additional_permissions"`)
		}
		return sandbox.Grant{}, nil
	case "with_additional_permissions":
		if a.AdditionalPermissions == nil || a.AdditionalPermissions.IsZero() {
			return sandbox.Grant{}, InvalidParams(`arguments[0].additional_permissions is required with sandbox_permissions "with_additional_permissions": {"write": [...], "read": [...]}`)
		}
		return *a.AdditionalPermissions, nil
	}
	return sandbox.Grant{}, InvalidParams(`arguments[0].sandbox_permissions must be "use_default" or "with_additional_permissions", not %q`, a.SandboxPermissions)
}

func execArgv(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, InvalidParams("arguments[0].command is required: an array of strings, or a shell command line")
	}
	var line string
	if err := json.Unmarshal(raw, &line); err == nil {
		if strings.TrimSpace(line) == "" {
			return nil, InvalidParams("arguments[0].command must not be empty")
		}
		return []string{"bash", "-lc", line}, nil
	}
	var argv []string
	if err := json.Unmarshal(raw, &argv); err != nil {
		return nil, InvalidParams("arguments[0].command: want an array of strings or a string")
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, InvalidParams("arguments[0].command must not be empty")
	}
	return argv, nil
}

// execSummary is the one-line outcome shown to the user.
func execSummary(argv []string, out *approvals.ExecOutcome) (string, protocol.MessageType) {
	cmd := command.EscapeText(command.Display(argv))
	switch {
	case !out.Ran:
		return fmt.Sprintf("Warden: `%s` did not run: %s", cmd, command.EscapeText(out.Refused)), protocol.MessageTypeWarning
	case out.Result.TimedOut:
		return fmt.Sprintf("Warden: `%s` timed out", cmd), protocol.MessageTypeWarning
	case out.Result.SandboxDenied && !out.Escalated:
		return fmt.Sprintf("Warden: the sandbox blocked `%s` (exit %d: %s)", cmd, out.Result.ExitCode, out.Result.Denial), protocol.MessageTypeWarning
	}
	where := "sandboxed"
	if out.Escalated {
		where = "without the sandbox"
	}
	typ := protocol.MessageTypeInfo
	if out.Result.ExitCode != 0 {
		typ = protocol.MessageTypeWarning
	}
	return fmt.Sprintf("Warden: `%s` exited %d (%s)", cmd, out.Result.ExitCode, where), typ
}

// logLines sends output to the editor's log a line at a time.
type logLines struct {
	s      *Server
	prefix string
	mu     sync.Mutex
	buf    bytes.Buffer
}

func (l *logLines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(b)
	for {
		i := bytes.IndexByte(l.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		line := string(l.buf.Next(i + 1))
		l.s.Client().LogMessage(protocol.MessageTypeLog, l.prefix+strings.TrimRight(line, "\n"))
	}
	return len(b), nil
}

func (l *logLines) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() > 0 {
		l.s.Client().LogMessage(protocol.MessageTypeLog, l.prefix+l.buf.String())
		l.buf.Reset()
	}
}
