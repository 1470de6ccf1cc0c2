package risk

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Paths and formatting: absolute paths from the command's directory, the
// writable roots, operands and flags, and numbers as the dialog shows them.

func (as *Assessor) abs(p string) string { return as.absFrom(as.ctx.Cwd, p) }

func (as *Assessor) absFrom(base, p string) string {
	if p == "~" {
		return as.ctx.Home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(as.ctx.Home, p[2:])
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// inside reports whether p is inside one of the writable roots.
func (as *Assessor) Inside(p string) bool {
	for _, r := range as.roots {
		if Within(r, p) {
			return true
		}
	}
	return false
}

func Within(root, p string) bool {
	root, p = filepath.Clean(root), filepath.Clean(p)
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// display shows a path relative to the cwd when inside it, with ~ for the
// home directory, and absolute otherwise.
func (as *Assessor) Display(p string, dir bool) string {
	s := p
	cwd := filepath.Clean(as.ctx.Cwd)
	switch {
	case as.ctx.Cwd != "" && p == cwd:
		s = "."
	case as.ctx.Cwd != "" && Within(cwd, p):
		s = strings.TrimPrefix(p, strings.TrimSuffix(cwd, "/")+"/")
	case as.ctx.Home != "" && p == as.ctx.Home:
		s = "~"
	case as.ctx.Home != "" && Within(as.ctx.Home, p):
		s = "~/" + strings.TrimPrefix(p, as.ctx.Home+"/")
	}
	if dir && !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s
}

func Operands(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
		}
	}
	return out
}

func hasFlag(args []string, flags ...string) bool {
	for _, a := range args {
		if slices.Contains(flags, a) {
			return true
		}
	}
	return false
}

func hasFlagPrefix(args []string, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// commas writes 1204 as "1,204".
func commas(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// humanBytes writes a size in decimal units: "512 bytes", "3.2 KB", "38 MB".
func HumanBytes(n int64) string {
	if n < 1000 {
		return fmt.Sprintf("%d %s", n, plural(n, "byte", "bytes"))
	}
	units := []string{"KB", "MB", "GB", "TB", "PB"}
	v := float64(n) / 1000
	u := 0
	for v >= 1000 && u < len(units)-1 {
		v /= 1000
		u++
	}
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, units[u])
	}
	return fmt.Sprintf("%.0f %s", v, units[u])
}
