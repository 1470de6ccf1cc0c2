package safe

import "strings"

// sedSafe reports whether a sed command line only prints: no -i (rewrites
// files), no -f (a script Warden cannot see), and a script whose every
// command is one that prints, selects or edits the pattern space. The
// script is parsed as GNU sed parses it, so w, W, r, R, e and the w and e
// flags of s, which write files, read files or run programs, are found
// wherever they are (`1w /etc/x`, `-e p -e 'e id'`, `s/a/b/w f`).
func sedSafe(args []string) bool {
	var scripts, operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case a == "-e" || a == "--expression":
			if i+1 >= len(args) {
				return false
			}
			scripts = append(scripts, args[i+1])
			i++
		case strings.HasPrefix(a, "--expression="):
			scripts = append(scripts, strings.TrimPrefix(a, "--expression="))
		case a == "-l" || a == "--line-length":
			i++
		case strings.HasPrefix(a, "--"):
			switch name, _, _ := strings.Cut(a, "="); name {
			case "--quiet", "--silent", "--regexp-extended", "--separate", "--unbuffered", "--null-data",
				"--posix", "--debug", "--sandbox", "--line-length":
			default:
				// --in-place, --file and their abbreviations, and any
				// option Warden does not know.
				return false
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				c := a[j]
				switch {
				case strings.IndexByte("nErsuz", c) >= 0:
				case c == 'e':
					// -eSCRIPT, or -e with the script in the next word.
					if j+1 < len(a) {
						scripts = append(scripts, a[j+1:])
					} else if i+1 < len(args) {
						scripts = append(scripts, args[i+1])
						i++
					} else {
						return false
					}
					j = len(a)
				case c == 'l':
					if j+1 == len(a) {
						i++
					}
					j = len(a)
				default:
					return false // -i, -f, -s... and anything unknown
				}
			}
		default:
			operands = append(operands, a)
		}
	}
	if len(scripts) == 0 {
		if len(operands) == 0 {
			return false
		}
		scripts, operands = operands[:1], operands[1:]
	}
	// GNU sed joins -e scripts with newlines.
	return SedScriptSafe(strings.Join(scripts, "\n"))
}

// SedScriptSafe parses a sed script and accepts it when every command is
// one that only prints or changes the pattern and hold spaces.
func SedScriptSafe(s string) bool {
	p := &sedParser{s: s}
	for {
		p.skip(" \t\n;")
		if p.eof() {
			return p.depth == 0
		}
		if !p.address() {
			return false
		}
		p.skip(" \t")
		if p.peek() == ',' {
			p.i++
			p.skip(" \t")
			if !p.address() {
				return false
			}
		}
		p.skip(" \t")
		for p.peek() == '!' {
			p.i++
			p.skip(" \t")
		}
		if !p.command() {
			return false
		}
	}
}

type sedParser struct {
	s     string
	i     int
	depth int
}

func (p *sedParser) eof() bool { return p.i >= len(p.s) }

func (p *sedParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

func (p *sedParser) skip(set string) {
	for !p.eof() && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *sedParser) digits() bool {
	start := p.i
	for !p.eof() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// address reads an optional address: N, N~M, $, /re/ or \cREc with I or
// M flags, or +N and ~N as a second address.
func (p *sedParser) address() bool {
	switch c := p.peek(); {
	case c >= '0' && c <= '9':
		p.digits()
		if p.peek() == '~' {
			p.i++
			return p.digits()
		}
	case c == '$':
		p.i++
	case c == '+' || c == '~':
		p.i++
		return p.digits()
	case c == '/' || c == '\\':
		if c == '\\' {
			p.i++
			if p.eof() || p.peek() == '\n' || p.peek() == '\\' {
				return false
			}
		}
		delim := p.s[p.i]
		p.i++
		if !p.delimited(delim) {
			return false
		}
		for p.peek() == 'I' || p.peek() == 'M' {
			p.i++
		}
	}
	return true
}

// delimited moves past text up to an unescaped delim, as GNU sed's
// match_slash does (a backslash takes the next character with it).
func (p *sedParser) delimited(delim byte) bool {
	for !p.eof() {
		c := p.s[p.i]
		switch {
		case c == '\\':
			p.i += 2
		case c == delim:
			p.i++
			return true
		case c == '\n' && delim != '\n':
			return false
		default:
			p.i++
		}
	}
	return false
}

// command reads one command and what ends it.
func (p *sedParser) command() bool {
	if p.eof() {
		return false
	}
	c := p.s[p.i]
	p.i++
	switch c {
	case '{':
		p.depth++
		return true
	case '}':
		p.depth--
		return p.depth >= 0 && p.end()
	case 'p', 'P', '=', 'l', 'd', 'D', 'n', 'N', 'g', 'G', 'h', 'H', 'x', 'z', 'F':
		if c == 'l' {
			p.skip(" \t")
			p.digits()
		}
		return p.end()
	case 'q', 'Q':
		p.skip(" \t")
		p.digits()
		return p.end()
	case 's':
		return p.substitute()
	case 'y':
		if p.eof() || p.peek() == '\\' || p.peek() == '\n' {
			return false
		}
		delim := p.s[p.i]
		p.i++
		return p.delimited(delim) && p.delimited(delim) && p.end()
	}
	// w, W, r, R, e write, read or run; a, i, c, b, t, T, :, v and
	// anything else are not needed to print and are not accepted.
	return false
}

// substitute reads s/RE/REPLACEMENT/FLAGS, accepting the flags g, p, i, I,
// m, M and a number: not w (writes a file) nor e (runs the result).
func (p *sedParser) substitute() bool {
	if p.eof() || p.peek() == '\\' || p.peek() == '\n' {
		return false
	}
	delim := p.s[p.i]
	p.i++
	if !p.delimited(delim) || !p.delimited(delim) {
		return false
	}
	for !p.eof() {
		switch c := p.s[p.i]; {
		case strings.IndexByte("gpiImM", c) >= 0 || c >= '0' && c <= '9':
			p.i++
		default:
			return p.end()
		}
	}
	return true
}

// end accepts what may follow a command: spaces, then ;, a newline, } or
// the end of the script.
func (p *sedParser) end() bool {
	p.skip(" \t")
	if p.eof() {
		return true
	}
	switch p.peek() {
	case ';', '\n':
		p.i++
		return true
	case '}':
		return true
	}
	return false
}
