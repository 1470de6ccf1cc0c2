package approvals

import (
	"net"
	"sort"
	"strings"

	"github.com/wardenhq/warden/internal/lazyre"
)

// knownRegistries names the hosts package managers and source forges serve
// packages from. A host here is a fact for the user ("a known package
// registry"), not a permission: uploads to a registry are still uploads.
var knownRegistries = map[string]string{
	"registry.npmjs.org":                   "the npm registry",
	"registry.yarnpkg.com":                 "the Yarn registry (npm)",
	"npm.pkg.github.com":                   "GitHub Packages (npm)",
	"pypi.org":                             "PyPI, the Python Package Index",
	"files.pythonhosted.org":               "PyPI's file host",
	"crates.io":                            "crates.io (Rust)",
	"index.crates.io":                      "the crates.io index (Rust)",
	"static.crates.io":                     "crates.io's file host (Rust)",
	"proxy.golang.org":                     "the Go module proxy",
	"sum.golang.org":                       "the Go checksum database",
	"rubygems.org":                         "RubyGems",
	"index.rubygems.org":                   "the RubyGems index",
	"repo.maven.apache.org":                "Maven Central",
	"repo1.maven.org":                      "Maven Central",
	"plugins.gradle.org":                   "the Gradle plugin portal",
	"services.gradle.org":                  "Gradle distributions",
	"packagist.org":                        "Packagist (PHP)",
	"repo.packagist.org":                   "Packagist (PHP)",
	"api.nuget.org":                        "NuGet",
	"pub.dev":                              "pub.dev (Dart)",
	"repo.hex.pm":                          "Hex (Elixir)",
	"conda.anaconda.org":                   "Anaconda (conda)",
	"repo.anaconda.com":                    "Anaconda (conda)",
	"github.com":                           "GitHub",
	"codeload.github.com":                  "GitHub (archives)",
	"objects.githubusercontent.com":        "GitHub (release files)",
	"ghcr.io":                              "the GitHub container registry",
	"pkg-containers.githubusercontent.com": "the GitHub container registry",
	"registry-1.docker.io":                 "Docker Hub",
	"gitlab.com":                           "GitLab",
	"huggingface.co":                       "Hugging Face",
	"static.rust-lang.org":                 "the Rust toolchain server",
	"registry.ollama.ai":                   "the Ollama model registry",
	"nodejs.org":                           "Node.js downloads",
}

// KnownRegistry returns what host is when it is a known package registry or
// source forge ("the npm registry"), or "".
func KnownRegistry(host string) string {
	return knownRegistries[NormalizeHost(host)]
}

// RepoRemoteHosts lists the hosts of the remotes in the git configuration of
// the repository holding dir (read on the host, where the sandbox cannot
// have changed it), sorted.
func RepoRemoteHosts(dir string) []string {
	seen := map[string]bool{}
	for _, e := range remoteURLs(dir) {
		if h := gitURLHost(e.Value); h != "" {
			seen[NormalizeHost(h)] = true
		}
	}
	return sortedKeys(seen)
}

// hostReach classifies where a host name or address points, for facts and
// for risk: a name or a public address is "", the others say where.
func hostReach(host string) (where string, high bool) {
	host = NormalizeHost(host)
	switch host {
	case "localhost", "localhost.localdomain", "ip6-localhost":
		return "this machine (localhost)", false
	case "metadata.google.internal", "metadata", "instance-data":
		return "a cloud metadata service", true
	}
	if strings.HasSuffix(host, ".localhost") {
		return "this machine (localhost)", false
	}
	if nonCanonicalIP(host) {
		return "an IP address in a disguised spelling", true
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return "", false
	case ip.IsLoopback():
		return "this machine (a loopback address)", false
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		// 169.254.169.254 is every cloud's metadata service (credentials).
		return "a link-local address (cloud metadata services live here)", true
	case ip.IsUnspecified():
		return "the unspecified address (this machine)", true
	case ip.IsPrivate():
		return "an address on the local network", false
	case ip.IsMulticast():
		return "a multicast address", true
	}
	return "", false
}

// hostFacts are the plain facts about a host that dialogs and risk share:
// a known registry, the repository's own remote, an address on this
// machine or the local network, or an unknown host.
func hostFacts(host string, remotes []string) []string {
	host = NormalizeHost(host)
	var out []string
	if name := KnownRegistry(host); name != "" {
		out = append(out, host+" is "+name+", a known package registry")
	}
	if i := sort.SearchStrings(remotes, host); i < len(remotes) && remotes[i] == host {
		out = append(out, host+" hosts this repository's own git remote")
	}
	if where, _ := hostReach(host); where != "" {
		out = append(out, host+" is "+where)
	}
	if len(out) == 0 {
		out = append(out, host+" is not a known package registry nor this repository's remote")
	}
	return out
}

// numericHost matches what C resolvers (inet_aton) read as an IPv4 address
// although it is not the dotted quad: 2852039166, 0xa9fea9fe, 169.254.43518,
// 0251.0376.0251.0376. Rules and facts compare hosts as written, so such a
// spelling of a forbidden address would pass for an unknown name.
var numericHost = lazyre.New(`^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}$`)

// nonCanonicalIP reports whether host is an IPv4 address in another
// spelling than the dotted quad.
func nonCanonicalIP(host string) bool {
	return numericHost().MatchString(host) && net.ParseIP(host) == nil
}

// validRuleHost reports whether host can be written as a network_rule as
// it is (what "Always allow" writes).
func validRuleHost(host string) bool {
	h, err := networkRuleHost(host)
	return err == nil && h == host && !strings.HasPrefix(h, "*.")
}
