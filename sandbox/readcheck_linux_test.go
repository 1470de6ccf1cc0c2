package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadCheckerAgreesWithTheSandbox: for every path of a fake home full of
// credential stores, under the default policy, read_allow, a read_deny glob
// and read_access = full, the host-side ReadChecker hides exactly what a
// sandboxed cat cannot read: one decision, not two lists.
func TestReadCheckerAgreesWithTheSandbox(t *testing.T) {
	h := newReadHome(t)
	os.WriteFile(filepath.Join(h.ws, "prod.env"), []byte(secretText), 0o644)
	os.MkdirAll(filepath.Join(h.ws, "private"), 0o755)
	os.WriteFile(filepath.Join(h.ws, "private", "plan.txt"), []byte(secretText), 0o644)
	paths := append([]string{
		filepath.Join(h.home, ".bashrc"), filepath.Join(h.home, ".gitconfig"), filepath.Join(h.home, ".aws/config"),
		filepath.Join(h.ws, "notes.txt"), filepath.Join(h.ws, "prod.env"), filepath.Join(h.ws, "private", "plan.txt"),
	}, h.secrets...)

	policies := map[string]func(p *Policy){
		"default": func(*Policy) {},
		"allow": func(p *Policy) {
			p.Reads.Allow = []string{filepath.Join(h.home, ".npmrc"), filepath.Join(h.home, ".aws/config")}
		},
		"deny": func(p *Policy) {
			p.Reads.Deny = []string{filepath.Join(h.ws, "*.env"), filepath.Join(h.ws, "private")}
		},
		"full": func(p *Policy) { p.Reads.Access = ReadFull },
	}
	for name, edit := range policies {
		p := h.policy()
		edit(&p)
		c, err := p.ReadChecker()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var script strings.Builder
		for _, path := range paths {
			script.WriteString(`if grep -q . "` + path + `" 2>/dev/null; then echo "read ` + path + `"; fi` + "\n")
		}
		res := h.mustRun(t, script.String(), p)
		hiddenCount := 0
		for _, path := range paths {
			inSandbox := strings.Contains(string(res.Stdout), "read "+path+"\n")
			hidden := c.Check(path, "") != nil
			if hidden {
				hiddenCount++
			}
			if hidden == inSandbox {
				t.Errorf("%s: %s: the checker says hidden=%v, the sandboxed command read it=%v", name, strings.TrimPrefix(path, filepath.Dir(h.home)), hidden, inSandbox)
			}
		}
		switch {
		case name == "full" && hiddenCount != 0, name != "full" && hiddenCount < 25:
			t.Errorf("%s: %d of %d paths hidden", name, hiddenCount, len(paths))
		}
	}
}
