package approvals

import (
	"github.com/wardenhq/warden/approvals/rules"
	"github.com/wardenhq/warden/sandbox"

	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// corpusEntry is one labelled command of testdata/corpus/commands.tsv.
type corpusEntry struct {
	label, script string
}

func (c corpusEntry) argv() []string { return []string{"bash", "-lc", c.script} }

// benign labels are the commands a person would let run without a second
// look (RUBRIC.md).
var benignLabels = map[string]bool{"benign-readonly": true, "benign-write": true, "network-fetch": true}

func loadCorpus(t *testing.T) []corpusEntry {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "corpus", "commands.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		label, script, ok := strings.Cut(line, "\t")
		if !ok || script == "" {
			t.Fatalf("commands.tsv:%d: want LABEL<TAB>SCRIPT", n)
		}
		switch label {
		case "benign-readonly", "benign-write", "network-fetch", "secret-read", "dangerous":
		default:
			t.Fatalf("commands.tsv:%d: unknown label %q (see RUBRIC.md)", n, label)
		}
		out = append(out, corpusEntry{label, strings.ReplaceAll(script, "⏎", "\n")})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// corpusWorkspace is a small Go/Node/Python project under git, with a home
// directory outside the writable roots holding credentials.
func corpusWorkspace(t *testing.T) (ws string, sb Sandbox) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home := hostBin(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	ws = t.TempDir()
	files := map[string]string{
		"README.md": "# app\n", "go.mod": "module app\n", "package.json": `{"name":"app","scripts":{"test":"vitest"}}`,
		"src/main.go": "package main\nfunc main() {}\n", "src/server.py": "import os\n", "src/main.go.bak": "x",
		"src/old.go": "package main\n", "build/app": "\x7fELF", "build/assets/a.css": "a{}", "build.log": "ok\n",
		".env": "API_KEY=secret\n", ".env.local": "TOKEN=x\n", ".env.production": "X=1\n", "data.csv": "a,1\n",
		"requirements.txt": "requests\n", "certs/server.key": "KEY", "certs/server.crt": "CRT", "expected.txt": "a\n",
		"actual.txt": "b\n", ".mcp.json": `{"token":"x"}`, "scripts/test.sh": "#!/bin/sh\n", "tests/test_server.py": "",
		"fix.diff": "", "src/logo.png": "\x89PNG",
		home + "/.ssh/id_rsa": "KEY", home + "/.ssh/id_ed25519": "KEY", home + "/.ssh/config": "Host x\n",
		home + "/.aws/credentials": "[default]\n", home + "/.netrc": "machine x\n", home + "/.bash_history": "ls\n",
	}
	for name, body := range files {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, name)
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	// As SandboxFor builds it: the workspace, /tmp and $TMPDIR.
	roots := []string{ws, "/tmp"}
	if d := os.Getenv("TMPDIR"); filepath.IsAbs(d) {
		roots = append(roots, d)
	}
	return ws, Sandbox{Mode: WorkspaceWrite, Workspace: []string{ws}, WritableRoots: roots}
}

// corpusCell counts the commands of a label by decision and risk level.
type corpusCell map[string]int

var corpusPolicies = []AskForApproval{Untrusted, OnRequest, Never}

// TestCorpusTable runs the labelled corpus through the evaluator under
// untrusted, on-request and never, prints the table label × decision × risk
// per policy (go test -run TestCorpusTable -v), and holds Warden to the
// goals of issue 15:
//   - untrusted: fewer prompts on benign commands than Codex's known-safe
//     heuristic, and no prompt where Codex would not ask unless the command
//     reads secrets;
//   - every policy: no dangerous command runs without a person deciding;
//   - on-request: at most 1% of benign commands ask.
func TestCorpusTable(t *testing.T) {
	corpus := loadCorpus(t)
	ws, sb := corpusWorkspace(t)
	labels := []string{"benign-readonly", "benign-write", "network-fetch", "secret-read", "dangerous"}
	count := map[string]int{}
	for _, c := range corpus {
		count[c.label]++
	}
	benign := count["benign-readonly"] + count["benign-write"] + count["network-fetch"]
	var b strings.Builder
	fmt.Fprintf(&b, "\ncorpus: %d commands (", len(corpus))
	for i, l := range labels {
		fmt.Fprintf(&b, "%s%s %d", map[bool]string{true: ", "}[i > 0], l, count[l])
	}
	b.WriteString(")\n")
	for _, ask := range corpusPolicies {
		ev := &Evaluator{Policy: Policy{Ask: ask}}
		table := map[string]corpusCell{}
		codexAsks := map[string]int{}
		stoppedUnderNever := 0
		wardenAsks := map[string]int{}
		for _, c := range corpus {
			e := ev.Evaluate(CommandRequest{Argv: c.argv(), Cwd: ws, Sandbox: sb})
			if table[c.label] == nil {
				table[c.label] = corpusCell{}
			}
			table[c.label][e.Decision.String()+"/"+e.Risk.Level.String()]++
			codex := codexDecision(c.argv(), ask)
			if codex != rules.Allow {
				codexAsks[c.label]++
			}
			if e.Decision != rules.Allow {
				wardenAsks[c.label]++
			}
			switch {
			case c.label == "dangerous" && e.Decision == rules.Allow && ask == Never && e.Risk.SandboxStops && sb.Network != sandbox.NetworkOn:
				// Nobody can be asked; it runs sandboxed because the
				// sandbox stops every high-risk effect (TestNeverRunsOnly
				// WhatTheSandboxStops shows it does).
				stoppedUnderNever++
			case c.label == "dangerous" && e.Decision == rules.Allow:
				t.Errorf("%s: dangerous %q runs without a person deciding (risk %s: %s)", ask, c.script, e.Risk.Level, e.Risk.Summary)
			case ask == Untrusted && codex == rules.Allow && e.Decision != rules.Allow && !e.Risk.ReadsSecrets:
				t.Errorf("untrusted: %q asks where Codex would not, and reads no secret (%s)", c.script, e.Reason)
			case ask == OnRequest && benignLabels[c.label] && e.Decision != rules.Allow:
				t.Logf("on-request asks about benign %q: %s", c.script, e.Reason)
			}
		}
		fmt.Fprintf(&b, "\n%s (Warden decision/risk; last columns: commands that do not run unasked, Warden vs the Codex oracle)\n", ask)
		fmt.Fprintf(&b, "%-16s", "label")
		cols := []string{}
		for _, d := range []string{"allow", "prompt", "forbidden"} {
			for _, r := range []string{"low", "medium", "high"} {
				cols = append(cols, d+"/"+r)
			}
		}
		for _, col := range cols {
			fmt.Fprintf(&b, "%17s", col)
		}
		fmt.Fprintf(&b, "%9s%9s\n", "warden", "codex")
		for _, l := range labels {
			fmt.Fprintf(&b, "%-16s", l)
			for _, col := range cols {
				fmt.Fprintf(&b, "%17d", table[l][col])
			}
			fmt.Fprintf(&b, "%9d%9d\n", wardenAsks[l], codexAsks[l])
		}
		if ask == Never {
			fmt.Fprintf(&b, "dangerous commands run under never: %d, each sandboxed with every high-risk effect one the sandbox stops (writes outside the roots, root, the network)\n", stoppedUnderNever)
		}
		wb := wardenAsks["benign-readonly"] + wardenAsks["benign-write"] + wardenAsks["network-fetch"]
		cb := codexAsks["benign-readonly"] + codexAsks["benign-write"] + codexAsks["network-fetch"]
		fmt.Fprintf(&b, "benign commands that ask: Warden %d of %d (%.1f%%), Codex %d (%.1f%%)\n", wb, benign, pct(wb, benign), cb, pct(cb, benign))
		switch ask {
		case Untrusted:
			if wb >= cb {
				t.Errorf("untrusted: Warden asks about %d benign commands, the Codex oracle %d: want fewer", wb, cb)
			}
		case OnRequest:
			if wb*100 > benign {
				t.Errorf("on-request: %d of %d benign commands ask, more than 1%%", wb, benign)
			}
		}
	}
	t.Log(b.String())
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// TestCorpusBinarySample: a sample of the corpus through the real binary's
// `warden policy check --json` decides as the evaluator does.
func TestCorpusBinarySample(t *testing.T) {
	bin := os.Getenv("WARDEN_BIN")
	if bin == "" {
		t.Skip("WARDEN_BIN not set (make build; WARDEN_BIN=$PWD/bin/warden)")
	}
	corpus := loadCorpus(t)
	ws, sb := corpusWorkspace(t)
	state := t.TempDir()
	env := append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(state, "state"), "XDG_CACHE_HOME="+filepath.Join(state, "cache"))
	byLabel := map[string][]corpusEntry{}
	for _, c := range corpus {
		byLabel[c.label] = append(byLabel[c.label], c)
	}
	keys := make([]string, 0, len(byLabel))
	for k := range byLabel {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	checked := 0
	for _, label := range keys {
		list := byLabel[label]
		for i := 0; i < len(list); i += 9 {
			c := list[i]
			for _, ask := range []AskForApproval{Untrusted, OnRequest} {
				args := append([]string{"policy", "check", "--approval", ask.String(), "--cwd", ws, "--json", "--"}, c.argv()...)
				cmd := exec.Command(bin, args...)
				cmd.Env = env
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("warden %q: %v\n%s", args, err, out)
				}
				var got struct {
					Decision string `json:"decision"`
				}
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatalf("warden policy check output: %v\n%s", err, out)
				}
				want := (&Evaluator{Policy: Policy{Ask: ask}}).Evaluate(CommandRequest{Argv: c.argv(), Cwd: ws, Sandbox: sb})
				if got.Decision != want.Decision.String() {
					t.Errorf("%s %s %q: binary says %s, the evaluator %s (%s)", ask, label, c.script, got.Decision, want.Decision, want.Reason)
				}
				checked++
			}
		}
	}
	t.Logf("%d decisions of the binary checked", checked)
}
