//go:build !unix

package lsp

// watchParent is not implemented off Unix: the server stops when its input
// ends.
func (s *Server) watchParent(int) {}
