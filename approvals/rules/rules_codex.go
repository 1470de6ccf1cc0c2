package rules

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.starlark.net/starlark"
)

// This file holds Codex's two other rules functions, host_executable and
// network_rule, with Codex's semantics, so a Codex rules file means the same
// in Warden.

// hostExecutable is host_executable(name, paths): the absolute paths that
// may stand for a program name when a rule names it by its basename. The
// last definition of a name wins; paths=[] lets no path stand for it. Each
// path must be absolute (or ~/...) and end in the name itself.
func (p *ParsedRules) hostExecutable(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var paths *starlark.List
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "paths", &paths); err != nil {
		return nil, err
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return nil, fmt.Errorf("host_executable name %q must be a bare program name", name)
	}
	list := []string{}
	for i := 0; i < paths.Len(); i++ {
		raw, ok := starlark.AsString(paths.Index(i))
		if !ok {
			return nil, fmt.Errorf("host_executable(%q) paths must be strings, not %s", name, paths.Index(i).Type())
		}
		path, err := hostExecutablePath(raw)
		if err != nil {
			return nil, fmt.Errorf("host_executable(%q) path %q: %w", name, raw, err)
		}
		if filepath.Base(path) != name {
			return nil, fmt.Errorf("host_executable(%q) path %q must end in %q", name, raw, name)
		}
		if !slices.Contains(list, path) {
			list = append(list, path)
		}
	}
	p.HostExecutables[name] = list
	return starlark.None, nil
}

// hostExecutablePath reads a host_executable path: absolute, or ~/...
// under the user's home directory.
func hostExecutablePath(raw string) (string, error) {
	if rest, ok := strings.CutPrefix(raw, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil || !filepath.IsAbs(home) {
			return "", errors.New("~/ paths need a home directory, and there is none")
		}
		raw = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(raw) {
		return "", errors.New("must be an absolute path or start with ~/")
	}
	return filepath.Clean(raw), nil
}
