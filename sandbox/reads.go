package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/pathutil"
	"github.com/wardenhq/warden/sandbox/linux"
	"github.com/wardenhq/warden/sandbox/protect"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

// ReadAccess says what a sandboxed command may read.
type ReadAccess string

const (
	// ReadFull lets the command read everything the user can.
	ReadFull ReadAccess = "full"
	// ReadDenySecrets (the default) hides the credential stores of
	// BuiltinReadDeny and the policy's ReadDeny, minus ReadAllow.
	ReadDenySecrets ReadAccess = "deny-secrets"
	// ReadRestricted allows only the platform's defaults (system
	// directories, the user's shell and git configuration, toolchains), the
	// workspace, the writable roots and ReadableRoots; the credential stores
	// inside them stay hidden. Linux (Landlock) only for now: elsewhere it
	// is refused, never widened.
	ReadRestricted ReadAccess = "restricted"
)

// ParseReadAccess reads a read policy as written in config.toml or on the
// command line; empty means deny-secrets.
func ParseReadAccess(s string) (ReadAccess, error) {
	switch a := ReadAccess(strings.TrimSpace(s)); a {
	case ReadFull, ReadDenySecrets, ReadRestricted:
		return a, nil
	case "":
		return ReadDenySecrets, nil
	}
	return "", fmt.Errorf("read_access %q: want full, deny-secrets or restricted", s)
}

// BuiltinReadDeny are the credential stores deny-secrets hides, relative to
// the home directory (shell globs allowed). ~/.bashrc and ~/.gitconfig stay
// readable: tools need them and they hold no keys by convention.
var BuiltinReadDeny = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube",
	".docker/config.json", ".netrc", ".git-credentials", ".config/git/credentials",
	".config/gh", ".npmrc", ".pypirc", ".cargo/credentials*", ".password-store",
	".local/share/keyrings", ".vault-token", ".terraform.d/credentials.tfrc.json",
	// Browser profiles: saved passwords, cookies, session tokens.
	".mozilla/firefox", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
	"snap/firefox/common/.mozilla/firefox", "snap/chromium/common/chromium",
	"Library/Keychains", "Library/Application Support/Google/Chrome",
	"Library/Application Support/Firefox", "Library/Application Support/BraveSoftware",
	// Other agents' credentials.
	".codex/auth.json", ".claude.json", ".claude/.credentials.json",
}

