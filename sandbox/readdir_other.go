//go:build !linux

package sandbox

import "os"

// readDirNames lists dir without sorting it or statting its entries (the
// directory entry's own type says whether it is a directory or a link).
func readDirNames(dir string) ([]dirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	out := make([]dirEntry, 0, len(des))
	for _, d := range des {
		t := d.Type()
		out = append(out, dirEntry{name: d.Name(), dir: t.IsDir(), regular: t.IsRegular()})
	}
	return out, err
}
