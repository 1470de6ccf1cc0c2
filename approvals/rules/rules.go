package rules

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/google/shlex"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/wardenhq/warden/sandbox"
)

// Rule is one prefix_rule: a command whose argv starts with Pattern gets
// Decision. Each pattern position lists the tokens it accepts; after loading,
// the first position always holds exactly one token (alternatives there are
// expanded into one rule each, as Codex does).
type Rule struct {
	Pattern       [][]string `json:"-"`
	Decision      Decision   `json:"decision"`
	Justification string     `json:"justification,omitempty"`
	Source        string     `json:"source"` // file:line of the prefix_rule call
	// File is the rules file the rule came from, absolute ("" for a rule
	// built in memory): an allow rule from a file a sandboxed command can
	// rewrite is not applied (see ruleFileBlocker).
	File string `json:"-"`
	// Grant is the rule's additional_permissions (allow rules only): the
	// command runs in the sandbox plus this grant, never outside it.
	Grant *sandbox.Grant `json:"grant,omitempty"`
}

// Matches reports whether argv starts with the rule's pattern.
func (r *Rule) Matches(argv []string) bool {
	if len(argv) < len(r.Pattern) {
		return false
	}
	for i, alts := range r.Pattern {
		if !slices.Contains(alts, argv[i]) {
			return false
		}
	}
	return true
}

