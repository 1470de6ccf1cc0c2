package rules

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// decisionOf is the strictest decision of the rules matching argv, "" for
// none.
func decisionOf(rs *RuleSet, argv ...string) string {
	got := ""
	for _, r := range rs.Match(argv) {
		if got == "" || r.Decision > decisionFromString(got) {
			got = r.Decision.String()
		}
	}
	return got
}

func decisionFromString(s string) Decision {
	d, _ := ParseDecision(s)
	return d
}

func mustParse(t *testing.T, src string) *ParsedRules {
	t.Helper()
	p, err := ParseRules("t.rules", []byte(src))
	if err != nil {
		t.Fatalf("ParseRules: %v\n%s", err, src)
	}
	return p
}

// TestRulesCodexHostExecutableLastWins: a later host_executable for a name
// replaces the earlier one, in one file and across files.
func TestRulesCodexHostExecutableLastWins(t *testing.T) {
	p := mustParse(t, `
host_executable(name="git", paths=["/opt/old/git"])
host_executable(name="git", paths=["/usr/bin/git", "/usr/bin/git"])
`)
	if got := p.HostExecutables["git"]; !reflect.DeepEqual(got, []string{"/usr/bin/git"}) {
		t.Errorf("host executables for git = %q, want only the last definition, deduplicated", got)
	}

	dir := t.TempDir()
	writeRules(t, dir, "a.rules", `prefix_rule(pattern=["git", "status"])`+"\n"+`host_executable(name="git", paths=["/opt/old/git"])`+"\n")
	writeRules(t, dir, "b.rules", `host_executable(name="git", paths=["/usr/bin/git"])`+"\n")
	rs, err := LoadRules([]RuleSource{{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if got := decisionOf(rs, "/opt/old/git", "status"); got != "" {
		t.Errorf("/opt/old/git was listed only by the overridden definition, yet matched %q", got)
	}
	if got := decisionOf(rs, "/usr/bin/git", "status"); got != "allow" { // twin
		t.Errorf("/usr/bin/git status = %q, want allow", got)
	}
}

// TestRulesCodexHostExecutableEmptyPaths: paths=[] turns the basename
// fallback off for the name: a program named by a path matches no rule for
// its basename, whatever the path. The bare name still matches.
func TestRulesCodexHostExecutableEmptyPaths(t *testing.T) {
	dir := t.TempDir()
	writeRules(t, dir, "r.rules", `
prefix_rule(pattern=["git", "status"])
prefix_rule(pattern=["curl"], decision="forbidden")
host_executable(name="git", paths=[])
`)
	rs, err := LoadRules([]RuleSource{{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/usr/bin/git", "/bin/git", "/opt/x/git"} {
		if got := decisionOf(rs, p, "status"); got != "" {
			t.Errorf("%s status matched %q with paths=[]", p, got)
		}
	}
	if got := decisionOf(rs, "git", "status"); got != "allow" {
		t.Errorf("git status = %q, want allow", got)
	}
	// No host_executable for curl: any path falls back to its rules.
	if got := decisionOf(rs, "/usr/bin/curl", "x"); got != "forbidden" {
		t.Errorf("/usr/bin/curl = %q, want forbidden through the basename", got)
	}
}

// TestRulesCodexHostExecutableErrors: a path whose basename is not the name
// is a load error naming the file and line; so are relative paths and names
// With a slash. The twin, a matching path, loads.
func TestRulesCodexHostExecutableErrors(t *testing.T) {
	cases := []struct{ body, want string }{
		{"\n\nhost_executable(name=\"git\", paths=[\"/usr/bin/gitx\"])\n", `t.rules:3: host_executable("git") path "/usr/bin/gitx" must end in "git"`},
		{"host_executable(name=\"git\", paths=[\"/usr/bin/git/..\"])\n", "t.rules:1"},
		{"host_executable(name=\"git\", paths=[\"/usr/bin/sh\"])\n", `must end in "git"`},
		{"host_executable(name=\"git\", paths=[\"bin/git\"])\n", "absolute"},
		{"host_executable(name=\"bin/git\", paths=[])\n", "bare program name"},
		{"host_executable(name=\"..\", paths=[])\n", "bare program name"},
		{"host_executable(name=\"git\", paths=[3])\n", "must be strings"},
	}
	for _, c := range cases {
		_, err := ParseRules("t.rules", []byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to say %q", c.body, err, c.want)
		}
	}
	home, _ := os.UserHomeDir()
	p := mustParse(t, `host_executable(name="git", paths=["/usr/bin/git", "~/.local/bin/git"])`)
	if want := []string{"/usr/bin/git", filepath.Join(home, ".local/bin/git")}; !reflect.DeepEqual(p.HostExecutables["git"], want) {
		t.Errorf("paths = %q, want %q", p.HostExecutables["git"], want)
	}
}

// TestRulesCodexExamplesSeeHostExecutables: match examples that name the
// program by a path match through the basename, with the file's
// host_executable entries (wherever they are in the file).
func TestRulesCodexExamplesSeeHostExecutables(t *testing.T) {
	mustParse(t, `prefix_rule(pattern=["git", "status"], match=["/usr/bin/git status"])`)
	_, err := ParseRules("t.rules", []byte("prefix_rule(pattern=[\"git\", \"status\"], match=[\"/usr/bin/git status\"])\nhost_executable(name=\"git\", paths=[\"/opt/bin/git\"])\n"))
	if err == nil || !strings.Contains(err.Error(), "t.rules:1") || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("an example through an unlisted path must fail at its line: %v", err)
	}
	mustParse(t, "prefix_rule(pattern=[\"git\"], not_match=[\"/opt/x/git\"])\nhost_executable(name=\"git\", paths=[\"/usr/bin/git\"])\n")
}

// TestRulesCodexRulesFilesCountLikeDirectories: host_executable (and
// network_rule) in a --rules file take effect through the rule book, and a
// later --rules file overrides a rules directory's definition.
func TestRulesCodexRulesFilesCountLikeDirectories(t *testing.T) {
	dir := t.TempDir()
	writeRules(t, dir, "user.rules", `prefix_rule(pattern=["git", "status"])`+"\n")
	extra := writeRules(t, t.TempDir(), "extra.rules", `host_executable(name="git", paths=["/usr/bin/git"])
network_rule(host="example.com", protocol="https", decision="deny")
`)
	book, err := NewRuleBook([]RuleSource{{Dir: dir}}, []string{extra})
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := book.Current()
	if got := decisionOf(rs, "/opt/evil/git", "status"); got != "" {
		t.Errorf("--rules host_executable ignored: /opt/evil/git status = %q", got)
	}
	if got := decisionOf(rs, "/usr/bin/git", "status"); got != "allow" {
		t.Errorf("/usr/bin/git status = %q, want allow", got)
	}
	if n := rs.NetworkRules(); len(n) != 1 || n[0].Decision != Forbidden {
		t.Errorf("--rules network rules = %+v", n)
	}

	// A directory given as --rules stands for its *.rules files; an empty
	// one is an error, not silently no rules.
	rs, err = LoadRuleFiles([]string{dir})
	if err != nil || decisionOf(rs, "git", "status") != "allow" {
		t.Errorf("--rules DIR: %v", err)
	}
	empty := t.TempDir()
	if _, err := LoadRuleFiles([]string{empty}); err == nil || !strings.Contains(err.Error(), empty) || !strings.Contains(err.Error(), "no *.rules") {
		t.Errorf("--rules EMPTY-DIR: %v", err)
	}
}

// TestRulesCodexRulesDirIsAFile: a rules directory that is a file is an
// error naming it; a missing directory is no error (twin).
func TestRulesCodexRulesDirIsAFile(t *testing.T) {
	f := writeRules(t, t.TempDir(), "codex-rules", `prefix_rule(pattern=["ls"])`+"\n")
	_, err := LoadRules([]RuleSource{{Dir: f}})
	if err == nil || !strings.Contains(err.Error(), f) || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("rules dir that is a file: %v", err)
	}
	if _, err := NewRuleBook(UserSources(t.TempDir(), f, "", nil), nil); err == nil {
		t.Error("codex_rules_dir that is a file must fail the load")
	}
	if _, err := LoadRules([]RuleSource{{Dir: filepath.Join(t.TempDir(), "missing")}}); err != nil {
		t.Errorf("a missing rules dir is no error: %v", err)
	}
}

// TestRulesCodexUntrustedHostExecutable: an untrusted workspace cannot
// switch the basename fallback off to take /bin/rm out of the user's forbid
// rule.
func TestRulesCodexUntrustedHostExecutable(t *testing.T) {
	user, ws := t.TempDir(), t.TempDir()
	writeRules(t, user, "user.rules", `prefix_rule(pattern=["rm"], decision="forbidden")`+"\n")
	writeRules(t, filepath.Join(ws, ".warden", "rules"), "ws.rules", `host_executable(name="rm", paths=[])`+"\n")
	rs, err := LoadRules(UserSources(user, "", ws, nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := decisionOf(rs, "/bin/rm", "-rf", "x"); got != "forbidden" {
		t.Errorf("untrusted host_executable took /bin/rm out of the forbid rule: %q", got)
	}
	if len(rs.Warnings) == 0 {
		t.Error("no warning for the ignored host_executable")
	}
}

// TestRulesCodexNetworkRule: decision "deny" is forbidden, Codex's protocol
// names are accepted (https_connect and http-connect are https), others are
// errors at their line; hosts are normalized as Codex does.
func TestRulesCodexNetworkRule(t *testing.T) {
	p := mustParse(t, `
network_rule(host="a.example", protocol="http", decision="allow")
network_rule(host="b.example", protocol="https", decision="prompt")
network_rule(host="c.example", protocol="https_connect", decision="deny", justification="exfil")
network_rule(host="d.example", protocol="http-connect", decision="forbidden")
network_rule(host="e.example", protocol="socks5_tcp", decision="allow")
network_rule(host="f.example", protocol="socks5_udp", decision="deny")
network_rule(host="Example.COM:443", protocol="https", decision="allow")
network_rule(host="[::1]:8080", protocol="http", decision="allow")
network_rule(host="g.example.", protocol="http", decision="allow")
`)
	type nr struct{ host, proto, decision string }
	var got []nr
	for _, r := range p.NetworkRules {
		got = append(got, nr{r.Host, r.Protocol, r.Decision.String()})
	}
	want := []nr{
		{"a.example", "http", "allow"}, {"b.example", "https", "prompt"}, {"c.example", "https", "forbidden"},
		{"d.example", "https", "forbidden"}, {"e.example", "socks5_tcp", "allow"}, {"f.example", "socks5_udp", "forbidden"},
		{"example.com", "https", "allow"}, {"::1", "http", "allow"}, {"g.example", "http", "allow"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("network rules\n got %v\nwant %v", got, want)
	}
	if p.NetworkRules[2].Source != "t.rules:4" || p.NetworkRules[2].Justification != "exfil" {
		t.Errorf("source/justification = %+v", p.NetworkRules[2])
	}

	bad := []struct{ body, want string }{
		{"\nnetwork_rule(host=\"x.example\", protocol=\"ftp\", decision=\"allow\")\n", "t.rules:2: network_rule protocol \"ftp\""},
		{"network_rule(host=\"x.example\", protocol=\"HTTPS\", decision=\"allow\")\n", "protocol"},
		{"network_rule(host=\"x.example\", protocol=\"socks5\", decision=\"allow\")\n", "protocol"},
		{"network_rule(host=\"x.example\", protocol=\"http\", decision=\"block\")\n", `t.rules:1: network_rule: unknown decision "block"`},
		{"network_rule(host=\"*example.com\", protocol=\"https\", decision=\"allow\")\n", "the only wildcard is a leading"},
		{"network_rule(host=\"https://x.example\", protocol=\"https\", decision=\"allow\")\n", "without scheme or path"},
		{"network_rule(host=\"x.example/p\", protocol=\"https\", decision=\"allow\")\n", "without scheme or path"},
		{"network_rule(host=\"a b\", protocol=\"https\", decision=\"allow\")\n", "spaces"},
		{"network_rule(host=\"  \", protocol=\"https\", decision=\"allow\")\n", "empty"},
		{"network_rule(host=\"[::1\", protocol=\"https\", decision=\"allow\")\n", "unclosed"},
		{"network_rule(host=\"[::1]x\", protocol=\"https\", decision=\"allow\")\n", "after the address"},
		{"network_rule(host=\"x.example\", protocol=\"https\", decision=\"allow\", justification=\" \")\n", "blank"},
		{"network_rule(host=\"x.example\", protocol=\"https\")\n", "missing argument for decision"},
	}
	for _, c := range bad {
		_, err := ParseRules("t.rules", []byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to say %q", c.body, err, c.want)
		}
	}
}
