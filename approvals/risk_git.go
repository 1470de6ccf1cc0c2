package approvals

import (
	"fmt"
	"os"
	"strings"
)

// gitDiscard reports checkouts and restores that overwrite uncommitted
// changes in the working tree: `git checkout -- FILE`, `git checkout .`,
// `git restore FILE`, `git checkout -f`, `git switch --discard-changes`.
// Switching or creating a branch (`git checkout -b x`) keeps them.
func (as *assessor) gitDiscard(sub string, args []string) {
	var files []string
	force, stagedOnly, worktree := false, false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case a == "-f" || a == "--force" || a == "--discard-changes":
			force = true
		case a == "-S" || a == "--staged":
			stagedOnly = true
		case a == "-W" || a == "--worktree":
			worktree = true
		case (a == "-s" || a == "--source" || a == "-b" || a == "-B" || a == "-c" || a == "-C" || a == "--orphan") && i+1 < len(args):
			i++ // the option's value
		case strings.HasPrefix(a, "-"):
		case sub == "restore":
			files = append(files, a)
		case a == "." || sub == "checkout" && as.exists(a):
			// `git checkout main` switches branches; an operand that is a
			// file in the working tree is checked out over its changes.
			files = append(files, a)
		}
	}
	if sub == "restore" && stagedOnly && !worktree {
		return // only unstages: the working tree keeps its changes
	}
	switch {
	case len(files) > 0:
		shown := files
		if len(shown) > 3 {
			shown = append(append([]string(nil), shown[:3]...), fmt.Sprintf("+%d more", len(files)-3))
		}
		as.add(RiskMedium, DataDeletion, fmt.Sprintf("discards uncommitted changes to %s (git %s)", strings.Join(shown, ", "), sub))
	case force:
		as.add(RiskMedium, DataDeletion, fmt.Sprintf("discards uncommitted changes (git %s --force)", sub))
	}
}

func (as *assessor) exists(p string) bool {
	info, err := os.Stat(as.abs(p))
	return err == nil && info.Mode().IsRegular()
}
