package changes

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

var (
	bigRepos = map[int]string{}
	writes   int
)

// bigRepo makes a committed git repository of files in directories of 10,
// once per process (the benchmark function runs more than once).
func bigRepo(b *testing.B, files int) string {
	b.Helper()
	if root, ok := bigRepos[files]; ok {
		return root
	}
	root, err := os.MkdirTemp("", "bigrepo")
	if err != nil {
		b.Fatal(err)
	}
	bigRepos[files] = root
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v %s", err, out)
	}
	for i := range files / 10 {
		dir := filepath.Join(root, fmt.Sprintf("p%02d/m%02d/s%03d", i%20, i/20%20, i/400))
		os.MkdirAll(dir, 0o755)
		for f := range 10 {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", f)), []byte(fmt.Sprintf("package f%d // %d\n", f, i)), 0o644)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "gc.auto=0"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("add", ".")
	git("commit", "-qm", "big")
	time.Sleep(10 * time.Millisecond)
	git("update-index", "--really-refresh") // no entry racy
	return root
}

// BenchmarkRecordOneWrite times a recording (snapshot, one file written,
// the look after) in a committed repository of 20,000 and 100,000 files.
//
//	go test -run '^$' -bench RecordOneWrite -benchtime 10x ./internal/changes
func BenchmarkRecordOneWrite(b *testing.B) {
	b.Cleanup(func() {
		for _, root := range bigRepos {
			os.RemoveAll(root)
		}
	})
	for _, n := range []int{20000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			root := bigRepo(b, n)
			rec := &Recorder{Store: OpenStore(b.TempDir())}
			rec.Begin([]string{root}).Finish()
			b.ResetTimer()
			for range b.N {
				run := rec.Begin([]string{root})
				writes++
				os.WriteFile(filepath.Join(root, "out.txt"), []byte(fmt.Sprint(writes)), 0o644)
				if ch := run.Finish()[0]; len(ch.Files) != 1 {
					b.Fatalf("%d files changed: %s", len(ch.Files), ch)
				}
			}
		})
	}
}
