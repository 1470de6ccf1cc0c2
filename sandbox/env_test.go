package sandbox

import (
	"slices"
	"testing"
)

func TestEnvPolicy(t *testing.T) {
	base := []string{"PATH=/bin", "HOME=/root", "OPENAI_API_KEY=sk", "GITHUB_TOKEN=gh", "aws_secret_access_key=x", "EDITOR=vi", "GOFLAGS=-v"}
	cases := []struct {
		name string
		pol  EnvPolicy
		want []string
	}{
		{"default drops secrets", EnvPolicy{}, []string{"EDITOR=vi", "GOFLAGS=-v", "HOME=/root", "PATH=/bin"}},
		{"keep secrets", EnvPolicy{KeepSecrets: true}, []string{"EDITOR=vi", "GITHUB_TOKEN=gh", "GOFLAGS=-v", "HOME=/root", "OPENAI_API_KEY=sk", "PATH=/bin", "aws_secret_access_key=x"}},
		{"core", EnvPolicy{Inherit: InheritCore}, []string{"HOME=/root", "PATH=/bin"}},
		{"none plus set", EnvPolicy{Inherit: InheritNone, Set: map[string]string{"A": "1"}}, []string{"A=1"}},
		{"exclude glob", EnvPolicy{Exclude: []string{"go*"}}, []string{"EDITOR=vi", "HOME=/root", "PATH=/bin"}},
		{"include only", EnvPolicy{IncludeOnly: []string{"PATH", "HOME"}, Set: map[string]string{"X": "y"}}, []string{"HOME=/root", "PATH=/bin"}},
	}
	for _, c := range cases {
		if got := c.pol.Build(base); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v want %v", c.name, got, c.want)
		}
	}
}
