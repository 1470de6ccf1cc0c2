package rules

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func writeRules(t *testing.T, dir, name, body string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseRulesErrors(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"syntax error", "prefix_rule(pattern=[\"ls\"]\n", "test.rules:2"},
		{"unknown decision", "prefix_rule(pattern=[\"ls\"], decision=\"maybe\")\n", `unknown decision "maybe"`},
		{"empty pattern", "\n\nprefix_rule(pattern=[])\n", "test.rules:3"},
		{"empty pattern message", "prefix_rule(pattern=[])\n", "pattern is empty"},
		{"empty string token", "prefix_rule(pattern=[\"git\", \"\"])\n", "empty string"},
		{"empty alternatives", "prefix_rule(pattern=[\"git\", []])\n", "empty list of alternatives"},
		{"non-string token", "prefix_rule(pattern=[\"git\", 3])\n", "must be a string or a list"},
		{"blank justification", "prefix_rule(pattern=[\"ls\"], justification=\"  \")\n", "justification must not be blank"},
		{"failing match example", "prefix_rule(\n  pattern=[\"git\", \"push\"],\n  match=[\"git pull\"],\n)\n", "test.rules:1"},
		{"failing match names example", "prefix_rule(pattern=[\"git\", \"push\"], match=[\"git pull\"])\n", `match example "git pull" does not match`},
		{"failing not_match", "prefix_rule(pattern=[\"git\"], not_match=[[\"git\", \"status\"]])\n", "not_match example"},
		{"bad example type", "prefix_rule(pattern=[\"git\"], match=[3])\n", "match example 3"},
		{"unknown keyword", "prefix_rule(pattern=[\"ls\"], colour=\"red\")\n", "unexpected keyword argument"},
		{"missing pattern", "prefix_rule(decision=\"allow\")\n", "missing argument for pattern"},
		{"unknown function", "allow_all()\n", "undefined: allow_all"},
		{"not UTF-8", "prefix_rule(pattern=[\"\xff\"])\n", "not UTF-8"},
		{"runaway loop", "def f():\n  for i in range(100000000):\n    pass\nf()\n", "too many steps"},
		{"network rule wildcard", "network_rule(host=\"a.*.example.com\", protocol=\"https\", decision=\"allow\")\n", "the only wildcard is a leading"},
		{"network rule protocol", "network_rule(host=\"example.com\", protocol=\"ftp\", decision=\"allow\")\n", "protocol"},
		{"host_executable relative", "host_executable(name=\"git\", paths=[\"bin/git\"])\n", "absolute"},
	}
	for _, c := range cases {
		_, err := ParseRules("test.rules", []byte(c.body))
		if err == nil {
			t.Errorf("%s: accepted %q", c.name, c.body)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %q", c.name, err, c.want)
		}
	}
}

