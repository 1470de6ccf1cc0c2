// Package protect says what stays read-only inside a writable root. It
// names the entries that configure tools which run code without the user
// running the project's own tooling: every version control system (VCSes:
// what each executes or obeys, apart from its data), the shell on entering
// the directory (direnv, mise, and the files their configuration sources or
// loads: shellenv.Targets), editors opening the folder, MCP servers, Warden
// and other agents. A patch to one needs the user's approval (Rel); the
// sandbox holds them read-only at any depth (Matcher). One answer, so the
// two never disagree.
//
// It also finds them: Root is a writable root with what stays held in it
// (AtTop, a home directory's dot-entries with HomeHeld, PATH directories
// with PathHeld); the bounded scan (ScanRoots, StartRepoScan, kept current
// by a fanotify index in a long-lived process and a store of listings
// between runs) finds repositories and protected names deeper down;
// SplitGitDirs splits each VCS's metadata into writable data and read-only
// configuration, with what git's configuration and the shell-entry files
// point at. What a command created in a protected place is moved to the
// quarantine (QuarantineDir), each move a Removed, and the git step lists a
// run left are disarmed (WatchTodos); the mounts, Seatbelt rules and the
// watch during the run are the sandbox's.
package protect
