package sandbox

import (
	"fmt"
	"path/filepath"

	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
)

// ReadChecker is the read policy for readers outside the sandbox that hand
// content to the model (the agent's read_file and list_dir, forwarded editor
// buffers): it hides exactly what a sandboxed command cannot read, resolved
// by the same function as the sandbox's masks (resolveHidden), so the two
// can never disagree about a path.
type ReadChecker struct {
	access ReadAccess
	home   string
	hide   []HiddenPath
	// readable are what restricted mode lets be read (links resolved);
	// nil under the other modes.
	readable []string
}

// ReadChecker resolves the read policy as the file system is now. Build one
// per read or listing: a credential store created later is hidden from the
// next one.
func (p Policy) ReadChecker() (*ReadChecker, error) {
	m := pathmemo.New()
	c := &ReadChecker{access: p.readAccess(), home: p.home()}
	// No writable roots: nothing is masked here, so a link inside one is
	// no race to refuse, and the real path of what is read is checked.
	hide, err := resolveHidden(p.ReadDenyPatterns(), p.Reads.Allow, nil, m)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	c.hide = hide
	if readable := p.RestrictedReadable(); readable != nil {
		for _, r := range append(readable, p.WritableRoots...) {
			c.readable = append(c.readable, m.ResolveExisting(filepath.Clean(r)))
		}
	}
	return c, nil
}

// ReadHiddenError says a path is hidden by the read policy, and how the user
// can change that.
type ReadHiddenError struct {
	Path   string // as asked for
	Hidden string // the hidden path holding it, or "" when restricted mode leaves it out
	Access ReadAccess
	home   string
}

func (e *ReadHiddenError) Error() string {
	path := tildePath(e.home, e.Path)
	if e.Hidden == "" {
		return fmt.Sprintf("%s is hidden by the read policy: read_access = %q reads only the system, the workspace, the writable roots and readable_roots, and Warden reads no more for the model than a sandboxed command may; add it to readable_roots in config.toml, or set read_access = \"deny-secrets\"", path, e.Access)
	}
	return fmt.Sprintf("%s is hidden by the read policy (read_access = %q hides %s, a credential store or a read_deny entry), and Warden reads no more for the model than a sandboxed command may; to let it be read, add it to read_allow in config.toml (or take it out of read_deny), or set read_access = \"full\"", path, e.Access, tildePath(e.home, e.Hidden))
}

// Check returns a *ReadHiddenError when the read policy hides path, nil when
// it may be read. path is absolute and clean; real is where it leads (the
// real path of the file a reader opened, so a link swapped after the open
// changes nothing), or "" to resolve it here. Both must be readable: a path
// written through a hidden directory stays hidden whatever it points at.
func (c *ReadChecker) Check(path, real string) error {
	path = filepath.Clean(path)
	if real == "" {
		real = pathmemo.ResolveExisting(path)
	}
	for _, h := range c.hide {
		if hides(h, real) || pathutil.Within(h.Path, path) && hides(h, filepath.Join(h.Target, relTo(h.Path, path))) {
			return &ReadHiddenError{Path: path, Hidden: h.Path, Access: c.access, home: c.home}
		}
	}
	if c.readable != nil && !pathutil.WithinAny(real, c.readable) {
		return &ReadHiddenError{Path: path, Access: c.access, home: c.home}
	}
	return nil
}

// hides reports whether h masks target: it is inside h's target and not in
// one of the read_allow exceptions shown through the mask.
func hides(h HiddenPath, target string) bool {
	return pathutil.Within(h.Target, target) && !pathutil.WithinAny(target, h.Allow)
}

// relTo is p relative to dir, which holds it.
func relTo(dir, p string) string {
	r, err := filepath.Rel(dir, p)
	if err != nil {
		return "."
	}
	return r
}
