package gitconfig

// ProgramKey says whether the variable section[.sub].key (section and key
// in lower case) names a program git runs: its value is a command line,
// a path or a name found on PATH, run through the shell when it holds
// shell syntax. The callers grade the values (approvals) or hold the
// programs named by a path (Targets); a few of these keys also take
// values that run nothing (core.fsmonitor = true, credential.helper =
// store), which the callers tell apart.
func ProgramKey(section, sub, key string) bool {
	switch section + "." + key {
	case "core.fsmonitor", "core.pager", "core.editor", "sequence.editor", "core.sshcommand", "core.askpass",
		"core.gitproxy", "core.alternaterefscommand", "diff.external", "gpg.program", "interactive.difffilter",
		"uploadpack.packobjectshook", "web.browser", "credential.helper":
		return true
	}
	if sub == "" {
		return section == "pager" // pager.log = PROGRAM
	}
	switch section + "." + key {
	case "diff.textconv", "diff.command", "merge.driver", "filter.clean", "filter.smudge", "filter.process",
		"mergetool.cmd", "difftool.cmd", "browser.cmd", "man.cmd", "remote.uploadpack", "remote.receivepack",
		"remote.vcs", "gpg.defaultkeycommand", "sendemail.sendmailcmd",
		"sendemail.tocmd", "sendemail.cccmd", "sendemail.headercmd":
		return true
	}
	return false
}