func TestRuleMatching(t *testing.T) {
	src := `
prefix_rule(pattern=["git", "status"], decision="allow", match=["git status", "git status -s"], not_match=["git stash"])
prefix_rule(pattern=[["npm", "pnpm"], ["install", "i"]], decision="prompt", justification="installs packages")
prefix_rule(pattern=["rm", ["-rf", "-fr"]], decision="forbidden", justification="use git clean")
prefix_rule(pattern=["cargo"])  # decision defaults to allow
prefix_rule(pattern=["git", "push"], decision="prompt")
prefix_rule(pattern=["git"], decision="allow")
host_executable(name="git", paths=["/usr/bin/git"])
network_rule(host="example.com", protocol="https", decision="allow", justification="docs")
`
	parsed, err := ParseRules("r.rules", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(parsed.Rules) != 7 {
		t.Fatalf("%d rules, want 7 (first-position alternatives expand)", len(parsed.Rules))
	}
	if len(parsed.NetworkRules) != 1 || parsed.NetworkRules[0].Host != "example.com" {
		t.Errorf("network rules = %+v", parsed.NetworkRules)
	}
	dir := t.TempDir()
	writeRules(t, dir, "r.rules", src)
	rs, err := LoadRules([]RuleSource{{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		argv []string
		want string // strictest decision, "" for no match
		n    int
	}{
		{[]string{"git", "status"}, "allow", 2},
		{[]string{"git", "status", "-s"}, "allow", 2},
		{[]string{"git", "stash"}, "allow", 1},
		{[]string{"git", "push", "origin"}, "prompt", 2},
		{[]string{"npm", "install", "left-pad"}, "prompt", 1},
		{[]string{"pnpm", "i"}, "prompt", 1},
		{[]string{"npm", "ci"}, "", 0},
		{[]string{"yarn", "install"}, "", 0},
		{[]string{"rm", "-rf", "/"}, "forbidden", 1},
		{[]string{"rm", "-fr", "x"}, "forbidden", 1},
		{[]string{"rm", "-r", "x"}, "", 0},
		{[]string{"cargo", "build"}, "allow", 1},
		{[]string{"cargo"}, "allow", 1},
		{[]string{"carg"}, "", 0},
		{[]string{"/usr/bin/git", "status"}, "allow", 2},
		{[]string{"/opt/evil/git", "status"}, "", 0},
		{[]string{}, "", 0},
	}
	for _, c := range cases {
		m := rs.Match(c.argv)
		got := ""
		for _, r := range m {
			if got == "" || r.Decision.String() == "forbidden" || (r.Decision.String() == "prompt" && got == "allow") {
				got = r.Decision.String()
			}
		}
		if got != c.want || len(m) != c.n {
			t.Errorf("Match(%q) = %d rules, strictest %q; want %d, %q", c.argv, len(m), got, c.n, c.want)
		}
	}
	// Without a host_executable entry any absolute path falls back.
	rs2, _ := LoadRuleFiles([]string{writeRules(t, t.TempDir(), "a.rules", `prefix_rule(pattern=["ls"])`)})
	if len(rs2.Match([]string{"/bin/ls", "-l"})) != 1 {
		t.Error("/bin/ls should fall back to the ls rule when no host_executable lists ls")
	}
}

func TestWorkspaceRulesMayOnlyTighten(t *testing.T) {
	ws := t.TempDir()
	user := t.TempDir()
	writeRules(t, filepath.Join(ws, ".warden", "rules"), "ws.rules", `
prefix_rule(pattern=["curl"], decision="allow")
prefix_rule(pattern=["make", "deploy"], decision="forbidden")
`)
	for _, trusted := range []bool{false, true} {
		book, err := NewRuleBook(UserSources(user, "", ws, func(string) bool { return trusted }), nil)
		if err != nil {
			t.Fatal(err)
		}
		rs, _ := book.Current()
		curl := rs.Match([]string{"curl", "x"})
		if trusted != (len(curl) == 1) {
			t.Errorf("trusted=%v: curl allow rule matched %d times", trusted, len(curl))
		}
		if !trusted && (len(rs.Warnings) == 0 || !strings.Contains(rs.Warnings[0], "not trusted")) {
			t.Errorf("untrusted workspace: warnings %q", rs.Warnings)
		}
		if len(rs.Match([]string{"make", "deploy"})) != 1 {
			t.Errorf("trusted=%v: forbid rule must always apply", trusted)
		}
	}
}

func TestCodexRulesDirIsLoaded(t *testing.T) {
	codex := t.TempDir()
	writeRules(t, codex, "default.rules", `prefix_rule(pattern=["pytest"], decision="allow")`)
	book, err := NewRuleBook(UserSources(t.TempDir(), codex, "", nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := book.Current()
	if len(rs.Match([]string{"pytest", "-q"})) != 1 {
		t.Error("rules from the Codex rules dir are not loaded")
	}
}

func TestAppendAllowRule(t *testing.T) {
	dir := t.TempDir()
	// A file without a trailing newline gets one before the new line.
	writeRules(t, dir, DefaultRulesFile, `prefix_rule(pattern=["ls"], decision="allow")`)
	added, err := AppendAllowRule(dir, []string{"cargo", "test", "--all"})
	if err != nil || !added {
		t.Fatalf("added=%v err=%v", added, err)
	}
	added, err = AppendAllowRule(dir, []string{"cargo", "test", "--all"})
	if err != nil || added {
		t.Fatalf("second append: added=%v err=%v (must not duplicate)", added, err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, DefaultRulesFile))
	want := "prefix_rule(pattern=[\"ls\"], decision=\"allow\")\nprefix_rule(pattern=[\"cargo\", \"test\", \"--all\"], decision=\"allow\")\n"
	if string(data) != want {
		t.Errorf("default.rules =\n%s\nwant\n%s", data, want)
	}
	// Tokens with quotes survive the round trip through Starlark.
	tricky := []string{"echo", `say "hi"`, `back\slash`, "ünï"}
	if _, err := AppendAllowRule(dir, tricky); err != nil {
		t.Fatal(err)
	}
	rs, err := LoadRules([]RuleSource{{Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Match(tricky)) != 1 {
		t.Errorf("the appended rule for %q does not match it after reload", tricky)
	}
	if _, err := AppendAllowRule(dir, []string{"a\nb"}); err == nil {
		t.Error("a token with a newline was accepted")
	}
	if _, err := AppendAllowRule(dir, nil); err == nil {
		t.Error("an empty prefix was accepted")
	}
}

func TestAppendAllowRuleConcurrent(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// Half the writers add the same rule, half distinct ones.
			prefix := []string{"tool", "same"}
			if i%2 == 1 {
				prefix = []string{"tool", strings.Repeat("x", i)}
			}
			if _, err := AppendAllowRule(dir, prefix); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	data, _ := os.ReadFile(filepath.Join(dir, DefaultRulesFile))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 9 {
		t.Errorf("%d lines, want 9 (8 distinct + 1 shared):\n%s", len(lines), data)
	}
	if _, err := ParseRules("default.rules", data); err != nil {
		t.Errorf("result does not load: %v", err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

func TestRuleBookWatchReloads(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "rules") // does not exist yet
	book, err := NewRuleBook([]RuleSource{{Dir: dir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reports := make(chan error, 16)
	if err := book.Watch(ctx, func(err error) { reports <- err }); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, ok func(*RuleSet) bool) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			rs, _ := book.Current()
			if ok(rs) {
				return
			}
			select {
			case <-reports:
			case <-deadline:
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	os.MkdirAll(dir, 0o755)
	time.Sleep(100 * time.Millisecond)
	writeRules(t, dir, "a.rules", `prefix_rule(pattern=["make"], decision="forbidden")`)
	waitFor("the new rule", func(rs *RuleSet) bool { return len(rs.Match([]string{"make"})) == 1 })
	// A broken edit is reported and the last good rules stay.
	writeRules(t, dir, "a.rules", `prefix_rule(pattern=["make"]`)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case err := <-reports:
			if err == nil {
				continue
			}
			if !strings.Contains(err.Error(), "a.rules") {
				t.Errorf("report %q does not name the file", err)
			}
			rs, _ := book.Current()
			if len(rs.Match([]string{"make"})) != 1 {
				t.Error("broken edit dropped the last good rules")
			}
			return
		case <-deadline:
			t.Fatal("no report of the broken edit")
		}
	}
}

// TestRuleBookWatchSeesANewNestedDirectory: `mkdir -p` makes the rules
// directory and its parent at once; only the parent's creation is seen from
// the directory that existed, and the rules written right after still load.
func TestRuleBookWatchSeesANewNestedDirectory(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "warden", "rules")
	book, err := NewRuleBook([]RuleSource{{Dir: dir}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := book.Watch(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeRules(t, dir, "a.rules", `prefix_rule(pattern=["make"], decision="forbidden")`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if rs, _ := book.Current(); len(rs.Match([]string{"make"})) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the rules in a newly made nested directory were not loaded")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
