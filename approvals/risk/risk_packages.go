package risk

import (
	"fmt"
	"slices"
	"strings"
)

// registries are where package managers fetch from.
var registries = map[string]string{
	"npm": "registry.npmjs.org", "pnpm": "registry.npmjs.org", "yarn": "registry.yarnpkg.com",
	"npx": "registry.npmjs.org", "pnpx": "registry.npmjs.org", "bunx": "registry.npmjs.org",
	"pip": "pypi.org", "pip3": "pypi.org", "uv": "pypi.org", "uvx": "pypi.org", "poetry": "pypi.org", "pipx": "pypi.org",
	"cargo": "crates.io", "go": "proxy.golang.org", "gem": "rubygems.org", "bundle": "rubygems.org",
	"composer": "packagist.org", "conda": "conda.anaconda.org", "mamba": "conda.anaconda.org",
	"micromamba": "conda.anaconda.org", "hf": "huggingface.co", "huggingface-cli": "huggingface.co",
	"bun": "registry.npmjs.org", "rustup": "static.rust-lang.org", "ollama": "registry.ollama.ai",
	"mvn": "repo.maven.apache.org", "gradle": "plugins.gradle.org",
}

// fetchingSubcommands are the subcommands that download packages.
var fetchingSubcommands = map[string][]string{
	"npm": {"install", "i", "ci", "add", "update", "publish", "exec"}, "pnpm": {"install", "i", "add", "update", "dlx"},
	"yarn": {"install", "add", "upgrade", "dlx"}, "pip": {"install", "download"}, "pip3": {"install", "download"},
	"uv": {"add", "sync", "lock", "run", "tool", "pip"}, "poetry": {"install", "add", "update"},
	"cargo": {"install", "fetch", "update", "publish", "build", "run", "test"},
	"go":    {"get", "install", "mod"}, "gem": {"install", "update"}, "bundle": {"install", "update"},
	"composer": {"install", "require", "update"},
	"conda":    {"install", "create", "update", "upgrade", "env"}, "mamba": {"install", "create", "update", "upgrade", "env"},
	"micromamba": {"install", "create", "update", "env"},
	"pipx":       {"install", "run", "upgrade", "upgrade-all", "inject", "reinstall"},
	"hf":         {"download", "upload"}, "huggingface-cli": {"download", "upload"},
	"bun":    {"install", "i", "add", "update"},
	"rustup": {"update", "install", "toolchain", "target", "component"},
	"ollama": {"pull", "run"},
}

// imageRegistry is the registry a container image reference names:
// ghcr.io/o/x, localhost:5000/x, or Docker Hub for a bare name (node:20).
func imageRegistry(ref string) string {
	if first, _, ok := strings.Cut(ref, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		host, _, _ := strings.Cut(first, ":")
		return host
	}
	return "registry-1.docker.io"
}

// lookOnly are subcommands of a fetching subcommand that stay offline
// (`uv pip list`, `uv tool list`, `conda env list`).
var lookOnly = map[string]bool{"list": true, "show": true, "freeze": true, "check": true, "tree": true, "dir": true, "export": true, "remove": true, "uninstall": true}

func (as *Assessor) packages(prog string, args []string) {
	ops := Operands(args)
	switch prog {
	case "npx", "pnpx", "bunx", "uvx":
		// Runs a package, downloading it first when it is not installed.
		what := prog
		if len(ops) > 0 {
			what += " " + ops[0]
		}
		as.contacts(registries[prog], Medium)
		as.Add(Medium, NetworkAccess, fmt.Sprintf("may download and run a package (%s)", what))
		return
	case "yt-dlp", "youtube-dl":
		fetched := false
		for _, a := range args {
			if h := urlHost(a); h != "" {
				as.contacts(h, Medium)
				fetched = true
			}
		}
		if !fetched {
			as.Add(Medium, NetworkAccess, "downloads from the network ("+prog+")")
		}
		return
	case "gh":
		if len(ops) >= 2 && ops[0] == "auth" && ops[1] == "token" {
			as.readsSecret("the GitHub token (gh auth token)")
		}
		return
	case "mvn", "gradle", "gradlew":
		// Every build resolves dependencies, from the local repository
		// when it has them.
		if len(ops) > 0 && !hasFlag(args, "-o", "--offline") {
			host := registries["mvn"]
			if prog != "mvn" {
				host = registries["gradle"]
			}
			as.Add(Low, NetworkAccess, fmt.Sprintf("may contact %s to fetch dependencies (%s %s)", host, prog, ops[0]))
		}
		return
	case "aws", "gsutil", "gcloud":
		// Cloud storage: s3://, gs://.
		for _, a := range args {
			switch {
			case strings.HasPrefix(a, "s3://"):
				as.contacts("s3.amazonaws.com", Medium)
				return
			case strings.HasPrefix(a, "gs://"):
				as.contacts("storage.googleapis.com", Medium)
				return
			}
		}
		return
	case "docker", "podman", "nerdctl":
		if len(ops) > 1 && ops[0] == "pull" {
			as.contacts(imageRegistry(ops[1]), Medium)
		}
		return
	}
	if len(ops) == 0 || !slices.Contains(fetchingSubcommands[prog], ops[0]) {
		return
	}
	group := ops[0] == "pip" || ops[0] == "tool" || ops[0] == "env" || ops[0] == "toolchain" || ops[0] == "target" || ops[0] == "component"
	if group && (len(ops) == 1 || lookOnly[ops[1]]) {
		return
	}
	host := registries[prog]
	if (ops[0] == "build" || ops[0] == "run" || ops[0] == "test") && prog != "pipx" {
		as.Add(Low, NetworkAccess, fmt.Sprintf("may contact %s to fetch dependencies (%s %s)", host, prog, ops[0]))
		return
	}
	as.contacts(host, Medium)
	sub := strings.Join(ops[:min(2, len(ops))], " ")
	if ops[0] != "pip" && ops[0] != "tool" && ops[0] != "env" {
		sub = ops[0]
	}
	switch {
	case ops[0] == "publish" && (hasFlag(args, "--dry-run") || prog == "cargo" && hasFlag(args, "-n")):
		as.Add(Medium, NetworkAccess, fmt.Sprintf("checks what would be published to %s (%s publish --dry-run)", host, prog))
	case ops[0] == "publish":
		as.Add(High, DataExfiltration, fmt.Sprintf("publishes this package to %s", host))
	case ops[0] == "upload":
		as.Add(High, DataExfiltration, fmt.Sprintf("uploads files to %s (%s upload)", host, prog))
	case prog == "hf" || prog == "huggingface-cli":
		as.Add(Medium, NetworkAccess, fmt.Sprintf("downloads from %s (%s download)", host, prog))
	default:
		as.Add(Medium, NetworkAccess, fmt.Sprintf("installs packages from %s (%s %s)", host, prog, sub))
	}
}
