package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/protect"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

// Grant is what one request may add to a policy, inside the sandbox:
// directories to write, paths to read and network destinations. It is the
// one permission value approvals, dialogs, rules and the audit log share; a
// policy takes it in one place, WithGrant.
//
// The rules a grant keeps (Policy.ResolveGrant enforces them):
//   - Paths are absolute after resolving against the working directory (and
//     ~/ against the home directory), with symbolic links resolved: the
//     grant names what will really be opened, and is shown that way.
//   - A path grants itself and what is below it, never its parent, a
//     sibling, or a link inside it that points elsewhere (the sandbox binds
//     the resolved directory; a link out of it leads to read-only ground).
//   - Write grants name existing directories other than /, never a
//     protected path (.git, .warden, ... or anything inside one, or Warden's
//     own files): protected entries inside a granted directory stay
//     read-only, as in every writable root. A write grant inside a path the
//     read policy hides is refused: the sandbox cannot show and hide it at
//     once.
//   - Read grants name existing paths. One equal to or inside a hidden
//     credential store exposes exactly that path (its siblings stay hidden);
//     one that contains hidden stores does not expose them.
//   - Network grants (host or host:port) let the run's proxy connect to
//     those hosts without asking. They need the network on ask (the proxy);
//     under off WithGrant refuses them with ErrNetworkGrant, since turning
//     the proxy on would open more than the grant names.
type Grant struct {
	Write   []string `json:"write,omitempty"`
	Read    []string `json:"read,omitempty"`
	Network []string `json:"network,omitempty"`
}

// ErrNetworkGrant is WithGrant's answer to a grant with network hosts for
// a sandbox whose network is off.
var ErrNetworkGrant = errors.New(`network grants need network_access = "ask" (the sandbox's network is off)`)

// maxGrantEntries bounds each list of a grant: a request naming more is
// surely not the narrow grant a dialog can show.
const maxGrantEntries = 16

// IsZero reports whether g adds nothing.
func (g Grant) IsZero() bool { return len(g.Write) == 0 && len(g.Read) == 0 && len(g.Network) == 0 }

// Union is everything g or h grants, each list sorted without duplicates.
func (g Grant) Union(h Grant) Grant {
	return Grant{Write: sortedSet(g.Write, h.Write), Read: sortedSet(g.Read, h.Read), Network: sortedSet(g.Network, h.Network)}
}

// Covers reports whether g grants everything h asks: every path of h is a
// path of g or below one of the same kind (write covers read too), every
// host of h is a host of g. Both must be resolved.
func (g Grant) Covers(h Grant) bool {
	for _, w := range h.Write {
		if !pathutil.WithinAny(w, g.Write) {
			return false
		}
	}
	for _, r := range h.Read {
		if !pathutil.WithinAny(r, g.Read) && !pathutil.WithinAny(r, g.Write) {
			return false
		}
	}
	for _, n := range h.Network {
		if !slices.Contains(g.Network, n) {
			return false
		}
	}
	return true
}

// Describe lists what g adds, one phrase per entry, with home shown as ~:
// "write access to ~/.cache/pip", "read access to /opt/data",
// "network to pypi.org:443".
func (g Grant) Describe(home string) []string {
	var out []string
	for _, w := range g.Write {
		out = append(out, "write access to "+tildePath(home, w))
	}
	for _, r := range g.Read {
		out = append(out, "read access to "+tildePath(home, r))
	}
	for _, n := range g.Network {
		out = append(out, "network to "+n)
	}
	return out
}

// String is Describe joined, with $HOME shown as ~.
func (g Grant) String() string {
	return strings.Join(g.Describe(Policy{}.home()), ", ")
}

// Home is the directory whose credential stores the read policy hides, or
// "" when there is none.
func (p Policy) Home() string { return p.home() }

