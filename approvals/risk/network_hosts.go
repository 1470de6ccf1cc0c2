package risk

import (
	"maps"
	"net"
	"slices"
	"strings"

	"github.com/wardenhq/warden/approvals/risk/gitfacts"
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/internal/lazyre"
)

// What a known host is, for the facts: a code host is not a package
// registry, though package managers fetch from it.
const (
	packageRegistry   = "a known package registry"
	codeHost          = "a code host"
	containerRegistry = "a container registry"
	modelHub          = "a model hub"
	downloadServer    = "a download server"
)

// knownHost is a host's name for people and what kind of host it is.
type knownHost struct{ name, kind string }

// knownHosts names the hosts package managers, toolchains and source forges
// fetch from. A host here is a fact for the user ("GitHub, a code host"),
// not a permission: uploads to a registry are still uploads.
var knownHosts = map[string]knownHost{
	"registry.npmjs.org":                   {"the npm registry", packageRegistry},
	"registry.yarnpkg.com":                 {"the Yarn registry (npm)", packageRegistry},
	"npm.pkg.github.com":                   {"GitHub Packages (npm)", packageRegistry},
	"pypi.org":                             {"PyPI, the Python Package Index", packageRegistry},
	"files.pythonhosted.org":               {"PyPI's file host", packageRegistry},
	"crates.io":                            {"crates.io (Rust)", packageRegistry},
	"index.crates.io":                      {"the crates.io index (Rust)", packageRegistry},
	"static.crates.io":                     {"crates.io's file host (Rust)", packageRegistry},
	"proxy.golang.org":                     {"the Go module proxy", packageRegistry},
	"sum.golang.org":                       {"the Go checksum database", packageRegistry},
	"rubygems.org":                         {"RubyGems", packageRegistry},
	"index.rubygems.org":                   {"the RubyGems index", packageRegistry},
	"repo.maven.apache.org":                {"Maven Central", packageRegistry},
	"repo1.maven.org":                      {"Maven Central", packageRegistry},
	"plugins.gradle.org":                   {"the Gradle plugin portal", packageRegistry},
	"services.gradle.org":                  {"Gradle distributions", downloadServer},
	"packagist.org":                        {"Packagist (PHP)", packageRegistry},
	"repo.packagist.org":                   {"Packagist (PHP)", packageRegistry},
	"api.nuget.org":                        {"NuGet", packageRegistry},
	"pub.dev":                              {"pub.dev (Dart)", packageRegistry},
	"repo.hex.pm":                          {"Hex (Elixir)", packageRegistry},
	"conda.anaconda.org":                   {"Anaconda (conda)", packageRegistry},
	"repo.anaconda.com":                    {"Anaconda (conda)", packageRegistry},
	"github.com":                           {"GitHub", codeHost},
	"codeload.github.com":                  {"GitHub (archives)", codeHost},
	"objects.githubusercontent.com":        {"GitHub (release files)", codeHost},
	"ghcr.io":                              {"the GitHub container registry", containerRegistry},
	"pkg-containers.githubusercontent.com": {"the GitHub container registry", containerRegistry},
	"registry-1.docker.io":                 {"Docker Hub", containerRegistry},
	"gitlab.com":                           {"GitLab", codeHost},
	"huggingface.co":                       {"Hugging Face", modelHub},
	"static.rust-lang.org":                 {"the Rust toolchain server", downloadServer},
	"registry.ollama.ai":                   {"the Ollama model registry", modelHub},
	"nodejs.org":                           {"Node.js downloads", downloadServer},
}

// KnownHost says what host is when Warden knows it ("the npm registry, a
// known package registry", "GitHub, a code host"), or "".
func KnownHost(host string) string {
	if k, ok := knownHosts[rules.NormalizeHost(host)]; ok {
		return k.name + ", " + k.kind
	}
	return ""
}

// RepoRemoteHosts lists the hosts of the remotes in the git configuration of
// the repository holding dir (read on the host, where the sandbox cannot
// have changed it), sorted.
func RepoRemoteHosts(dir string) []string {
	seen := map[string]bool{}
	for _, e := range gitfacts.RemoteURLs(dir) {
		if h := gitURLHost(e.Value); h != "" {
			seen[rules.NormalizeHost(h)] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// hostReach classifies where a host name or address points, for facts and
// for risk: a name or a public address is "", the others say where.
func HostReach(host string) (where string, high bool) {
	host = rules.NormalizeHost(host)
	switch host {
	case "localhost", "localhost.localdomain", "ip6-localhost":
		return "this machine (localhost)", false
	case "metadata.google.internal", "metadata", "instance-data":
		return "a cloud metadata service", true
	}
	if strings.HasSuffix(host, ".localhost") {
		return "this machine (localhost)", false
	}
	if NonCanonicalIP(host) {
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
func HostFacts(host string, remotes []string) []string {
	host = rules.NormalizeHost(host)
	var out []string
	known := KnownHost(host)
	remote := slices.Contains(remotes, host)
	switch {
	case known != "" && remote:
		out = append(out, host+" is "+known+", and hosts this repository's own git remote")
	case known != "":
		out = append(out, host+" is "+known)
	case remote:
		out = append(out, host+" hosts this repository's own git remote")
	}
	if where, _ := HostReach(host); where != "" {
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
func NonCanonicalIP(host string) bool {
	return numericHost().MatchString(host) && net.ParseIP(host) == nil
}
