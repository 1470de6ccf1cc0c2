package shellenv

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/pathmemo"
	"github.com/wardenhq/warden/internal/regfile"

	"github.com/BurntSushi/toml"
	"mvdan.cc/sh/v3/syntax"
)

// maxDepth bounds the chain of sourced files followed.
const maxDepth = 4

// maxSize bounds what is read of one file: these are a few lines.
const maxSize = 1 << 20

// Targets lists the files dir's .envrc and mise configs (MiseConfigs
// and those of the environments MISE_ENV names, as getenv gives it) make
// the shell source or load, as absolute paths, followed into what sourced
// files source in turn. A path given by an expansion other than $PWD
// cannot be known and is left out. So is one outside dir, or behind a
// symbolic link below it: it cannot be held read-only, and the sandbox
// would refuse every run over it.
func Targets(dir string, getenv func(string) string) []string {
	configs := slices.Concat(MiseConfigs, MiseEnvNames(getenv))
	var out []string
	seen := map[string]bool{}
	add := func(p string) bool {
		p = filepath.Clean(p)
		if seen[p] {
			return false
		}
		seen[p] = true
		if rel, err := filepath.Rel(dir, p); err == nil && rel != "." && !strings.HasPrefix(rel, "..") && (*pathmemo.Memo)(nil).LinkBelow(dir, p) == "" {
			out = append(out, p)
		}
		return true
	}
	// Relative paths are the shell's working directory's: the .envrc's
	// directory, and, as direnv's source_env changes into it, a sourced
	// .envrc's own; a plain source keeps the directory it was in.
	var envrc func(file, cwd string, depth int)
	envrc = func(file, cwd string, depth int) {
		if depth > maxDepth {
			return
		}
		for _, s := range sourced(file, cwd) {
			p := s.path
			if !filepath.IsAbs(p) {
				p = filepath.Join(cwd, p)
			}
			if s.envrc {
				// source_env takes a directory for its .envrc.
				if st, err := os.Stat(p); err == nil && st.IsDir() {
					p = filepath.Join(p, ".envrc")
				}
			}
			if !add(p) || !s.shell {
				continue
			}
			next := cwd
			if s.envrc {
				next = filepath.Dir(p)
			}
			envrc(p, next, depth+1)
		}
	}
	envrc(filepath.Join(dir, ".envrc"), dir, 0)
	for _, c := range configs {
		for _, p := range miseLoads(filepath.Join(dir, c)) {
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if add(p) {
				envrc(p, dir, 1) // _.source is a shell script: what it sources too
			}
		}
	}
	return out
}

// source is one file an .envrc pulls in: shell says it is run as shell
// code (else loaded as variables), envrc that a directory means its .envrc.
type source struct {
	path         string
	shell, envrc bool
}

// sourced lists the files the shell script file, run in cwd, sources or
// loads.
func sourced(file, cwd string) []source {
	data, err := regfile.Read(file, maxSize)
	if err != nil {
		return nil
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(string(data)), file)
	if err != nil {
		return nil
	}
	var out []source
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		var args []string
		for _, w := range call.Args {
			s, ok := literal(w, cwd)
			if !ok {
				s = "" // not known: kept in place so the command is still seen
			}
			args = append(args, s)
		}
		var operands []string
		for _, a := range args[1:] {
			if !strings.HasPrefix(a, "-") {
				operands = append(operands, a)
			}
		}
		first := func() string {
			if len(operands) > 0 {
				return operands[0]
			}
			return ""
		}
		switch args[0] {
		case "source_env", "source_env_if_exists":
			if p := first(); p != "" {
				out = append(out, source{path: p, shell: true, envrc: true})
			}
		case "source", ".":
			if p := first(); p != "" {
				out = append(out, source{path: p, shell: true})
			}
		case "dotenv", "dotenv_if_exists":
			p := first()
			if len(operands) == 0 && len(args) == 1 {
				p = ".env"
			}
			if p != "" {
				out = append(out, source{path: p})
			}
		}
		return true
	})
	return out
}

// literal is the word w when it is a plain string, with a leading $PWD
// (dir, the working directory) put in; ok is false for other expansions.
func literal(w *syntax.Word, dir string) (string, bool) {
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					if pe, ok := q.(*syntax.ParamExp); ok && i == 0 && b.Len() == 0 && plainPWD(pe) {
						b.WriteString(dir)
						continue
					}
					return "", false
				}
				b.WriteString(lit.Value)
			}
		case *syntax.ParamExp:
			if i == 0 && plainPWD(p) {
				b.WriteString(dir)
				continue
			}
			return "", false
		default:
			return "", false
		}
	}
	return b.String(), true
}

// plainPWD says whether p is $PWD or ${PWD}, nothing done to it.
func plainPWD(p *syntax.ParamExp) bool {
	return p.Param != nil && p.Param.Value == "PWD" && p.Exp == nil && p.Index == nil && p.Slice == nil &&
		p.Repl == nil && !p.Length && !p.Excl && !p.Width && p.Names == 0
}

// miseLoads lists what the mise config file sources (env._.source) or loads
// (env._.file): a path, a list of them, or tables with a path.
func miseLoads(file string) []string {
	data, err := regfile.Read(file, maxSize)
	if err != nil {
		return nil
	}
	var cfg struct {
		Env map[string]any `toml:"env"`
	}
	if _, err := toml.Decode(string(data), &cfg); err != nil {
		return nil
	}
	under, _ := cfg.Env["_"].(map[string]any)
	var out []string
	for _, key := range []string{"source", "file"} {
		out = append(out, paths(under[key])...)
	}
	return out
}

// paths are the paths of a mise directive's value.
func paths(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, paths(e)...)
		}
		return out
	case map[string]any:
		if p, ok := v["path"].(string); ok {
			return []string{p}
		}
	}
	return nil
}
