//go:build !unix

package agent

import "os"

func openNoBlock(path string) (*os.File, error) { return os.Open(path) }
