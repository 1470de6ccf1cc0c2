package safe

import "strings"

// The read-only tools below join the known-safe list with their options
// checked: each has an option that writes a file, runs a program or reads
// a list of files from a file, and the model writes every word, so each
// option is parsed the way the tool itself parses it (short options
// clustered, GNU long options abbreviated to any unique prefix).

// longOptionAbbrev reports whether a (a "--name" or "--name=value" word)
// names one of the long options in bad, in full or abbreviated: getopt_long
// accepts any unambiguous prefix, so `--out=f` is `--output=f`.
func longOptionAbbrev(a string, bad ...string) bool {
	name, _, _ := strings.Cut(a, "=")
	if len(name) <= 2 {
		return false
	}
	for _, b := range bad {
		if strings.HasPrefix(b, name) {
			return true
		}
	}
	return false
}

// shortCluster walks the letters of a short-option word such as -nrk2: it
// returns false when a letter is in deny, and says whether the last letter
// seen takes its value from the next word (a letter in withValue that ends
// the word; one followed by more letters has its value attached).
func shortCluster(a, deny, withValue string) (ok, takesNext bool) {
	for i := 1; i < len(a); i++ {
		c := a[i]
		if strings.IndexByte(deny, c) >= 0 {
			return false, false
		}
		if strings.IndexByte(withValue, c) >= 0 {
			return true, i == len(a)-1
		}
	}
	return true, false
}

// getoptSafe checks a GNU getopt command line: no short option in deny, no
// long option (or abbreviation of one) in badLong. withValue and
// longValue name the options whose value is the next word, so a value is
// never taken for an option.
func getoptSafe(args []string, deny, withValue string, longValue, badLong []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return true
		case strings.HasPrefix(a, "--"):
			if longOptionAbbrev(a, badLong...) {
				return false
			}
			if !strings.Contains(a, "=") && longOptionAbbrev(a, longValue...) {
				i++
			}
		case len(a) > 1 && a[0] == '-':
			ok, next := shortCluster(a, deny, withValue)
			if !ok {
				return false
			}
			if next {
				i++
			}
		}
	}
	return true
}

// sortSafe: sort without -o/--output (writes the result to a file),
// --compress-program (runs a program), -T/--temporary-directory (writes
// there), --files0-from and --random-source (read files the command line
// does not name).
func sortSafe(args []string) bool {
	return getoptSafe(args, "oT", "kStT",
		[]string{"--key", "--field-separator", "--buffer-size", "--parallel", "--batch-size"},
		[]string{"--output", "--compress-program", "--temporary-directory", "--files0-from", "--random-source"})
}

// duSafe: du without --files0-from (a list of files read from a file).
func duSafe(args []string) bool {
	return getoptSafe(args, "", "BdtX",
		[]string{"--block-size", "--max-depth", "--threshold", "--exclude-from", "--exclude", "--time-style"},
		[]string{"--files0-from"})
}

// fileSafe: file without -C/--compile, which writes a compiled magic file.
func fileSafe(args []string) bool {
	return getoptSafe(args, "C", "efFmP",
		[]string{"--exclude", "--exclude-quiet", "--files-from", "--separator", "--magic-file", "--parameter"},
		[]string{"--compile"})
}

// diffSafe: diff writes nothing and runs only pr (for --paginate); its
// reads are judged by the secret scan like cat's. --from-file and
// --to-file name files it compares; nothing else reads a list of files.
func diffSafe(args []string) bool {
	return getoptSafe(args, "", "CDFILUSWxX",
		[]string{"--label", "--exclude", "--exclude-from", "--from-file", "--to-file", "--ignore-matching-lines",
			"--show-function-line", "--starting-file", "--width", "--tabsize", "--horizon-lines", "--color",
			"--line-format", "--old-line-format", "--new-line-format", "--unchanged-line-format",
			"--old-group-format", "--new-group-format", "--changed-group-format", "--unchanged-group-format"},
		nil)
}

// stringsSafe: strings only reads (its -o is an offset format, and @FILE
// reads options, none of which writes).
func stringsSafe(args []string) bool {
	return getoptSafe(args, "", "netT", []string{"--bytes", "--radix", "--encoding", "--target", "--output-separator"}, nil)
}

// treeSafe: tree without -o (writes its listing to a file) and -R (runs
// tree again in every directory with -o 00Tree.html). tree's own parser
// takes a value only for the letters below, as the next word.
func treeSafe(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return true
		case strings.HasPrefix(a, "--"):
			name, _, _ := strings.Cut(a, "=")
			if name == "--output" || name == "--fromfile" || name == "--fromtabfile" {
				return false
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'o', 'R':
					return false
				case 'L', 'P', 'I', 'H', 'T':
					i++ // the value is the next word
				}
			}
		}
	}
	return true
}

// xxdSafe: xxd reads one file and writes to standard output; a second
// operand is a file it writes (with -r too).
func xxdSafe(args []string) bool {
	operands := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands += len(args) - i - 1
			i = len(args)
		case a == "-c" || a == "-cols" || a == "-g" || a == "-groupsize" || a == "-l" || a == "-len" ||
			a == "-n" || a == "-name" || a == "-o" || a == "-s" || a == "-seek" || a == "-R":
			i++
		case len(a) > 1 && a[0] == '-':
		default:
			operands++
		}
	}
	return operands <= 1
}