// ResolveGrant checks g against p and returns it resolved: paths absolute
// (relative ones against cwd, ~/ against the home directory), cleaned,
// symbolic links resolved, each list sorted without duplicates. It refuses
// what the Grant rules forbid, naming the path and why.
func (p Policy) ResolveGrant(g Grant, cwd string) (Grant, error) {
	var out Grant
	if len(g.Write) > maxGrantEntries || len(g.Read) > maxGrantEntries || len(g.Network) > maxGrantEntries {
		return Grant{}, fmt.Errorf("a grant may name at most %d paths or hosts of each kind", maxGrantEntries)
	}
	for _, w := range g.Write {
		rp, err := p.resolveGrantPath(w, cwd)
		if err != nil {
			return Grant{}, fmt.Errorf("write access to %s: %w", w, err)
		}
		if err := p.checkWriteGrant(rp); err != nil {
			return Grant{}, fmt.Errorf("write access to %s: %w", w, err)
		}
		out.Write = append(out.Write, rp)
	}
	for _, r := range g.Read {
		rp, err := p.resolveGrantPath(r, cwd)
		if err != nil {
			return Grant{}, fmt.Errorf("read access to %s: %w", r, err)
		}
		out.Read = append(out.Read, rp)
	}
	for _, n := range g.Network {
		h, err := parseGrantHost(n)
		if err != nil {
			return Grant{}, fmt.Errorf("network to %q: %w", n, err)
		}
		out.Network = append(out.Network, h)
	}
	return out.Union(Grant{}), nil
}

// ResolveGrantExact is ResolveGrant for a grant that was resolved before
// (approved, or saved with a rule): every path (~/ expanded) must still
// resolve to itself. A directory swapped for a link since is refused, not
// followed to wherever the link points now.
func (p Policy) ResolveGrantExact(g Grant) (Grant, error) {
	r, err := p.ResolveGrant(g, "")
	if err != nil {
		return Grant{}, err
	}
	home := p.home()
	for _, list := range [][2][]string{{g.Write, r.Write}, {g.Read, r.Read}} {
		for _, path := range list[0] {
			want := strings.TrimSpace(path)
			if (want == "~" || strings.HasPrefix(want, "~/")) && home != "" {
				want = filepath.Join(home, strings.TrimPrefix(want, "~"))
			}
			if !slices.Contains(list[1], filepath.Clean(want)) {
				return Grant{}, fmt.Errorf("grant path %s no longer resolves to itself (a link now stands on its way): it is not followed", path)
			}
		}
	}
	return r, nil
}

// resolveGrantPath makes one requested path absolute and resolves its
// links; it must exist.
func (p Policy) resolveGrantPath(path, cwd string) (string, error) {
	s := strings.TrimSpace(path)
	switch {
	case s == "":
		return "", errors.New("empty path")
	case strings.ContainsAny(s, "\x00\n\r"):
		return "", errors.New("the path holds control characters")
	case s == "~" || strings.HasPrefix(s, "~/"):
		home := p.home()
		if home == "" {
			return "", errors.New("no home directory to resolve ~ against")
		}
		s = filepath.Join(home, strings.TrimPrefix(s, "~"))
	case !filepath.IsAbs(s):
		if !filepath.IsAbs(cwd) {
			return "", errors.New("a relative path needs the working directory, and there is none")
		}
		s = filepath.Join(cwd, s)
	}
	rp, err := filepath.EvalSymlinks(filepath.Clean(s))
	if err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("%s does not exist", s)
		}
		return "", err
	}
	return rp, nil
}

// checkWriteGrant refuses a write grant the sandbox must not give: a file,
// /, a protected path or one inside it, one the read policy hides.
func (p Policy) checkWriteGrant(rp string) error {
	st, err := os.Stat(rp)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory: write access is granted to directories", rp)
	}
	if rp == string(filepath.Separator) {
		return errors.New("write access to / is no sandbox: that is danger-full-access, a separate choice")
	}
	if name := protect.Rel(strings.TrimPrefix(rp, string(filepath.Separator)), os.Getenv); name != "" {
		return fmt.Errorf("%s is or is inside the protected %s, which stays read-only", rp, name)
	}
	res := pathmemo.New()
	for _, e := range p.ProtectedPaths {
		if pathutil.Within(res.ResolveExisting(filepath.Clean(e)), rp) {
			return fmt.Errorf("%s is inside %s, which stays read-only (Warden's own files or the user's git configuration)", rp, e)
		}
	}
	if hidden, ok := p.HiddenBy(rp); ok {
		return fmt.Errorf("%s is inside %s, which the read policy hides: a hidden path cannot be made writable", rp, hidden)
	}
	return nil
}

