package protect

import (
	"os"
	"slices"

	"github.com/wardenhq/warden/internal/shellenv"
)

// A directory's .envrc and mise config are protected names, but direnv
// checks only the .envrc the user allowed and mise trusts a config by its
// path: what they source (.envrc.local through source_env_if_exists, a
// script through mise's env._.source) runs in the user's shell at the next
// prompt there, unchecked, and what they load as variables (a .env through
// dotenv) can set PATH or PROMPT_COMMAND. Those files are held read-only
// like the configs, and one that is missing is moved away when the command
// makes it.

// protectShellEnv adds to each root the user works in the files its
// .envrc and mise configs pull in (shellenv.Targets, which leaves out what
// a link leads to). A shared root is left out: nobody's shell trusts a
// config there.
func protectShellEnv(roots []Root) {
	for i := range roots {
		r := &roots[i]
		if r.Shared {
			continue
		}
		for _, t := range shellenv.Targets(r.Path, os.Getenv) {
			if slices.Contains(r.Protected, t) || owningGitDir(r.Git, t) != "" {
				continue
			}
			r.Protected = append(r.Protected, t)
		}
	}
}