// PatternString renders the pattern the way it is written in a rules file,
// With alternatives as a nested list.
func (r *Rule) PatternString() string {
	parts := make([]string, len(r.Pattern))
	for i, alts := range r.Pattern {
		if len(alts) == 1 {
			parts[i] = starlarkQuote(alts[0])
		} else {
			q := make([]string, len(alts))
			for j, a := range alts {
				q[j] = starlarkQuote(a)
			}
			parts[i] = "[" + strings.Join(q, ", ") + "]"
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Trust says what a rules file may decide.
type Trust int

const (
	// TrustFull files may allow, prompt and forbid (the user's own rules).
	TrustFull Trust = iota
	// TrustTightenOnly files may only prompt or forbid: a workspace the user
	// has not marked trusted cannot loosen its own policy.
	TrustTightenOnly
)

// RuleSource is a directory of *.rules files.
type RuleSource struct {
	Dir   string
	Trust Trust
}

// RuleSet is a loaded, immutable collection of rules, indexed by first token.
type RuleSet struct {
	byProgram map[string][]*Rule
	// hostExecutables maps a program name to the absolute paths allowed to
	// stand for it (host_executable); a name with no entry accepts any path.
	hostExecutables map[string][]string
	// Network holds the network_rule entries, in load order.
	Network []NetworkRule
	// Warnings are problems that did not stop loading, such as an allow
	// rule ignored in an untrusted workspace.
	Warnings []string
	count    int
}

// NetworkRules returns the network_rule entries in load order.
func (rs *RuleSet) NetworkRules() []NetworkRule {
	if rs == nil {
		return nil
	}
	return rs.Network
}

// Len is the number of rules after alternative expansion.
func (rs *RuleSet) Len() int {
	if rs == nil {
		return 0
	}
	return rs.count
}

// Match returns every rule matching argv. An absolute program path such as
// /usr/bin/git falls back to the rules for git when no rule names the path
// itself and host_executable does not exclude it.
func (rs *RuleSet) Match(argv []string) []*Rule {
	if rs == nil || len(argv) == 0 {
		return nil
	}
	var out []*Rule
	for _, r := range rs.byProgram[argv[0]] {
		if r.Matches(argv) {
			out = append(out, r)
		}
	}
	if len(out) > 0 || !filepath.IsAbs(argv[0]) {
		return out
	}
	name := filepath.Base(argv[0])
	if paths, listed := rs.hostExecutables[name]; listed && !slices.Contains(paths, argv[0]) {
		return nil
	}
	alias := append([]string{name}, argv[1:]...)
	for _, r := range rs.byProgram[name] {
		if r.Matches(alias) {
			out = append(out, r)
		}
	}
	return out
}

// All returns the rules in load order (for listings and tests).
func (rs *RuleSet) All() []*Rule {
	if rs == nil {
		return nil
	}
	var out []*Rule
	for _, rules := range rs.byProgram {
		out = append(out, rules...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out
}

// With returns a copy of rs with r added (a plain copy when r is nil).
func (rs *RuleSet) With(r *Rule) *RuleSet {
	n := &RuleSet{byProgram: map[string][]*Rule{}, hostExecutables: map[string][]string{}}
	if rs != nil {
		for k, v := range rs.byProgram {
			n.byProgram[k] = v
		}
		for k, v := range rs.hostExecutables {
			n.hostExecutables[k] = v
		}
		n.Network = rs.Network
		n.Warnings = rs.Warnings
		n.count = rs.count
	}
	if r != nil {
		n.add(r)
	}
	return n
}

func (rs *RuleSet) add(r *Rule) {
	first := r.Pattern[0][0]
	rs.byProgram[first] = append(rs.byProgram[first][:len(rs.byProgram[first]):len(rs.byProgram[first])], r)
	rs.count++
}

// maxRulesFileSize bounds what a rules file may be; larger is surely a mistake.
const maxRulesFileSize = 4 << 20

// maxExecutionSteps bounds the Starlark work a rules file may do at load.
const maxExecutionSteps = 5_000_000

// LoadRules reads every *.rules file (sorted by name) in each source, lowest
// precedence first. A missing directory is skipped; a source that exists but
// is not a directory is an error naming it. Any file that fails to load
// makes the whole load fail, with an error naming each file and line; the
// caller keeps its previous rules or falls back to prompting.
func LoadRules(sources []RuleSource) (*RuleSet, error) {
	return loadRules(sources, nil)
}

// LoadRuleFiles loads files given on a command line (--rules F), all with
// full trust: the user named them. A directory stands for the *.rules files
// in it, and must hold at least one.
func LoadRuleFiles(paths []string) (*RuleSet, error) {
	return loadRules(nil, paths)
}

// loadRules loads the source directories, then the explicit files, into one
// Set: later definitions take precedence (a host_executable redefined later
// replaces the earlier one), as in Codex where every file feeds one policy.
func loadRules(sources []RuleSource, paths []string) (*RuleSet, error) {
	rs := &RuleSet{byProgram: map[string][]*Rule{}, hostExecutables: map[string][]string{}}
	var errs []error
	for _, src := range sources {
		if src.Dir == "" {
			continue
		}
		files, err := rulesInDir(src.Dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range files {
			if err := rs.loadFile(f, src.Trust); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, p := range paths {
		files := []string{p}
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			if files, err = rulesInDir(p); err == nil && len(files) == 0 {
				err = fmt.Errorf("rules directory %s holds no *.rules file", p)
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
		}
		for _, f := range files {
			if err := rs.loadFile(f, TrustFull); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return rs, nil
}

// rulesInDir lists the *.rules files in dir, sorted. The error wraps
// os.ErrNotExist when dir does not exist; a dir that is a file is an error
// naming it, not an empty set of rules.
func rulesInDir(dir string) ([]string, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("rules directory %s: %w", dir, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("rules directory %s is a file, not a directory: rules directories hold *.rules files", dir)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.rules"))
	if err != nil {
		return nil, fmt.Errorf("rules directory %s: %w", dir, err)
	}
	sort.Strings(files)
	return files, nil
}

func (rs *RuleSet) loadFile(path string, trust Trust) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("rules file %s: %w", path, err)
	}
	if info.IsDir() {
		return fmt.Errorf("rules file %s is a directory", path)
	}
	if info.Size() > maxRulesFileSize {
		return fmt.Errorf("rules file %s: %d bytes is more than the %d a rules file may have", path, info.Size(), maxRulesFileSize)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("rules file %s: %w", path, err)
	}
	parsed, err := ParseRules(path, src)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("rules file %s: %w", path, err)
	}
	for _, r := range parsed.Rules {
		r.File = abs
		if trust == TrustTightenOnly && r.Decision == Allow {
			rs.Warnings = append(rs.Warnings, fmt.Sprintf("%s: allow rule ignored: this workspace is not trusted, so its rules may only prompt or forbid", r.Source))
			continue
		}
		rs.add(r)
	}
	for _, h := range slices.Sorted(maps.Keys(parsed.HostExecutables)) {
		if trust == TrustTightenOnly {
			// Restricting the basename fallback can also take a forbid
			// rule off /path/to/rm: not for an untrusted workspace.
			rs.Warnings = append(rs.Warnings, fmt.Sprintf("%s: host_executable(%q) ignored: this workspace is not trusted", path, h))
			continue
		}
		// The last definition of a name wins, across files too.
		rs.hostExecutables[h] = parsed.HostExecutables[h]
	}
	for _, n := range parsed.NetworkRules {
		if trust == TrustTightenOnly && n.Decision == Allow {
			rs.Warnings = append(rs.Warnings, fmt.Sprintf("%s: network allow rule ignored: this workspace is not trusted, so its rules may only prompt or forbid", n.Source))
			continue
		}
		n.File = abs
		rs.Network = append(rs.Network, n)
	}
	return nil
}

// ParsedRules is what one rules file declares.
type ParsedRules struct {
	Rules []*Rule
	// HostExecutables maps a program name to the absolute paths that may
	// stand for it; the last host_executable for a name wins, and an empty
	// list means no path may (the basename fallback is off for the name).
	HostExecutables map[string][]string
	NetworkRules    []NetworkRule

	// pending are match/not_match examples, checked once the whole file is
	// read, so a host_executable anywhere in the file counts (as in Codex).
	pending []pendingExamples
}

type pendingExamples struct {
	rules           []*Rule
	match, notMatch []starlark.Value
	source          string
}

// ParseRules evaluates one rules file. Errors name the file and line, and say
// what was wrong: a syntax error, an unknown decision, an empty pattern, or an
// example that the rule does not match.
func ParseRules(filename string, src []byte) (*ParsedRules, error) {
	if !utf8.Valid(src) {
		return nil, fmt.Errorf("%s: not UTF-8 text", filename)
	}
	out := &ParsedRules{HostExecutables: map[string][]string{}}
	thread := &starlark.Thread{Name: "rules " + filename}
	thread.SetMaxExecutionSteps(maxExecutionSteps)
	predeclared := starlark.StringDict{
		"prefix_rule":     starlark.NewBuiltin("prefix_rule", out.prefixRule),
		"host_executable": starlark.NewBuiltin("host_executable", out.hostExecutable),
		"network_rule":    starlark.NewBuiltin("network_rule", out.networkRule),
	}
	opts := &syntax.FileOptions{}
	if _, err := starlark.ExecFileOptions(opts, thread, filename, src, predeclared); err != nil {
		var evalErr *starlark.EvalError
		if errors.As(err, &evalErr) {
			// The innermost frame in the file is the line the user wrote.
			pos := callerPos(evalErr.CallStack, filename)
			return nil, fmt.Errorf("%s: %s", pos, evalErr.Msg)
		}
		return nil, err // syntax errors already read "file:line:col: msg"
	}
	for _, pe := range out.pending {
		if err := out.checkExamples(pe); err != nil {
			return nil, fmt.Errorf("%s: %w", pe.source, err)
		}
	}
	return out, nil
}

func callerPos(stack starlark.CallStack, filename string) string {
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i].Pos.Filename() == filename {
			return fmt.Sprintf("%s:%d", filename, stack[i].Pos.Line)
		}
	}
	return filename
}

func sourceOf(thread *starlark.Thread) string {
	pos := thread.CallFrame(1).Pos
	return fmt.Sprintf("%s:%d", pos.Filename(), pos.Line)
}

func (p *ParsedRules) prefixRule(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var pattern *starlark.List
	decision := "allow"
	var justification starlark.Value = starlark.None
	var match, notMatch *starlark.List
	var perms starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs,
		"pattern", &pattern, "decision?", &decision, "justification?", &justification,
		"match?", &match, "not_match?", &notMatch, "additional_permissions?", &perms); err != nil {
		return nil, err
	}
	tokens, err := patternTokens(pattern)
	if err != nil {
		return nil, err
	}
	d, err := ParseDecision(decision)
	if err != nil {
		return nil, err
	}
	just, err := justificationArg(justification)
	if err != nil {
		return nil, err
	}
	grant, err := grantArg(perms, d)
	if err != nil {
		return nil, err
	}
	src := sourceOf(thread)
	var rules []*Rule
	for _, first := range tokens[0] {
		pat := append([][]string{{first}}, tokens[1:]...)
		rules = append(rules, &Rule{Pattern: pat, Decision: d, Justification: just, Source: src, Grant: grant})
	}
	p.pending = append(p.pending, pendingExamples{rules: rules, match: listExamples(match), notMatch: listExamples(notMatch), source: src})
	p.Rules = append(p.Rules, rules...)
	return starlark.None, nil
}

// justificationArg reads an optional justification: a string that is not
// blank, or None.
func justificationArg(v starlark.Value) (string, error) {
	if v == starlark.None {
		return "", nil
	}
	s, ok := starlark.AsString(v)
	if !ok {
		return "", fmt.Errorf("justification must be a string, not %s", v.Type())
	}
	if strings.TrimSpace(s) == "" {
		return "", errors.New("justification must not be blank: say why, or leave it out")
	}
	return s, nil
}

// checkExamples checks one prefix_rule's examples against its own rules,
// With the file's host_executable entries: an example naming a program by
// an absolute path matches through the basename, as a command would.
func (p *ParsedRules) checkExamples(pe pendingExamples) error {
	set := &RuleSet{byProgram: map[string][]*Rule{}, hostExecutables: p.HostExecutables}
	for _, r := range pe.rules {
		set.add(r)
	}
	for _, ex := range pe.match {
		argv, err := exampleArgv(ex)
		if err != nil {
			return fmt.Errorf("match example %s: %w", ex, err)
		}
		if len(set.Match(argv)) == 0 {
			return fmt.Errorf("match example %s does not match pattern %s", ex, pe.rules[0].PatternString())
		}
	}
	for _, ex := range pe.notMatch {
		argv, err := exampleArgv(ex)
		if err != nil {
			return fmt.Errorf("not_match example %s: %w", ex, err)
		}
		if len(set.Match(argv)) > 0 {
			return fmt.Errorf("not_match example %s matches pattern %s", ex, pe.rules[0].PatternString())
		}
	}
	return nil
}

// patternTokens turns a pattern list into per-position alternatives.
func patternTokens(pattern *starlark.List) ([][]string, error) {
	if pattern.Len() == 0 {
		return nil, errors.New("pattern is empty: give at least the program name, e.g. pattern=[\"git\", \"status\"]")
	}
	out := make([][]string, pattern.Len())
	for i := 0; i < pattern.Len(); i++ {
		v := pattern.Index(i)
		if s, ok := starlark.AsString(v); ok {
			if s == "" {
				return nil, fmt.Errorf("pattern element %d is an empty string", i)
			}
			out[i] = []string{s}
			continue
		}
		alts, ok := v.(*starlark.List)
		if !ok {
			return nil, fmt.Errorf("pattern element %d must be a string or a list of strings, not %s", i, v.Type())
		}
		if alts.Len() == 0 {
			return nil, fmt.Errorf("pattern element %d is an empty list of alternatives", i)
		}
		for j := 0; j < alts.Len(); j++ {
			s, ok := starlark.AsString(alts.Index(j))
			if !ok || s == "" {
				return nil, fmt.Errorf("pattern element %d alternative %d must be a non-empty string", i, j)
			}
			out[i] = append(out[i], s)
		}
	}
	return out, nil
}

func listExamples(l *starlark.List) []starlark.Value {
	if l == nil {
		return nil
	}
	out := make([]starlark.Value, l.Len())
	for i := range out {
		out[i] = l.Index(i)
	}
	return out
}

// exampleArgv reads an example as a token list or a shell-split string.
func exampleArgv(v starlark.Value) ([]string, error) {
	if s, ok := starlark.AsString(v); ok {
		argv, err := shlex.Split(s)
		if err != nil {
			return nil, fmt.Errorf("cannot split %q: %w", s, err)
		}
		return argv, nil
	}
	l, ok := v.(*starlark.List)
	if !ok {
		return nil, fmt.Errorf("must be a string or a list of strings, not %s", v.Type())
	}
	argv := make([]string, l.Len())
	for i := range argv {
		s, ok := starlark.AsString(l.Index(i))
		if !ok {
			return nil, fmt.Errorf("element %d is %s, not a string", i, l.Index(i).Type())
		}
		argv[i] = s
	}
	return argv, nil
}

// starlarkQuote writes s as a Starlark (and JSON) string literal.
func starlarkQuote(s string) string { return starlark.String(s).String() }

// Decision is what a rule, or the evaluation of a whole command, says.
// Ordered so that a larger value is stricter.
type Decision int

const (
	Allow Decision = iota
	Prompt
	Forbidden
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Prompt:
		return "prompt"
	case Forbidden:
		return "forbidden"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// ParseDecision reads a rule decision.
func ParseDecision(s string) (Decision, error) {
	switch s {
	case "allow":
		return Allow, nil
	case "prompt":
		return Prompt, nil
	case "forbidden":
		return Forbidden, nil
	}
	return Prompt, fmt.Errorf("unknown decision %q: want \"allow\", \"prompt\" or \"forbidden\"", s)
}

func (d Decision) MarshalText() ([]byte, error) { return []byte(d.String()), nil }
