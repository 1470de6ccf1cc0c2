//go:build !unix

package lsp

// watchParent does nothing off Unix, where there is no cheap way to poll a
// process id: there the server stops when its input ends.
func (s *Server) watchParent(int) {}
