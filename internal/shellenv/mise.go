package shellenv

import (
	"path/filepath"
	"strings"
)

// MiseConfigs are the config files mise reads in a project directory,
// relative to it (MiseEnvNames adds those of MISE_ENV's environments):
// sandbox/protect's Files, Dirs and Subpaths hold each.
var MiseConfigs = []string{
	"mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml",
	filepath.Join(".mise", "config.toml"), filepath.Join(".config", "mise.toml"),
	filepath.Join(".config", "mise.local.toml"), filepath.Join(".config", "mise", "config.toml"),
}

// MiseEnvNames are the configs mise reads for the environments MISE_ENV
// names (mise.staging.toml...), as getenv gives it.
func MiseEnvNames(getenv func(string) string) []string {
	var out []string
	for _, env := range strings.Split(getenv("MISE_ENV"), ",") {
		env = strings.TrimSpace(env)
		if env == "" || env == "." || env == ".." || strings.ContainsAny(env, `/\`) {
			continue
		}
		out = append(out, "mise."+env+".toml", ".mise."+env+".toml", "mise."+env+".local.toml", ".mise."+env+".local.toml",
			filepath.Join(".config", "mise."+env+".toml"), filepath.Join(".config", "mise", "config."+env+".toml"))
	}
	return out
}
