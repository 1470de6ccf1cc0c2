package config

import (
	"os"
	"path/filepath"
	"strings"
)

// hostRuns are the files and directories under $HOME that the host runs or
// obeys later without asking anyone: a sandboxed command that could write
// them (the workspace is $HOME, as when an editor is opened in ~) would run
// its code outside the sandbox at the next login, shell, editor or command.
// They stay read-only like Warden's own files; missing ones are masked for
// the run and leave no trace.
var hostRuns = []struct{ path, why string }{
	// Shells read these at every start (interactive, login or any zsh).
	{".profile", "login shells"},
	{".bash_profile", "bash login shells"},
	{".bash_login", "bash login shells"},
	{".bashrc", "interactive bash"},
	{".bash_logout", "bash at logout"},
	{".zshenv", "every zsh, scripts included"},
	{".zprofile", "zsh login shells"},
	{".zshrc", "interactive zsh"},
	{".zlogin", "zsh login shells"},
	{".zlogout", "zsh at logout"},
	{".config/fish", "fish's config.fish, conf.d and functions"},
	// Remote access and session start.
	{".ssh", "authorized_keys lets anyone in; config's ProxyCommand runs at the next ssh"},
	{".pam_environment", "sets LD_PRELOAD and PATH for every login"},
	{".xprofile", "X session start"},
	{".xsession", "X session start"},
	{".xsessionrc", "X session start"},
	{".xinitrc", "startx"},
	{".config/autostart", "desktop session start"},
	{".config/systemd/user", "user services, started by systemd"},
	{".config/environment.d", "the environment of the user's systemd services"},
	{".local/share/applications", "desktop entries: a menu or file opening runs their Exec"},
	// Programs placed first on PATH by the usual ~/.profile shadow any
	// command the host runs (git, code, sh).
	{".local/bin", "on PATH"},
	{"bin", "on PATH"},
	// Editors run their init files at start, outside any sandbox.
	{".vimrc", "vim"},
	{".vim", "vim plugins and ftplugins"},
	{".config/nvim", "neovim init.lua and plugins"},
	{".emacs", "emacs"},
	{".emacs.d", "emacs init.el"},
}

// startupPaths are hostRuns under home, plus zsh's files under $ZDOTDIR.
func startupPaths(home string) []string {
	out := make([]string, 0, len(hostRuns)+4)
	// Those under ~/.config and ~/.local/share move with the XDG variables:
	// both places are kept.
	xdg := map[string]string{".config/": os.Getenv("XDG_CONFIG_HOME"), ".local/share/": os.Getenv("XDG_DATA_HOME")}
	for _, h := range hostRuns {
		out = append(out, filepath.Join(home, filepath.FromSlash(h.path)))
		for prefix, base := range xdg {
			if rest, ok := strings.CutPrefix(h.path, prefix); ok && filepath.IsAbs(base) {
				out = append(out, filepath.Join(base, filepath.FromSlash(rest)))
			}
		}
	}
	if z := os.Getenv("ZDOTDIR"); filepath.IsAbs(z) && filepath.Clean(z) != home {
		for _, n := range []string{".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout"} {
			out = append(out, filepath.Join(z, n))
		}
	}
	return out
}
