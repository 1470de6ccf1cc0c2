package gitconfig

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/lazyre"
	"github.com/wardenhq/warden/internal/regfile"
)

// A hook manager installs a hook that runs the commands a file in the work
// tree lists: pre-commit's hook runs what .pre-commit-config.yaml says (a
// "local" hook is any command line), lefthook's what lefthook.yml and
// lefthook-local.yml say. Once such a hook is installed, that file is as
// much what git runs as the hook itself.

// hookRunners are the managers known: a hook whose text holds marker runs
// the commands of configs (relative to the work tree), and of the file its
// --config names when configArg.
var hookRunners = []struct {
	marker    string
	configs   []string
	configArg bool
}{
	{"hook-impl", []string{".pre-commit-config.yaml", ".pre-commit-config.yml"}, true},
	{"lefthook", lefthookConfigs(), false},
}

// lefthookConfigs are the files and directories lefthook reads: its config
// and local override, with or without a leading dot, in each format, and
// the directories of its scripts.
func lefthookConfigs() []string {
	out := []string{".lefthook", ".lefthook-local"}
	for _, base := range []string{"lefthook", "lefthook-local"} {
		for _, ext := range []string{".yml", ".yaml", ".toml", ".json", ".jsonc"} {
			out = append(out, base+ext, "."+base+ext)
		}
	}
	return out
}

// configArg finds a --config argument in a hook (pre-commit's).
var configArg = lazyre.New(`--config[= ]["']?([^"'\s)]+)`)

// maxHookSize bounds what is read of one hook: hook managers' hooks are a
// few kilobytes.
const maxHookSize = 256 << 10

// hookConfigs lists the files the hooks in dir (a hooks directory) make
// run, for a repository whose work tree is worktree.
func hookConfigs(dir, worktree string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil || worktree == "" {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sample") || !e.Type().IsRegular() {
			continue
		}
		text := readHook(filepath.Join(dir, e.Name()))
		for _, r := range hookRunners {
			if !strings.Contains(text, r.marker) {
				continue
			}
			for _, c := range r.configs {
				out = append(out, filepath.Join(worktree, c))
			}
			if !r.configArg {
				continue
			}
			for _, m := range configArg().FindAllStringSubmatch(text, -1) {
				if p := path(m[1], worktree, ""); p != "" {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

func readHook(p string) string {
	f, err := regfile.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxHookSize))
	return string(b)
}
