package protect

import "testing"

// Rel finds a protected name as any part of a path and a
// protected subpath at any depth, in any letter case. Twin: names that
// only look alike.
func TestRel(t *testing.T) {
	getenv := func(k string) string {
		if k == "MISE_ENV" {
			return "ci, prod,../x"
		}
		return ""
	}
	for rel, want := range map[string]bool{
		".git/config":                  true,
		"lib/.hg/hgrc":                 true,
		"a/.jj/repo/config.toml":       true,
		"_darcs/prefs/defaults":        true,
		"x/.fslckout":                  true,
		".svn/wc.db":                   false,
		"src/hg/hgrc":                  false,
		"sub/.git":                     true,
		"mise.toml":                    true,
		"pkg/.MISE.toml":               true,
		".config/mise.toml":            true,
		".config/mise/conf.d/a.toml":   true,
		"app/.config/mise/config.toml": true,
		"mise.prod.toml":               true,
		".config/mise.ci.toml":         true,
		".dir-locals.el":               true,
		".devcontainer/Dockerfile":     true,
		"_vimrc":                       true,
		".config/other.toml":           false,
		"config/mise.toml.bak":         false,
		"mise-tasks/build":             false,
		"mise.dev.toml":                false,
		"src/vimrc.go":                 false,
		"docs/devcontainer.md":         false,
	} {
		if got := Rel(rel, getenv) != ""; got != want {
			t.Errorf("Rel(%q) = %v, want %v", rel, got, want)
		}
	}
}
