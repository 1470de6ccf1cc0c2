package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/sandbox/linux"
)

// The read-policy suite gives the sandbox a fake home holding every
// credential store of the built-in list, and tries to read each one four
// ways; the twins read what must stay readable.

const secretText = "SECRET-VALUE"

// secretFiles are the entries of BuiltinReadDeny that are files; the others
// are directories.
var secretFiles = map[string]bool{
	".docker/config.json": true, ".netrc": true, ".git-credentials": true, ".config/git/credentials": true,
	".npmrc": true, ".pypirc": true, ".vault-token": true, ".terraform.d/credentials.tfrc.json": true,
	".codex/auth.json": true, ".claude.json": true, ".claude/.credentials.json": true,
}

// readHome is one test's world: a fake home full of secrets and a
// workspace beside it (or inside it).
type readHome struct {
	home, ws string
	secrets  []string // a readable file inside each secret (or the secret file)
}

func newReadHome(t testing.TB) *readHome {
	t.Helper()
	base := t.TempDir()
	h := &readHome{home: filepath.Join(base, "home"), ws: filepath.Join(base, "ws")}
	for _, d := range []string{h.home, h.ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel, content string) string {
		p := filepath.Join(h.home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, rel := range BuiltinReadDeny {
		switch {
		case strings.HasSuffix(rel, "*"):
			h.secrets = append(h.secrets, write(strings.TrimSuffix(rel, "*")+".toml", secretText))
		case secretFiles[rel]:
			h.secrets = append(h.secrets, write(rel, secretText))
		default:
			h.secrets = append(h.secrets, write(filepath.Join(rel, "secret"), secretText))
		}
	}
	write(".aws/config", "[default]\nregion = eu-west-1\n")
	write(".bashrc", "# shell config\nexport EDITOR=vi\n")
	write(".gitconfig", "[user]\n\tname = Read Policy Tester\n")
	write(".config/warden/config.toml", "[model]\napi_key = \"sk-in-config\"\n")
	if err := os.WriteFile(filepath.Join(h.ws, "notes.txt"), []byte("workspace notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *readHome) policy() Policy {
	p := escapePolicy()
	p.Workspace = []string{h.ws}
	p.Reads.Home = h.home
	return p
}

func (h *readHome) run(t *testing.T, script string, p Policy) (Result, error) {
	t.Helper()
	return Run(context.Background(), Command{
		Argv: []string{"/bin/sh", "-c", script}, Cwd: h.ws, Policy: p, Helper: testHelper,
		Env:     EnvPolicy{Set: map[string]string{"HOME": h.home, "WS": h.ws, "GIT_CONFIG_NOSYSTEM": "1"}},
		Timeout: 20 * time.Second,
	})
}

func (h *readHome) mustRun(t *testing.T, script string, p Policy) Result {
	t.Helper()
	res, err := h.run(t, script, p)
	if err != nil {
		t.Fatalf("run %q: %v", script, err)
	}
	return res
}

// TestReadPolicyHidesEverySecret: every secret of the built-in list is
// unreadable through $HOME, a symbolic link in the workspace,
// /proc/self/root and a relative path; ~/.bashrc, ~/.gitconfig (through
// git) and the workspace stay readable.
func TestReadPolicyHidesEverySecret(t *testing.T) {
	h := newReadHome(t)
	if len(h.secrets) < 25 {
		t.Fatalf("only %d secrets in the fake home", len(h.secrets))
	}
	p := h.policy()
	rel, err := filepath.Rel(h.ws, h.home)
	if err != nil {
		t.Fatal(err)
	}
	attacks := 0
	for i, s := range h.secrets {
		inHome := strings.TrimPrefix(s, h.home+"/")
		ways := map[string]string{
			"home":     `cat "$HOME/` + inHome + `"`,
			"symlink":  `ln -sf "$HOME/` + inHome + `" link` + strconv.Itoa(i) + ` && cat link` + strconv.Itoa(i),
			"procroot": `cat "/proc/self/root$HOME/` + inHome + `"`,
			"relative": `cat "` + rel + "/" + inHome + `"`,
		}
		for way, script := range ways {
			res := h.mustRun(t, script, p)
			attacks++
			// A hidden directory cannot be entered; a hidden file reads empty.
			if strings.Contains(string(res.Output), secretText) || (res.ExitCode == 0 && len(res.Stdout) > 0) {
				t.Errorf("%s read through %s: exit %d %q", inHome, way, res.ExitCode, res.Output)
			}
		}
	}
	t.Logf("%d attacks on %d secrets", attacks, len(h.secrets))
	// Also hidden: Warden's config.toml when the caller lists it (config
	// does when it holds an API key).
	withConfig := p
	withConfig.Reads.Deny = []string{filepath.Join(h.home, ".config/warden/config.toml")}
	if res := h.mustRun(t, `cat "$HOME/.config/warden/config.toml"`, withConfig); len(res.Stdout) > 0 || strings.Contains(string(res.Output), "sk-in-config") {
		t.Errorf("config.toml with a key read: %q", res.Output)
	}

	twins := map[string]string{
		"bashrc":    `grep -q EDITOR "$HOME/.bashrc"`,
		"workspace": `grep -q notes notes.txt && grep -q notes "$WS/notes.txt"`,
		"gitconfig": `test "$(git config --global user.name)" = "Read Policy Tester"`,
		"home ls":   `ls -a "$HOME" | grep -q .bashrc`,
	}
	for name, script := range twins {
		if res := h.mustRun(t, script, p); res.ExitCode != 0 {
			t.Errorf("twin %s failed: %q", name, res.Output)
		}
	}
}

// TestReadPolicyDenialIsNamed: the result says which read the policy
// blocked, so the model and the dialog hear it.
func TestReadPolicyDenialIsNamed(t *testing.T) {
	h := newReadHome(t)
	res := h.mustRun(t, `cat "$HOME/.aws/credentials"`, h.policy())
	want := "read of ~/.aws/credentials denied by the sandbox's read policy"
	if !res.SandboxDenied || res.DenialReason != want {
		t.Errorf("denial %v %q, want %q (output %q)", res.SandboxDenied, res.DenialReason, want, res.Output)
	}
	// Twin: a missing file outside the hidden paths is no read-policy denial.
	res = h.mustRun(t, `cat "$HOME/.nothing-here"`, h.policy())
	if strings.Contains(res.DenialReason, "read policy") {
		t.Errorf("a missing file reported as a read-policy denial: %q", res.DenialReason)
	}
}

// TestReadPolicyFullAndAllow: read_access = full shows the secrets again,
// and read_allow re-exposes one path (a whole secret, or one file inside a
// hidden directory) while the rest stays hidden.
func TestReadPolicyFullAndAllow(t *testing.T) {
	h := newReadHome(t)
	full := h.policy()
	full.Reads.Access = ReadFull
	if res := h.mustRun(t, `cat "$HOME/.aws/secret" "$HOME/.npmrc"`, full); res.ExitCode != 0 || !strings.Contains(string(res.Stdout), secretText) {
		t.Errorf("full: %d %q", res.ExitCode, res.Output)
	}
	allow := h.policy()
	allow.Reads.Allow = []string{filepath.Join(h.home, ".npmrc"), filepath.Join(h.home, ".aws/config")}
	if res := h.mustRun(t, `cat "$HOME/.npmrc" && grep -q region "$HOME/.aws/config"`, allow); res.ExitCode != 0 {
		t.Errorf("read_allow did not re-expose: %q", res.Output)
	}
	for _, attack := range []string{`cat "$HOME/.aws/secret"`, `ls "$HOME/.aws"`, `cat "$HOME/.ssh/secret"`, `echo x > "$HOME/.aws/config"`, `grep -q SECRET "$HOME/.pypirc"`} {
		if res := h.mustRun(t, attack, allow); res.ExitCode == 0 {
			t.Errorf("with read_allow %q worked: %q", attack, res.Output)
		}
	}
	deny := h.policy()
	deny.Reads.Deny = []string{filepath.Join(h.ws, "*.env")}
	os.WriteFile(filepath.Join(h.ws, "prod.env"), []byte(secretText), 0o644)
	if res := h.mustRun(t, `cat prod.env`, deny); len(res.Stdout) > 0 {
		t.Errorf("read_deny glob in the workspace read: %q", res.Output)
	}
	if res := h.mustRun(t, `rm -f prod.env || mv prod.env x.txt; cat notes.txt`, deny); res.ExitCode != 0 {
		t.Errorf("twin: %q", res.Output)
	}
	if _, err := os.Stat(filepath.Join(h.ws, "prod.env")); err != nil {
		t.Errorf("the hidden file was removed or moved: %v", err)
	}
}

// TestReadPolicyHomeAsWorkspace: with the home directory writable, a mask
// cannot be removed, renamed, made readable or written through.
func TestReadPolicyHomeAsWorkspace(t *testing.T) {
	h := newReadHome(t)
	p := h.policy()
	p.Workspace = []string{h.home}
	for _, attack := range []string{
		`rm -rf "$HOME/.ssh" 2>/dev/null; cat "$HOME/.ssh/secret"`,
		`mv "$HOME/.ssh" "$HOME/ssh-old" && cat "$HOME/ssh-old/secret"`,
		`chmod 755 "$HOME/.ssh" && cat "$HOME/.ssh/secret"`,
		`chmod 644 "$HOME/.npmrc" && grep SECRET "$HOME/.npmrc"`,
		`echo x > "$HOME/.npmrc"`,
		`rm -f "$HOME/.npmrc"`,
		`mv "$HOME/.npmrc" "$HOME/npmrc" && cat "$HOME/npmrc"`,
		`ln "$HOME/.npmrc" "$HOME/hard" && cat "$HOME/hard"`,
		`cp -r "$HOME/.aws" "$HOME/aws-copy" && cat "$HOME/aws-copy/secret"`,
	} {
		res := h.mustRun(t, `cd "$HOME" && `+attack, p)
		if res.ExitCode == 0 || strings.Contains(string(res.Output), secretText) {
			t.Errorf("%s: exit %d %q", attack, res.ExitCode, res.Output)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(h.home, ".ssh/secret")); string(b) != secretText {
		t.Errorf("~/.ssh/secret changed: %q", b)
	}
	if res := h.mustRun(t, `cd "$HOME" && echo x > "$HOME/new.txt" && cat .bashrc >/dev/null`, p); res.ExitCode != 0 {
		t.Errorf("twin in a home workspace: %q", res.Output)
	}
}

// TestReadPolicyRefusesRewritableSymlink: a secret reached through a link
// the command could change is refused; the same link outside the writable
// roots is followed and its target hidden.
func TestReadPolicyRefusesRewritableSymlink(t *testing.T) {
	h := newReadHome(t)
	real := filepath.Join(filepath.Dir(h.home), "real-kube")
	os.MkdirAll(real, 0o755)
	os.WriteFile(filepath.Join(real, "config"), []byte(secretText), 0o644)
	os.RemoveAll(filepath.Join(h.home, ".kube"))
	if err := os.Symlink(real, filepath.Join(h.home, ".kube")); err != nil {
		t.Fatal(err)
	}
	p := h.policy()
	p.Workspace = []string{h.home}
	_, err := h.run(t, `cat "$HOME/.kube/config"`, p)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a secret behind a rewritable link ran: %v", err)
	}
	// Twin: the link outside the writable roots; its target is hidden,
	// whether reached through the link or directly.
	res := h.mustRun(t, `cat "$HOME/.kube/config" || cat "`+real+`/config"`, h.policy())
	if res.ExitCode == 0 || strings.Contains(string(res.Output), secretText) {
		t.Errorf("the link's target was read: %q", res.Output)
	}
	if res := h.mustRun(t, `cat "$HOME/.bashrc" >/dev/null`, h.policy()); res.ExitCode != 0 {
		t.Errorf("twin: %q", res.Output)
	}
}

// TestReadPolicyWithoutNamespaces: without a mount namespace the Landlock
// rules leave the hidden paths out, so the read-policy suite holds in the
// fallback as it does with namespaces: every secret unreadable every way
// (and beside links made before the run), the same twins, denials named,
// links followed to what they hide, restricted reads, read_allow. A hidden
// path inside a writable root (the home as the workspace), which Landlock
// cannot take out of the root's rule, is refused with the setting to
// change; read_access = full still runs there.
func TestReadPolicyWithoutNamespaces(t *testing.T) {
	if linux.Probe().LandlockABI < 1 {
		t.Skip("no Landlock: the fallback cannot run at all")
	}
	noNamespacesForTest = true
	defer func() { noNamespacesForTest = false }()
	h := newReadHome(t)
	if res := h.mustRun(t, `true`, h.policy()); res.Sandbox != "linux-landlock" {
		t.Fatalf("not the fallback: %+v", res)
	}
	t.Run("HidesEverySecret", TestReadPolicyHidesEverySecret)
	t.Run("RefusesRewritableSymlink", TestReadPolicyRefusesRewritableSymlink)
	t.Run("Restricted", TestReadPolicyRestricted)

	// Links beside a hidden path when the rules are made: a rule through
	// one would grant its target.
	os.Symlink(".aws", filepath.Join(h.home, "aws-link"))
	os.Symlink(".npmrc", filepath.Join(h.home, "npmrc-link"))
	os.Symlink("..", filepath.Join(h.home, ".config", "up-link"))
	for _, attack := range []string{`cat "$HOME/aws-link/secret"`, `cat "$HOME/.aws/secret"`, `cat "$HOME/npmrc-link"`, `cat "$HOME/.npmrc"`, `cat "$HOME/.config/up-link/.npmrc"`} {
		if res := h.mustRun(t, attack, h.policy()); res.ExitCode == 0 || strings.Contains(string(res.Output), secretText) {
			t.Errorf("%s read beside a link: %q", attack, res.Output)
		}
	}
	os.Symlink(".bashrc", filepath.Join(h.home, "bashrc-link"))
	if res := h.mustRun(t, `grep -q EDITOR "$HOME/bashrc-link" && ls "$HOME/.config/up-link/" >/dev/null`, h.policy()); res.ExitCode != 0 {
		t.Errorf("twin: a link to what is not hidden: %q", res.Output)
	}
	res := h.mustRun(t, `cat "$HOME/.aws/secret"`, h.policy())
	if want := "read of ~/.aws/secret denied by the sandbox's read policy"; !res.SandboxDenied || res.DenialReason != want {
		t.Errorf("denial %v %q, want %q (output %q)", res.SandboxDenied, res.DenialReason, want, res.Output)
	}

	allow := h.policy()
	allow.Reads.Allow = []string{filepath.Join(h.home, ".npmrc"), filepath.Join(h.home, ".aws/config")}
	if res := h.mustRun(t, `cat "$HOME/.npmrc" && grep -q region "$HOME/.aws/config"`, allow); res.ExitCode != 0 {
		t.Errorf("read_allow did not re-expose: %q", res.Output)
	}
	if res := h.mustRun(t, `cat "$HOME/.aws/secret"`, allow); res.ExitCode == 0 || strings.Contains(string(res.Output), secretText) {
		t.Errorf("with read_allow the rest of ~/.aws read: %q", res.Output)
	}

	home := h.policy()
	home.Workspace = []string{h.home}
	_, err := h.run(t, `cat "$HOME/.npmrc"`, home)
	var refused *RefusedError
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "writable root") || !strings.Contains(err.Error(), `read_access = "full"`) {
		t.Errorf("a secret inside a writable root ran without a mount namespace: %v", err)
	}
	full := home
	full.Reads.Access = ReadFull
	if res := h.mustRun(t, `cat "$HOME/.npmrc"`, full); res.ExitCode != 0 || res.Sandbox != "linux-landlock" {
		t.Errorf("full in the fallback: %+v", res)
	}
}

// TestReadPolicyRestricted: restricted reads show the system, the shell's
// and git's configuration, toolchains, the workspace and readable_roots;
// nothing else in the home, and the credential stores inside a toolchain
// stay hidden.
func TestReadPolicyRestricted(t *testing.T) {
	if linux.Probe().LandlockABI < 1 {
		t.Skip("no Landlock")
	}
	h := newReadHome(t)
	for rel, content := range map[string]string{"notes/plain.txt": "plain notes\n", ".cargo/bin/tool": "tool\n", "other/data.txt": "DATA-CONTENT\n"} {
		p := filepath.Join(h.home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	p := h.policy()
	p.Reads.Access = ReadRestricted
	p.Reads.ReadableRoots = []string{filepath.Join(h.home, "notes")}
	for _, attack := range []string{
		`cat "$HOME/other/data.txt"`,
		`ls "$HOME"`,
		`grep -q SECRET "$HOME/.cargo/credentials.toml"`,
		`cat "$HOME/.aws/secret"`,
		`cat "$HOME/.npmrc" | grep -q SECRET`,
		`cat "/proc/self/root$HOME/other/data.txt"`,
	} {
		if res := h.mustRun(t, attack, p); res.ExitCode == 0 || strings.Contains(string(res.Output), secretText) || strings.Contains(string(res.Output), "DATA-CONTENT") {
			t.Errorf("restricted: %s worked: %q", attack, res.Output)
		}
	}
	for _, twin := range []string{
		`grep -q EDITOR "$HOME/.bashrc"`,
		`test "$(git config --global user.name)" = "Read Policy Tester"`,
		`grep -q tool "$HOME/.cargo/bin/tool"`,
		`grep -q plain "$HOME/notes/plain.txt"`,
		`grep -q notes notes.txt && echo new > new.txt && cat new.txt`,
		`ls /usr/bin >/dev/null && cat /etc/passwd >/dev/null && cat /proc/self/status >/dev/null`,
	} {
		if res := h.mustRun(t, twin, p); res.ExitCode != 0 {
			t.Errorf("restricted twin %s failed: %q", twin, res.Output)
		}
	}
	// The twin of the first attack: the same file under deny-secrets.
	if res := h.mustRun(t, `grep -q DATA-CONTENT "$HOME/other/data.txt"`, h.policy()); res.ExitCode != 0 {
		t.Errorf("deny-secrets hid an ordinary file: %q", res.Output)
	}
}

// TestReadPolicyRefusesWorkInsideASecret: a workspace or working directory
// inside a hidden path is refused with a reason, not run blind; with the
// path in read_allow it runs.
func TestReadPolicyRefusesWorkInsideASecret(t *testing.T) {
	h := newReadHome(t)
	inside := filepath.Join(h.home, ".aws")
	p := h.policy()
	p.Workspace = []string{inside}
	_, err := Run(context.Background(), Command{Argv: []string{"true"}, Cwd: inside, Policy: p, Helper: testHelper})
	if err == nil || !strings.Contains(err.Error(), "read policy hides") {
		t.Errorf("workspace inside ~/.aws: %v", err)
	}
	_, err = Run(context.Background(), Command{Argv: []string{"true"}, Cwd: filepath.Join(h.home, ".ssh"), Policy: h.policy(), Helper: testHelper})
	if err == nil || !strings.Contains(err.Error(), "working directory") {
		t.Errorf("cwd inside ~/.ssh: %v", err)
	}
	p.Reads.Allow = []string{inside}
	res, err := Run(context.Background(), Command{Argv: []string{"cat", "secret"}, Cwd: inside, Policy: p, Helper: testHelper})
	if err != nil || res.ExitCode != 0 || string(res.Stdout) != secretText {
		t.Errorf("with read_allow: %v %+v", err, res)
	}
}
