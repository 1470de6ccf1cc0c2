package sandbox

import (
	"testing"

	"github.com/wardenhq/warden/sandbox/toolcache"
)

// The overlay reads its lower layers past the masks and Landlock rules set
// after it: a layer whose user cache holds or lies in a hidden path, or lies
// outside restricted reads, is left out.
func TestReadableLayers(t *testing.T) {
	layer := func(user string) toolcache.Layer {
		return toolcache.Layer{Target: "/c/data/x", Upper: "/c/data/x", Lower: []string{user}}
	}
	all := []toolcache.Layer{layer("/h/.cargo/registry"), layer("/h/.npm"), layer("/h/.cache/pip")}
	secrets := []HiddenPath{{Path: "/h/.npm/_authToken", Target: "/h/.npm/_authToken"}, {Path: "/h/.cache", Target: "/h/.cache"}}
	got := readableLayers(all, secrets, nil)
	if len(got) != 1 || got[0].Lower[0] != "/h/.cargo/registry" {
		t.Errorf("deny-secrets: %+v", got)
	}
	got = readableLayers(all, nil, []string{"/h/.npm", "/usr"})
	if len(got) != 1 || got[0].Lower[0] != "/h/.npm" {
		t.Errorf("restricted: %+v", got)
	}
	// The user cache is the last lower: the private layer above it is the
	// set's own.
	shared := toolcache.Layer{Target: "/c/data/x", Lower: []string{"/c/data/x", "/h/.npm"}}
	if got := readableLayers([]toolcache.Layer{shared}, nil, []string{"/h/.npm"}); len(got) != 1 {
		t.Errorf("shared layer under restricted reads: %+v", got)
	}
}
