package sandbox

import (
	"bytes"
	"fmt"
	"slices"
)

// denialMarkers are what tools print when the kernel refuses them something
// the sandbox took away (lower-case; output is lowered before matching).
var denialMarkers = []string{
	"operation not permitted",
	"permission denied",
	"read-only file system",
	// A rename onto a path the sandbox holds read-only by a mount on it
	// (git writing .git/config through config.lock).
	"device or resource busy",
	"seccomp",
	"sandbox",
	"landlock",
	"failed to write file",
	"network is unreachable",
	"cannot assign requested address",
	"temporary failure in name resolution",
}

// offlineMarkers are what tools print when they cannot reach the network.
// Only a run with the network off counts them as the sandbox's doing: there
// the failure is the sandbox's (a tool often hides the errno, as curl's
// "Could not resolve host" does), elsewhere it may be the network's.
var offlineMarkers = []string{
	"could not resolve host",     // curl, git
	"couldn't connect to server", // curl
	"couldn't resolve host",      // curl
	"name or service not known",  // getaddrinfo (Python, ssh, ping)
	"unable to resolve host",     // wget
	"no address associated with hostname",
	"getaddrinfo eai_again",                // Node, npm
	"failed to establish a new connection", // pip, requests
}

// offlineDenial says whether a failed run with the network off failed for
// want of the network, so an orchestrator may offer to retry it outside
// the sandbox.
func offlineDenial(exitCode int, output ...[]byte) (bool, string) {
	if exitCode == 0 {
		return false, ""
	}
	for _, out := range output {
		if m, _ := markerMatch(out, offlineMarkers); m != "" {
			return true, fmt.Sprintf("the network is off in the sandbox and the output says %q", m)
		}
	}
	return false, ""
}

// detectDenial guesses whether a failed command failed because of the
// sandbox, following Codex: success is never a denial; a denial marker in the
// output is; otherwise exit codes 2, 126 and 127 (usage errors, not
// executable, not found) are not; a death by SIGSYS is.
func detectDenial(sandboxed bool, exitCode int, signal int, output ...[]byte) (bool, string) {
	if !sandboxed || (exitCode == 0 && signal == 0) {
		return false, ""
	}
	for _, out := range output {
		if m, _ := denialMatch(out); m != "" {
			return true, fmt.Sprintf("output says %q", m)
		}
	}
	switch exitCode {
	case 2, 126, 127:
		return false, ""
	}
	if signal == 31 { // SIGSYS: a seccomp kill
		return true, "killed by SIGSYS (seccomp)"
	}
	return false, ""
}

// denialMatch finds the first line of out that holds a denial marker and
// returns the marker and the line (trimmed), or "" when none does.
func denialMatch(out []byte) (marker string, line []byte) { return markerMatch(out, denialMarkers) }

// markerMatch finds the first line of out that holds one of markers.
func markerMatch(out []byte, markers []string) (marker string, line []byte) {
	for len(out) > 0 {
		l := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			l, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		low := bytes.ToLower(l)
		for _, m := range markers {
			if bytes.Contains(low, []byte(m)) {
				return m, bytes.TrimSpace(l)
			}
		}
	}
	return "", nil
}

// DenialEvidence is the line of output that made a failure look like a
// sandbox denial (the first line holding a marker, searched in the outputs
// in order), or "" when none holds one (a death by SIGSYS). It is the
// command's own text, raw: whoever shows it must escape it.
func DenialEvidence(output ...[]byte) string {
	for _, out := range output {
		if m, line := denialMatch(out); m != "" {
			return string(line)
		}
	}
	for _, out := range output {
		if m, line := markerMatch(out, offlineMarkers); m != "" {
			return string(line)
		}
	}
	return ""
}

// secretName is one path the read policy hid, as the output may name it.
type secretName struct {
	path string // absolute: as written, or resolved
	show string // as the message shows it (~/...)
}

// secretNames lists the hidden paths, written and resolved, longest first
// so the most precise one matches.
func secretNames(p Policy, hide []HiddenPath) []secretName {
	home := p.home()
	var out []secretName
	for _, h := range hide {
		out = append(out, secretName{h.Path, tildePath(home, h.Path)})
		if h.Target != h.Path {
			out = append(out, secretName{h.Target, tildePath(home, h.Path)})
		}
	}
	slices.SortFunc(out, func(a, b secretName) int { return len(b.path) - len(a.path) })
	return out
}

// readDenial recognises a failed read of a hidden path: the output names
// the path (or one inside it) next to a permission error. It returns the
// path as the message shows it.
func readDenial(secrets []secretName, exitCode int, output ...[]byte) (string, bool) {
	if exitCode == 0 || len(secrets) == 0 {
		return "", false
	}
	for _, out := range output {
		low := bytes.ToLower(out)
		if !bytes.Contains(low, []byte("permission denied")) && !bytes.Contains(low, []byte("operation not permitted")) {
			continue
		}
		for _, s := range secrets {
			i := bytes.Index(out, []byte(s.path))
			for i >= 0 {
				end := i + len(s.path)
				if end == len(out) || !isPathByte(out[end]) || out[end] == '/' {
					// Extend to the whole path the output names.
					for end < len(out) && isPathByte(out[end]) {
						end++
					}
					return s.show + string(out[i+len(s.path):end]), true
				}
				next := bytes.Index(out[end:], []byte(s.path))
				if next < 0 {
					break
				}
				i = end + next
			}
		}
	}
	return "", false
}

// isPathByte reports whether b can continue a path in a tool's message
// (which ends it with a colon, a quote, a space or a newline).
func isPathByte(b byte) bool {
	switch b {
	case ':', '\'', '"', ' ', '\t', '\n', '\r', '`', ')', ',':
		return false
	}
	return true
}