// envSecrets are the built-in credential stores where the user's
// environment moved them: the entries under ~/.config and ~/.local/share
// below $XDG_CONFIG_HOME and $XDG_DATA_HOME, and the stores tools find
// through their own variables. Only absolute values count: a relative one
// would change meaning with the working directory.
func envSecrets(getenv func(string) string) []string {
	var out []string
	abs := func(v string) (string, bool) {
		v = strings.TrimSpace(v)
		if !filepath.IsAbs(v) {
			return "", false
		}
		return filepath.Clean(v), true
	}
	for prefix, env := range map[string]string{".config/": "XDG_CONFIG_HOME", ".local/share/": "XDG_DATA_HOME"} {
		base, ok := abs(getenv(env))
		if !ok {
			continue
		}
		for _, rel := range BuiltinReadDeny {
			if rest, ok := strings.CutPrefix(rel, prefix); ok {
				out = append(out, filepath.Join(base, rest))
			}
		}
	}
	for _, v := range []struct{ env, rel string }{
		{"GNUPGHOME", ""}, {"DOCKER_CONFIG", "config.json"}, {"PASSWORD_STORE_DIR", ""},
		{"AWS_SHARED_CREDENTIALS_FILE", ""}, {"AWS_CONFIG_FILE", ""},
		{"CLOUDSDK_CONFIG", ""}, {"GH_CONFIG_DIR", ""},
	} {
		if p, ok := abs(getenv(v.env)); ok {
			out = append(out, filepath.Join(p, v.rel))
		}
	}
	// KUBECONFIG is a list of files, each a credential.
	for _, f := range filepath.SplitList(getenv("KUBECONFIG")) {
		if p, ok := abs(f); ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ReadPolicy is what a sandboxed command may read. The zero value is
// deny-secrets with the built-in list under $HOME.
type ReadPolicy struct {
	// Access is the read policy; empty means deny-secrets.
	Access ReadAccess `json:"access,omitempty"`
	// Deny are more paths to hide under deny-secrets: absolute paths or
	// shell globs (the caller expands ~).
	Deny []string `json:"deny,omitempty"`
	// Allow are exceptions to the deny list: a denied path equal to or
	// inside one is readable.
	Allow []string `json:"allow,omitempty"`
	// ReadableRoots are what restricted mode adds to the platform's
	// defaults: absolute paths or globs.
	ReadableRoots []string `json:"readableRoots,omitempty"`
	// Home is the directory whose credential stores deny-secrets hides;
	// empty means $HOME.
	Home string `json:"home,omitempty"`
}

func (p Policy) readAccess() ReadAccess {
	if p.Reads.Access == "" {
		return ReadDenySecrets
	}
	return p.Reads.Access
}

func (p Policy) home() string {
	if p.Reads.Home != "" {
		return filepath.Clean(p.Reads.Home)
	}
	if h := os.Getenv("HOME"); filepath.IsAbs(h) && filepath.Clean(h) != "/" {
		return filepath.Clean(h)
	}
	return ""
}

// ReadDenyPatterns lists what the read policy hides, as absolute paths or
// globs: the built-in credential stores under the home directory, then the
// policy's own ReadDeny. Empty under read_access = "full".
func (p Policy) ReadDenyPatterns() []string {
	if !p.Sandboxed() || p.readAccess() == ReadFull {
		return nil
	}
	var out []string
	if h := p.home(); h != "" {
		for _, rel := range BuiltinReadDeny {
			out = append(out, filepath.Join(h, rel))
		}
	}
	out = append(out, envSecrets(os.Getenv)...)
	for _, d := range p.Reads.Deny {
		out = append(out, filepath.Clean(d))
	}
	return out
}

// HiddenPath is one existing path the read policy hides in a run (the
// Linux helper's spec carries it).
type HiddenPath = linux.HiddenPath

// readCache keeps the last resolution of the read policy: most runs of a
// session share one policy, and the stat work stays off the start-up path.
// An entry lives briefly, so a secret created meanwhile is hidden from the
// next run after that.
var readCache = struct {
	sync.Mutex
	key  string
	at   time.Time
	hide []HiddenPath
	err  error
}{}

const readCacheTTL = 500 * time.Millisecond

// HiddenPaths resolves the read policy for a run: the denied paths that
// exist now, with their targets, minus the read_allow exceptions. It refuses
// a denied path reached through a symbolic link inside a writable root: the
// command could point it elsewhere between this check and the mask.
func (p Policy) HiddenPaths(roots []protect.Root) ([]HiddenPath, error) {
	return p.hiddenPaths(roots, pathmemo.New())
}

// hiddenPaths is HiddenPaths with the run's memo of the file system.
func (p Policy) hiddenPaths(roots []protect.Root, m *pathmemo.Memo) ([]HiddenPath, error) {
	pats := p.ReadDenyPatterns()
	if len(pats) == 0 {
		return nil, nil
	}
	writable := make([]string, len(roots))
	for i, r := range roots {
		writable[i] = r.Path
	}
	key := strings.Join(pats, "\x00") + "\x01" + strings.Join(p.Reads.Allow, "\x00") + "\x01" + strings.Join(writable, "\x00")
	readCache.Lock()
	defer readCache.Unlock()
	if readCache.key == key && time.Since(readCache.at) < readCacheTTL {
		return readCache.hide, readCache.err
	}
	hide, err := resolveHidden(pats, p.Reads.Allow, writable, m)
	readCache.key, readCache.at, readCache.hide, readCache.err = key, time.Now(), hide, err
	return hide, err
}

func resolveHidden(pats, allow, writable []string, m *pathmemo.Memo) ([]HiddenPath, error) {
	allowed := make([]string, 0, len(allow))
	for _, a := range allow {
		allowed = append(allowed, m.ResolveExisting(filepath.Clean(a)))
	}
	var out []HiddenPath
	seen := map[string]bool{}
	for _, pat := range pats {
		paths := []string{pat}
		if strings.ContainsAny(pat, "*?[") {
			paths, _ = filepath.Glob(pat) // the pattern was checked when the policy was built
		}
		for _, path := range paths {
			if _, err := m.Lstat(path); err != nil {
				continue // nothing to hide; one created later is the command's own
			}
			if link, ok := symlinkIn(path, writable, m); ok {
				return nil, refuse("the read policy hides %s, but it is reached through the symbolic link %s, which the command could change: move the link out of the writable roots or add the path to read_allow", path, link)
			}
			target, err := m.EvalSymlinks(path)
			if err != nil {
				continue // a dangling link: nothing to read
			}
			st, err := m.Lstat(target) // target has no links left: its Lstat is its Stat
			if err != nil || seen[target] || covered(target, allowed) {
				continue
			}
			seen[target] = true
			h := HiddenPath{Path: path, Target: target, Dir: st.IsDir()}
			for _, a := range allowed {
				if h.Dir && a != target && pathutil.Within(target, a) {
					if _, err := os.Stat(a); err == nil {
						h.Allow = append(h.Allow, a)
					}
				}
			}
			out = append(out, h)
		}
	}
	for _, h := range out {
		for _, w := range writable {
			if pathutil.Within(h.Target, w) {
				return nil, refuse("the writable root %s is inside %s, which the read policy hides: add it to read_allow or run with read_access = \"full\"", w, h.Path)
			}
		}
	}
	// Outer directories first: a mask inside a masked directory is moot.
	slices.SortFunc(out, func(a, b HiddenPath) int { return strings.Compare(a.Target, b.Target) })
	kept := out[:0]
	for _, h := range out {
		if n := len(kept); n > 0 && kept[n-1].Dir && pathutil.Within(kept[n-1].Target, h.Target) {
			continue
		}
		kept = append(kept, h)
	}
	return kept, nil
}

// checkCwd refuses a working directory the read policy hides: the command
// could not even start there.
func checkCwd(cwd string, hide []HiddenPath, m *pathmemo.Memo) error {
	real := m.ResolveExisting(cwd)
	for _, h := range hide {
		if pathutil.Within(h.Target, real) {
			return refuse("the working directory %s is inside %s, which the read policy hides: add it to read_allow or run with read_access = \"full\"", cwd, h.Path)
		}
	}
	return nil
}

// covered reports whether an allow entry equals target or contains it.
func covered(target string, allowed []string) bool {
	for _, a := range allowed {
		if pathutil.Within(a, target) {
			return true
		}
	}
	return false
}

// symlinkIn finds a symbolic link on the way to path that lies inside one of
// the writable directories.
func symlinkIn(path string, writable []string, m *pathmemo.Memo) (string, bool) {
	if len(writable) == 0 {
		return "", false
	}
	cur := string(filepath.Separator)
	for _, part := range strings.Split(strings.TrimPrefix(path, cur), string(filepath.Separator)) {
		next := filepath.Join(cur, part)
		st, err := m.Lstat(next)
		if err != nil {
			return "", false
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			for _, w := range writable {
				if pathutil.Within(w, cur) {
					return next, true
				}
			}
			t, err := m.EvalSymlinks(next)
			if err != nil {
				return "", false
			}
			next = t
		}
		cur = next
	}
	return "", false
}

// ReadSummary is the read policy in a few words, for Summary.
func (p Policy) ReadSummary() string {
	switch p.readAccess() {
	case ReadFull:
		return "reads everything"
	case ReadRestricted:
		return fmt.Sprintf("reads only system directories, toolchains, shell and git config, the workspace and %d readable root(s); credential stores hidden", len(p.Reads.ReadableRoots))
	}
	extra := ""
	if n := len(p.Reads.Deny); n > 0 {
		extra = fmt.Sprintf(" and %d more path(s)", n)
	}
	if n := len(p.Reads.Allow); n > 0 {
		extra += fmt.Sprintf(", %d exception(s)", n)
	}
	return "reads all but credential stores (~/.ssh, ~/.aws, ...)" + extra
}

// Short is the read policy in two or three words, for dialogs and session
// keys: "credential stores hidden" or "reads everything".
func (r ReadPolicy) Short() string {
	switch r.Access {
	case ReadFull:
		return "reads everything"
	case ReadRestricted:
		return "reads restricted"
	}
	return "credential stores hidden"
}

// PlatformReadable are the system directories restricted mode lets every
// command read (Linux): programs, libraries, configuration, /proc and /sys,
// and the resolver's files that /etc/resolv.conf may point to.
var PlatformReadable = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/snap",
	"/var/lib", "/proc", "/sys", "/run/systemd/resolve", "/run/resolvconf",
}

// HomeReadable are the entries of the home directory restricted mode shows:
// the shell's and git's configuration and the usual toolchains (with
// their credential files still hidden).
var HomeReadable = []string{
	".bashrc", ".bash_profile", ".profile", ".zshrc", ".zshenv", ".zprofile", ".inputrc",
	".gitconfig", ".config/git", ".cargo", ".rustup", "go", ".pyenv", ".nvm", ".local/bin",
	".local/lib", ".deno", ".bun",
}

// RestrictedReadable lists what restricted mode may read besides the
// writable roots: the platform's defaults, the home's shell and git
// configuration and toolchains, the workspace and ReadableRoots (globs
// expanded). Nil unless the policy is restricted.
func (p Policy) RestrictedReadable() []string {
	return p.restrictedReadable(PlatformReadable)
}

// restrictedReadable is RestrictedReadable with the platform's own list of
// system directories.
func (p Policy) restrictedReadable(platform []string) []string {
	if !p.Sandboxed() || p.readAccess() != ReadRestricted {
		return nil
	}
	out := slices.Clone(platform)
	if h := p.home(); h != "" {
		for _, rel := range HomeReadable {
			out = append(out, filepath.Join(h, rel))
		}
	}
	out = append(out, p.Workspace...)
	for _, r := range p.Reads.ReadableRoots {
		if strings.ContainsAny(r, "*?[") {
			m, _ := filepath.Glob(r)
			out = append(out, m...)
			continue
		}
		out = append(out, r)
	}
	return out
}

// reachable keeps the hidden paths a restricted command could read at all:
// those inside a readable or writable path (Landlock denies the rest), and
// those holding one (the mask still hides it: read_allow shows it).
func reachable(hide []HiddenPath, readable []string) []HiddenPath {
	var out []HiddenPath
	for _, h := range hide {
		for _, r := range readable {
			rr := pathmemo.ResolveExisting(r)
			if pathutil.Within(rr, h.Target) || pathutil.Within(r, h.Path) || pathutil.Within(h.Target, rr) {
				out = append(out, h)
				break
			}
		}
	}
	return out
}

// tildePath shows path under home as ~/...
func tildePath(home, path string) string {
	if home != "" && pathutil.Within(home, path) && home != "/" {
		return "~" + strings.TrimPrefix(path, home)
	}
	return path
}

// readableLayers are the layers whose user caches the read policy lets the
// command read: the overlay reads its lower layers with the helper's
// rights, past the masks and Landlock rules that come after it, so a layer
// over or under a hidden path, or outside readable (restricted reads), is
// left out and its private cache used as it is.
func readableLayers(layers []toolcache.Layer, secrets []HiddenPath, readable []string) []toolcache.Layer {
	var out []toolcache.Layer
	for _, l := range layers {
		user := l.Lower[len(l.Lower)-1]
		ok := readable == nil || slices.ContainsFunc(readable, func(r string) bool { return pathutil.Within(r, user) })
		for _, s := range secrets {
			if pathutil.Within(s.Target, user) || pathutil.Within(user, s.Target) || pathutil.Within(s.Path, user) || pathutil.Within(user, s.Path) {
				ok = false
			}
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}