// HiddenBy reports whether the read policy hides path (absolute): it is, or
// is inside, a denied path or glob. It returns the denied entry.
func (p Policy) HiddenBy(path string) (string, bool) {
	for _, pat := range p.ReadDenyPatterns() {
		if strings.ContainsAny(pat, "*?[") {
			for a := path; ; a = filepath.Dir(a) {
				if ok, _ := filepath.Match(pat, a); ok {
					return pat, true
				}
				if a == filepath.Dir(a) {
					break
				}
			}
			continue
		}
		if pathutil.Within(pat, path) || pathutil.Within(pathmemo.ResolveExisting(pat), path) {
			return pat, true
		}
	}
	return "", false
}

// ContainsHidden reports whether path (absolute, a directory) holds a path
// the read policy hides, returning the first.
func (p Policy) ContainsHidden(path string) (string, bool) {
	for _, pat := range p.ReadDenyPatterns() {
		base := pat
		if i := strings.IndexAny(pat, "*?["); i >= 0 {
			base = filepath.Dir(pat[:i+1])
		}
		if path != base && (pathutil.Within(path, base) || pathutil.Within(path, pathmemo.ResolveExisting(base))) {
			return pat, true
		}
	}
	return "", false
}

// parseGrantHost checks a network destination: a host name or address,
// optionally with :port, nothing else.
func parseGrantHost(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return "", errors.New("empty host")
	}
	if strings.ContainsAny(s, "/@ \t\x00\n\r") || strings.Contains(s, "://") {
		return "", errors.New("want a host or host:port, not a URL")
	}
	return s, nil
}

// WithGrant returns p widened by exactly g: its directories writable (with
// their protected entries read-only), its paths readable. g must be as
// ResolveGrant returned it, and is checked again: a path that resolves
// differently now (a directory swapped for a link since it was approved)
// is refused, not followed. A policy without a sandbox is returned as is.
// Under read-only a write grant makes the granted directories, and nothing
// else, writable.
func (p Policy) WithGrant(g Grant) (Policy, error) {
	if g.IsZero() || !p.Sandboxed() {
		return p, nil
	}
	if len(g.Network) > 0 && p.NetworkMode() == NetworkOff {
		return p, ErrNetworkGrant
	}
	r, err := p.ResolveGrantExact(g)
	if err != nil {
		return p, err
	}
	out := p
	out.WritableRoots = slices.Clone(p.WritableRoots)
	out.Reads.Allow = slices.Clone(p.Reads.Allow)
	out.Reads.ReadableRoots = slices.Clone(p.Reads.ReadableRoots)
	if len(r.Write) > 0 && p.mode() == ReadOnly {
		// Only the granted directories: the workspace stays read-only (but
		// readable under restricted), no temporary directories, no caches.
		out.Mode = WorkspaceWrite
		out.Reads.ReadableRoots = append(out.Reads.ReadableRoots, p.Workspace...)
		out.Workspace, out.WritableRoots = nil, nil
		out.ExcludeTmpdir, out.ExcludeSlashTmp = true, true
		out.Caches = toolcache.Caches{}
	}
	out.WritableRoots = append(out.WritableRoots, r.Write...)
	for _, path := range r.Read {
		// Restricted mode reads only what it lists; the credential stores
		// inside stay hidden there as everywhere.
		out.Reads.ReadableRoots = append(out.Reads.ReadableRoots, path)
		if _, hidden := p.HiddenBy(path); hidden {
			// Exactly this path, through the mask: not its siblings.
			out.Reads.Allow = append(out.Reads.Allow, path)
		}
	}
	return out, out.Validate()
}

func sortedSet(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	if len(out) == 0 {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}
