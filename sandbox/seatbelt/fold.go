package seatbelt

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// macOS volumes are usually case-insensitive, and APFS compares names after
// NFD and Unicode full case folding: .git/HOOKS, .git/hooKs (Kelvin sign)
// and .git/conﬁg (fi ligature) are .git/hooks and .git/config. Seatbelt's
// path rules compare bytes, and for a name the command makes the path it
// checks is spelled as the command spelled it. So every deny that guards a
// protected path or a secret is also written as a regex that matches the
// path in every spelling the volume takes for it (foldRegex).
//
// Seatbelt regexes (AppleMatch) are POSIX-style extended regexes over the
// path's bytes: ^ $ . [...] [^...] ( | ) * + ? as Apple's own profiles use
// them. The regexes written here use only those, no backslash and no
// bracket holding a multi-byte character (a bracket is a set of bytes): a
// non-ASCII spelling is an alternative in a group. They reach Seatbelt as
// parameters, strings the profile reader never parses (Apple's profiles
// build regexes from strings too: (regex (string-append ...))), so neither
// quotes nor non-ASCII bytes pass through the #"..." reader. Go's regexp
// reads them the same way (with (?s): POSIX's . matches a newline), which is
// how the tests check them.

// foldMeta are the ASCII characters an extended regex gives a meaning; each
// is written as a one-character bracket, which means the character itself in
// both regex dialects.
const foldMeta = ".[]()*+?{}|$"

// foldLigatures are the code points whose full case folding is a run of ASCII
// letters (Unicode 9 CaseFolding.txt, status F), by that run.
var foldLigatures = map[string][]rune{
	"ss": {'\u00DF', '\u1E9E'}, "ff": {'\uFB00'}, "fi": {'\uFB01'}, "fl": {'\uFB02'},
	"ffi": {'\uFB03'}, "ffl": {'\uFB04'}, "st": {'\uFB05', '\uFB06'},
}

// foldSingletons are the code points whose canonical decomposition (NFD) is
// one ASCII character that case folding does not reach (the Kelvin sign is
// also k's case fold, so unicode.SimpleFold already has it).
var foldSingletons = map[rune][]rune{';': {'\u037E'}, '`': {'\u1FEF'}}

// maxFoldSpellings bounds the spellings of one run of ligature letters
// (ssss... grows as Fibonacci); a longer run is matched by any sequence of
// those letters and ligatures instead, which denies more, never less.
const maxFoldSpellings = 64

// regexParam adds the regex re to params and returns the filter naming it.
func regexParam(params []string, re string) (string, []string) {
	n := 0
	for _, p := range params {
		if strings.HasPrefix(p, "-DREGEX_") {
			n++
		}
	}
	key := fmt.Sprintf("REGEX_%d", n)
	return fmt.Sprintf("(regex (param %q))", key), append(params, "-D"+key+"="+re)
}

// FoldRegex is a Seatbelt regex matching path in every spelling a
// case-insensitive APFS volume takes for it, and everything under it when
// subtree is set. A quote, a backslash, ^ and control characters match any
// one byte but / (no escape needed): the deny covers a few more names,
// never fewer.
func FoldRegex(path string, subtree bool) string {
	var re strings.Builder
	re.WriteString("^")
	re.WriteString(FoldBody(path))
	if subtree {
		re.WriteString("(/.*)?")
	}
	re.WriteString("$")
	return re.String()
}

// FoldBody is the regex of s without anchors.
func FoldBody(s string) string {
	var re strings.Builder
	runes := []rune(s)
	for i := 0; i < len(runes); {
		j := i + 1
		for j < len(runes) && ligaturePair(runes[j-1], runes[j]) {
			j++
		}
		if j-i == 1 {
			re.WriteString(foldChar(runes[i]))
		} else {
			re.WriteString(foldLigatureRun(strings.ToLower(string(runes[i:j]))))
		}
		i = j
	}
	return re.String()
}

// ligaturePair tells whether a and b may be spelled together by a ligature.
func ligaturePair(a, b rune) bool {
	if a >= utf8.RuneSelf || b >= utf8.RuneSelf {
		return false
	}
	_, ok := foldLigatures[strings.ToLower(string([]rune{a, b}))]
	return ok
}

// foldLigatureRun is a group of every spelling of run (lower-case ASCII
// letters, each adjacent pair a ligature's): letters one by one or joined by
// ligatures.
func foldLigatureRun(run string) string {
	var spellings []string
	var tile func(rest, prefix string) bool
	tile = func(rest, prefix string) bool {
		if rest == "" {
			spellings = append(spellings, prefix)
			return len(spellings) <= maxFoldSpellings
		}
		if !tile(rest[1:], prefix+foldChar(rune(rest[0]))) {
			return false
		}
		for n := 2; n <= 3 && n <= len(rest); n++ {
			if ligs, ok := foldLigatures[rest[:n]]; ok {
				if !tile(rest[n:], prefix+group(runeStrings(ligs))) {
					return false
				}
			}
		}
		return true
	}
	if !tile(run, "") {
		any := []rune{'\u017F'} // ſ, s's fold
		for _, ligs := range foldLigatures {
			any = append(any, ligs...)
		}
		slices.Sort(any)
		return "(" + strings.Join(append([]string{"[fFiIlLsStT]"}, runeStrings(any)...), "|") + ")+"
	}
	return "(" + strings.Join(spellings, "|") + ")"
}

// foldChar is the regex of one character in every spelling: its case fold
// orbit and canonical singletons, the ASCII ones in a bracket, the others as
// alternatives beside it.
func foldChar(c rune) string {
	if c < utf8.RuneSelf && (c < ' ' || c == 0x7f || strings.ContainsRune("\"\\^", c)) {
		return "[^/]"
	}
	orbit := []rune{c}
	for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
		orbit = append(orbit, f)
	}
	for _, o := range slices.Clone(orbit) {
		orbit = append(orbit, foldSingletons[o]...)
	}
	slices.Sort(orbit)
	var ascii []rune
	var parts []string
	for _, o := range orbit {
		if o < utf8.RuneSelf {
			ascii = append(ascii, o)
		} else {
			parts = append(parts, string(o))
		}
	}
	switch {
	case len(ascii) == 1 && !strings.ContainsRune(foldMeta, ascii[0]):
		parts = append([]string{string(ascii)}, parts...)
	case len(ascii) > 0:
		parts = append([]string{"[" + string(ascii) + "]"}, parts...)
	}
	return group(parts)
}

// group is a regex matching any one of parts: a group when there are more.
func group(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	return "(" + strings.Join(parts, "|") + ")"
}

func runeStrings(rs []rune) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}
