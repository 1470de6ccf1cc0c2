package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorded runs script with a write record of ws and returns what it
// heard, relative to ws ("t:" marks a tree).
func recorded(t *testing.T, ws, script string) []string {
	t.Helper()
	return recordedSlowly(t, ws, script, 0)
}

// recordedSlowly is recorded with a record that takes pause per report.
func recordedSlowly(t *testing.T, ws, script string, pause time.Duration) []string {
	t.Helper()
	if !RecordsWrites(Policy{Mode: WorkspaceWrite}) {
		t.Skip("this kernel cannot send calls to a supervisor")
	}
	root, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var heard []string
	res := run(t, ws, Command{Argv: sh(script), Policy: Policy{Mode: WorkspaceWrite}, Record: &WriteRecord{
		Roots: []string{root},
		Before: func(p string, how Change) {
			time.Sleep(pause)
			mu.Lock()
			defer mu.Unlock()
			if how == ChangeLinked {
				heard = append(heard, "h:"+p)
				return
			}
			rel, err := filepath.Rel(root, p)
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("heard %s, outside %s", p, root)
				return
			}
			if how == ChangeTree {
				rel = "t:" + rel
			}
			heard = append(heard, rel)
		},
	}})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Output)
	}
	return heard
}

func wantHeard(t *testing.T, heard []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(heard, w) {
			t.Errorf("did not hear %q; heard %q", w, heard)
		}
	}
}

func TestWriteRecordHearsEveryKindOfChange(t *testing.T) {
	ws := t.TempDir()
	for _, f := range []string{"old", "gone", "modes", "sub/deep"} {
		os.MkdirAll(filepath.Join(ws, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(ws, f), []byte(f), 0o644)
	}
	heard := recorded(t, ws, `set -e
echo new > made
echo more >> old
rm gone
mkdir dir
mv sub moved
ln -s made link
chmod 600 modes
echo tmp > "${TMPDIR:-/tmp}/warden-record-outside-$$"; rm -f "${TMPDIR:-/tmp}/warden-record-outside-$$"
cat old > /dev/null`)
	wantHeard(t, heard, "made", "old", "gone", "dir", "t:sub", "t:moved", "link", "modes")
	for _, h := range heard {
		if strings.Contains(h, "warden-record-outside") {
			t.Errorf("heard a path outside the recorded root: %q", h)
		}
	}
}

// A write reached through a name that is not the file's own (a link, a
// descriptor reopened through /proc, a relative path from another
// directory) is heard as the file it changes.
func TestWriteRecordHearsTheFileANameLeadsTo(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "a", "b"), 0o755)
	for _, f := range []string{"target", "viaproc", "vialink", "a/b/rel"} {
		os.WriteFile(filepath.Join(ws, f), []byte(f), 0o644)
	}
	os.Symlink("/proc/self/fd/3", filepath.Join(ws, "sneaky"))
	os.Symlink("target", filepath.Join(ws, "link"))
	os.Symlink("notyet", filepath.Join(ws, "dangling"))
	heard := recorded(t, ws, `set -e
echo x > link
exec 3< viaproc; echo x > /proc/self/fd/3; exec 3<&-
exec 3< vialink; echo x > sneaky; exec 3<&-
cd a && echo x > ../a/./b/rel && cd ..
echo x > dangling
echo x > /dev/stdout`)
	wantHeard(t, heard, "target", "viaproc", "vialink", "a/b/rel", "notyet")
	if slices.Contains(heard, "link") || slices.Contains(heard, "sneaky") || slices.Contains(heard, "dangling") {
		t.Errorf("heard the link, not what it leads to: %q", heard)
	}
}

// A file outside the roots that is another name of a file inside (a hard
// link, made by an earlier run in a shared /tmp) is reported when written:
// the write changes the file inside. A file outside with one name is not.
func TestWriteRecordHearsAWriteThroughAHardLinkOutside(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir() // the same file system: /tmp
	os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("mine\n"), 0o644)
	if err := os.Link(filepath.Join(ws, "inside.txt"), filepath.Join(outside, "alias")); err != nil {
		t.Skipf("no hard link between the workspace and the temporary directory: %v", err)
	}
	os.WriteFile(filepath.Join(outside, "plain"), []byte("x"), 0o644)
	alias, _ := filepath.EvalSymlinks(filepath.Join(outside, "alias"))
	plain, _ := filepath.EvalSymlinks(filepath.Join(outside, "plain"))
	heard := recorded(t, ws, "echo evil > "+alias+"; echo fine > "+plain+"; chmod 600 "+alias)
	wantHeard(t, heard, "h:"+alias)
	if slices.Contains(heard, "h:"+plain) {
		t.Errorf("a file outside with one name was reported: %q", heard)
	}
}

// Reports of new paths do not hold the command up, so the last ones may
// still be on their way when it exits (here the record is slower than the
// command): Run returns only once every one is heard, or the record would
// miss the files made last.
func TestWriteRecordHearsEveryNewFileBeforeRunReturns(t *testing.T) {
	ws := t.TempDir()
	heard := recordedSlowly(t, ws, `i=0; while [ $i -lt 400 ]; do : > f$i; i=$((i+1)); done`, 500*time.Microsecond)
	var want []string
	for i := range 400 {
		want = append(want, "f"+strconv.Itoa(i))
	}
	wantHeard(t, heard, want...)
}
