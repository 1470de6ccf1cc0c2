package approvals

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/approvals/risk"
	"github.com/wardenhq/warden/approvals/rules"
)

// The working directory is the request's; the boundary is the session's.
// A command may run anywhere inside the workspace or a writable root without
// a question. Anywhere else is put to the user (never offered for the
// session), or refused when nobody may be asked. Even when approved, the
// sandbox's writable roots stay the workspace's: the command only runs there.

// resolveWorkdir resolves every symbolic link in dir, so that the directory
// judged is the one the command runs in (a link the sandbox made inside the
// workspace that points out is judged by where it points).
func resolveWorkdir(dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("working directory %q is not an absolute path", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("working directory %s: %w", dir, err)
	}
	return real, nil
}

// outsideWorkspace says why the resolved directory dir is outside the
// session's workspace and writable roots, or "" when it is inside. Roots are
// compared resolved, path component by path component.
func (s Sandbox) outsideWorkspace(dir string) string {
	for _, root := range append(append([]string(nil), s.Workspace...), s.WritableRoots...) {
		if IsWithin(dir, root) {
			return ""
		}
		if real, err := filepath.EvalSymlinks(root); err == nil && IsWithin(dir, real) {
			return ""
		}
	}
	ws := "none"
	if len(s.Workspace) > 0 {
		ws = strings.Join(s.Workspace, ", ")
	}
	return fmt.Sprintf("it runs in %s, outside the workspace (%s)", dir, ws)
}

// IsWithin reports whether path is root or lies below it, comparing whole
// path components (/a/b is not within /a/bc). Both are cleaned first; neither
// is resolved: resolve symbolic links before asking.
func IsWithin(path, root string) bool {
	path, root = filepath.Clean(path), filepath.Clean(root)
	if !filepath.IsAbs(path) || !filepath.IsAbs(root) {
		return false
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// judgeWorkdir turns ev into a question about the working directory when it
// lies outside the workspace: high risk (asked every time, never "Allow for
// session" or "Always allow") and sandboxed, or forbidden under a policy
// that cannot ask.
// It returns why, or "" when the directory is inside.
func (o *Orchestrator) judgeWorkdir(req CommandRequest, ev *Evaluation) string {
	why := req.Sandbox.outsideWorkspace(req.Cwd)
	if why == "" {
		return ""
	}
	cmd := command.Display(req.Argv)
	fact := fmt.Sprintf("runs in %s, outside the workspace", req.Cwd)
	ev.Risk.Level = risk.High
	ev.Risk.Facts = append([]string{fact}, ev.Risk.Facts...)
	if !containsCategory(ev.Risk.Categories, risk.SystemModification) {
		ev.Risk.Categories = append(ev.Risk.Categories, risk.SystemModification)
	}
	if ev.Risk.Summary == "" {
		ev.Risk.Summary = fact
	} else {
		ev.Risk.Summary = fact + "; " + ev.Risk.Summary
	}
	ev.Amendment = nil
	// Approved, it runs sandboxed: the model's escalation request does not
	// take a command out of the sandbox in a directory the user has not
	// chosen; leaving it is the retry prompt's separate question.
	ev.Escalate = false
	if o.Policy.Ask == Never {
		ev.Decision = rules.Forbidden
		ev.Reason = fmt.Sprintf("`%s` refused: %s, and the approval policy is never, so nobody can be asked; run it inside the workspace", cmd, why)
		return why
	}
	reason := fmt.Sprintf("`%s` needs approval: %s", cmd, why)
	if ev.Decision == rules.Prompt && ev.Reason != "" {
		reason += "; " + ev.Reason
	}
	ev.Decision, ev.Reason = rules.Prompt, reason
	return why
}

func containsCategory(cs []risk.Category, c risk.Category) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}
