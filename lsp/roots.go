package lsp

import (
	"os"
	"path/filepath"

	"github.com/wardenhq/warden/approvals"
)

// The workspace is what the editor opened: its workspace folders, else the
// directory the server was started in. It is the sandbox's writable
// workspace for every command, whatever a command's working directory, and
// which folder a path belongs to is decided with links resolved, path
// component by path component.

// workspaceRoots are the workspace folders that exist (a folder deleted
// since it was opened grants nothing), else the server's working directory
// when the editor sent no folder at all. Never empty; when every folder is
// gone they are returned anyway, and the sandbox refuses (fail closed).
func (s *Server) workspaceRoots() []string {
	var folders, existing []string
	for _, f := range s.WorkspaceFolders() {
		if f.Path == "" {
			continue
		}
		p := filepath.Clean(f.Path)
		folders = append(folders, p)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			existing = append(existing, p)
		}
	}
	switch {
	case len(existing) > 0:
		return existing
	case len(folders) > 0:
		return folders
	}
	wd, _ := os.Getwd()
	return []string{wd}
}

// defaultRoot is the first workspace folder, else the server's directory.
func (s *Server) defaultRoot() string { return s.workspaceRoots()[0] }

// rootOf is the workspace folder holding dir (the innermost), else the
// first folder: a directory outside every folder gets the first folder's
// rules, and its command is asked about (approvals judges the working
// directory).
func (s *Server) rootOf(dir string) string {
	if best := s.folderHolding(dir); best != "" {
		return best
	}
	return s.defaultRoot()
}

// folderHolding is the innermost workspace folder that holds path, links
// resolved on both sides, or "".
func (s *Server) folderHolding(path string) string {
	if path == "" {
		return ""
	}
	real := realPath(path)
	best, bestReal := "", ""
	for _, root := range s.workspaceRoots() {
		r := realPath(root)
		if isWithin(real, r) && len(r) > len(bestReal) {
			best, bestReal = root, r
		}
	}
	return best
}

// isWithin reports whether path is root or below it, by whole path
// components (/a/b is not within /a/bc).
func isWithin(path, root string) bool { return approvals.IsWithin(path, root) }

// realPath resolves p's links; for a path that does not exist yet (a file
// about to be created), the links of its nearest existing ancestor.
func realPath(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	return filepath.Join(realPath(parent), filepath.Base(p))
}
