package gitfacts

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/gitconfig"
	"github.com/wardenhq/warden/internal/lazyre"
)

// RemoteURLs are the url and pushurl entries of the remotes in the git
// configuration of the repository holding dir (read on the host, where the
// sandbox cannot have changed it), in the file's order.
func RemoteURLs(dir string) []gitconfig.Entry {
	cfg := ""
	if dir != "" {
		cfg = ConfigPath(dir)
	}
	if cfg == "" {
		return nil
	}
	entries, _ := gitconfig.Read(cfg)
	return slices.DeleteFunc(entries, func(e gitconfig.Entry) bool {
		return e.Section != "remote" || e.Sub == "" || e.Key != "url" && e.Key != "pushurl"
	})
}

// ConfigPath finds .git/config from dir upward, following worktree
// .git files to the common directory.
func ConfigPath(dir string) string {
	for d, n := filepath.Clean(dir), 0; n < 64; d, n = filepath.Dir(d), n+1 {
		gitPath := filepath.Join(d, ".git")
		info, err := os.Stat(gitPath)
		if err == nil && info.IsDir() {
			return filepath.Join(gitPath, "config")
		}
		if err == nil {
			data, err := os.ReadFile(gitPath)
			if err != nil {
				return ""
			}
			gitdir := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(data)), "gitdir:"))
			if !filepath.IsAbs(gitdir) {
				gitdir = filepath.Join(d, gitdir)
			}
			if common, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
				c := strings.TrimSpace(string(common))
				if !filepath.IsAbs(c) {
					c = filepath.Join(gitdir, c)
				}
				return filepath.Join(c, "config")
			}
			return filepath.Join(gitdir, "config")
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	return ""
}

// ScpLikeURL matches git's scp-like URL (user@host:path); its group is the
// host.
var ScpLikeURL = lazyre.New(`^(?:[\w.+-]+@)?([A-Za-z0-9][\w.-]*\.[A-Za-z]{2,}|[A-Za-z0-9][\w.-]*):[^/]`)

// URLRepo is a git URL's host and repository path, as a push's
// destination is compared with the repository's remotes: lower case,
// without user, password or port, a trailing slash or .git
// ("github.com/o/r"). "" when s is no URL (a remote's name).
func URLRepo(s string) string {
	host, p := "", ""
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			return ""
		}
		host, p = u.Hostname(), u.Path
	} else if m := ScpLikeURL().FindStringSubmatch(s); m != nil && strings.Contains(s, "@") {
		host = m[1]
		_, p, _ = strings.Cut(s[strings.Index(s, m[1])+len(m[1]):], ":")
	} else {
		return ""
	}
	p = strings.TrimSuffix(strings.Trim(p, "/"), ".git")
	return strings.ToLower(strings.TrimSuffix(host+"/"+p, "/"))
}

// RemoteRepos lists the repositories (URLRepo) of the remotes in the
// git configuration of the repository holding dir, as RepoRemoteHosts.
func RemoteRepos(dir string) []string {
	var out []string
	for _, e := range RemoteURLs(dir) {
		if r := URLRepo(e.Value); r != "" {
			out = append(out, r)
		}
	}
	return out
}
