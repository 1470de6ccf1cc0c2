package protect

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
)

// A protected name that does not exist (.git, .envrc, .vscode in a
// workspace without them, a git dir's missing commondir) cannot be held
// read-only by a mount without putting something in the user's tree, which
// git status, grep -r and find would see. So nothing is put there: the
// launcher watches those names while the command runs and moves away at
// once whatever the command creates there, checks again after the run (with
// the new .git entries one and two levels down), and keeps what it moved in
// Warden's state directory, where the user can look at it or move it back.
// The command may see its creation briefly; anything it runs there runs
// inside the sandbox.

// GuardConfig is what a run's guard needs besides the roots.
type GuardConfig struct {
	Dir    string          // quarantine directory; empty: delete what is moved away
	Cwd    string          // for the paths messages show
	Nested map[string]bool // roots whose new protected entries below the top are checked
	// Indexed are the nested roots the index served, with its sequence
	// number at the run's start (IndexCreated); the others are scanned
	// again after the run.
	Indexed map[string]uint64
	// Before is each root's Found as the scan found it (foundBefore).
	Before map[string]map[string]bool
	// Memo is the run's memo of the file system, for newGuard's first look
	// (before the command starts); nil looks at the file system.
	Memo *pathmemo.Memo
}

// Removed is one protected path the command created, which the sandbox
// moved away.
type Removed struct {
	// Path is where the command created it (absolute).
	Path string `json:"path"`
	// Shown is Path as messages show it: relative to the command's working
	// directory when inside it.
	Shown string `json:"shown"`
	// Kept is where it is kept now, under the quarantine directory; empty
	// when it could not be kept and was deleted (Err says why).
	Kept string `json:"kept,omitempty"`
	// Err says what failed; when it is set and Kept is empty the path may
	// still be there.
	Err string `json:"error,omitempty"`
	// Step, when set, is an exec step the command added to the step list
	// at Path (a stopped rebase's or cherry-pick's, see gittodo.go): it was
	// taken out of the list, which stays.
	Step string `json:"step,omitempty"`
}

// String is the line shown to the user and the model.
func (r Removed) String() string {
	switch {
	case r.Step != "" && r.Err != "":
		return fmt.Sprintf("the sandbox could not take %q out of %s, where the command added it: %s; a rebase or cherry-pick continued on the host would run it outside the sandbox", r.Step, r.Shown, r.Err)
	case r.Step != "":
		return fmt.Sprintf("the sandbox took %q out of %s, where the command added it: a rebase or cherry-pick continued on the host would have run it outside the sandbox", r.Step, r.Shown)
	case r.Kept != "":
		return fmt.Sprintf("the sandbox removed %s it created: protected path; kept at %s", r.Shown, r.Kept)
	case r.Err != "":
		return fmt.Sprintf("the sandbox could not move away %s it created (a protected path): %s", r.Shown, r.Err)
	}
	return fmt.Sprintf("the sandbox removed %s it created: protected path", r.Shown)
}

var quarantineSeq atomic.Int64

// QuarantineRun names one run's directory under the quarantine directory:
// a time to sort by, the process and a sequence number so runs never share.
func QuarantineRun() string {
	return time.Now().UTC().Format("20060102T150405.000") + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(quarantineSeq.Add(1), 10)
}

// ShownPath is p relative to cwd when inside it, else p.
func ShownPath(cwd, p string) string {
	if cwd != "" && pathutil.Within(cwd, p) && p != cwd {
		if rel, err := filepath.Rel(cwd, p); err == nil {
			return rel
		}
	}
	return p
}
