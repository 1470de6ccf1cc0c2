//go:build !linux

package protect

import "os"

// ReadDirNames lists dir without sorting it or statting its entries (the
// directory entry's own type says whether it is a directory or a link).
func ReadDirNames(dir string) ([]DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	out := make([]DirEntry, 0, len(des))
	for _, d := range des {
		t := d.Type()
		out = append(out, DirEntry{Name: d.Name(), Dir: t.IsDir(), Regular: t.IsRegular()})
	}
	return out, err
}
