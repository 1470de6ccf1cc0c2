package approvals

import (
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// oneOffWord reports a word that names something made for one run: a path
// under a temporary directory (/tmp, /var/tmp, $TMPDIR) or a random-looking
// name (mktemp's tmp.k3J9dLq2Xa, a UUID, a hash, a long number). "Always
// allow" of a prefix holding one would remember a rule that never matches
// again, or matches whatever a later run puts at that path.
func oneOffWord(w string) bool {
	if _, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "-") {
		w = v // --out=/tmp/x
	}
	if underTempDir(w) {
		return true
	}
	for _, seg := range strings.FieldsFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if randomLooking(seg) {
			return true
		}
	}
	return false
}

// underTempDir reports a path in /tmp, /var/tmp or $TMPDIR.
func underTempDir(w string) bool {
	if !filepath.IsAbs(w) {
		return false
	}
	w = filepath.Clean(w)
	for _, dir := range []string{"/tmp", "/var/tmp", os.Getenv("TMPDIR"), os.TempDir()} {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		dir = filepath.Clean(dir)
		if w == dir || strings.HasPrefix(w, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// randomLooking reports a name segment of 8 characters or more that reads
// as generated: hexadecimal with digits and letters (hashes, UUID parts), a
// run of 6 digits or more (timestamps, process ids), or characters that
// change between lower case, upper case and digits four times or more.
func randomLooking(seg string) bool {
	if len(seg) < 8 {
		return false
	}
	class := func(r rune) int {
		switch {
		case unicode.IsDigit(r):
			return 0
		case unicode.IsUpper(r):
			return 1
		}
		return 2
	}
	hex, digits, letters, run, longestRun, changes := true, 0, 0, 0, 0, 0
	prev := -1
	for _, r := range seg {
		c := class(r)
		if prev >= 0 && c != prev {
			changes++
		}
		prev = c
		if c == 0 {
			digits++
			run++
			longestRun = max(longestRun, run)
		} else {
			letters++
			run = 0
			hex = hex && strings.ContainsRune("abcdefABCDEF", r)
		}
	}
	return (hex && digits > 0 && letters > 0) || longestRun >= 6 || changes >= 4
}
