package risk

import (
	"fmt"
	"path/filepath"

	"github.com/wardenhq/warden/internal/changes"
)

// undoNote says whether Warden's undo can bring back what a deletion of
// path (a file of size bytes, or a tree: size 0) removes, for the fact's
// end; raise is true when it cannot and the data is not scratch: past the
// copy limit inside a recorded root (unless git holds it as it is), or in
// a writable directory outside them. Nothing is said when changes are not
// recorded, or the sandbox refuses the deletion anyway (beyond).
func (as *Assessor) undoNote(path string, beyond bool, size int64) (note string, raise bool) {
	if len(as.ctx.Recorded) == 0 || beyond {
		return "", false
	}
	for _, root := range as.ctx.Recorded {
		if !Within(filepath.Clean(root), path) {
			continue
		}
		if size > changes.DefaultMaxFile {
			return "; Undo cannot bring it back unless it is committed as it is (larger than the " + fmt.Sprint(changes.DefaultMaxFile>>20) + " MiB Undo copies)", true
		}
		return "; recoverable with Undo", false
	}
	if as.scratch(path) {
		return "; not recorded (a temporary directory): Undo cannot bring it back", false
	}
	return "; outside the workspace Warden records: Undo cannot bring it back", true
}
