package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each directory under testdata/scenarios holds input/ (the workspace before),
// patch, and either expected/ (the workspace after) or error (lines the error
// must contain; the workspace must then be exactly input/).
func TestScenarios(t *testing.T) {
	dirs, err := filepath.Glob("testdata/scenarios/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			work := t.TempDir()
			copyTree(t, filepath.Join(dir, "input"), work)
			text, err := os.ReadFile(filepath.Join(dir, "patch"))
			if err != nil {
				t.Fatal(err)
			}
			cps := NewCheckpoints(t.TempDir())
			res, err := applyText(work, string(text), cps)
			if want, rerr := os.ReadFile(filepath.Join(dir, "error")); rerr == nil {
				if err == nil {
					t.Fatalf("patch applied, want an error containing %q; result:\n%s", want, res)
				}
				for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
					if !strings.Contains(err.Error(), line) {
						t.Errorf("error %q\ndoes not contain %q", err, line)
					}
				}
				assertTree(t, work, filepath.Join(dir, "input"))
				return
			}
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			if !res.Complete() {
				t.Fatalf("result not complete:\n%s", res)
			}
			assertTree(t, work, filepath.Join(dir, "expected"))

			// Every scenario that lands can be undone, back to input/.
			if _, err := cps.Undo(context.Background(), Disk{}, work, false); err != nil {
				t.Fatalf("undo: %v", err)
			}
			assertTree(t, work, filepath.Join(dir, "input"))
		})
	}
}

// applyText is the whole disk path as the CLI runs it; concerns count as a
// refusal, as they do where nobody can approve.
func applyText(root, text string, cps *Checkpoints) (*Result, error) {
	changes, err := Parse(text)
	if err != nil {
		return nil, err
	}
	plan, err := Prepare(changes, Disk{}, Options{Root: root})
	if err != nil {
		return nil, err
	}
	if len(plan.Concerns) > 0 {
		var reasons []string
		for _, c := range plan.Concerns {
			reasons = append(reasons, c.String())
		}
		return nil, errors.New("needs approval: " + strings.Join(reasons, "; "))
	}
	return Apply(context.Background(), Disk{}, plan, cps)
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, _ := d.Info()
		return os.WriteFile(dst, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot maps every file under root to its content (directories as "dir").
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			out[filepath.ToSlash(rel)+"/"] = "dir"
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func assertTree(t *testing.T, got, want string) {
	t.Helper()
	g, w := snapshot(t, got), snapshot(t, want)
	for name, wc := range w {
		if gc, ok := g[name]; !ok {
			t.Errorf("%s: missing", name)
		} else if gc != wc {
			t.Errorf("%s:\n got %q\nwant %q", name, gc, wc)
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			t.Errorf("%s: unexpected (%s)", name, fmt.Sprintf("%.40q", g[name]))
		}
	}
}
