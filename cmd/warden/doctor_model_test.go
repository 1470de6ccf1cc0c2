package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// doctorJSONWith runs `warden doctor --json` with env and decodes the
// config and model parts.
func doctorJSONWith(t *testing.T, home string, env ...string) (doctorConfig, doctorModel) {
	t.Helper()
	cmd := exec.Command(wardenBin(t), "doctor", "--json")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}, env...)
	stdout, stderr, code := runCmd(t, cmd)
	if code != 0 {
		t.Fatalf("doctor: exit %d, %s", code, stderr)
	}
	var rep struct {
		Config doctorConfig `json:"config"`
		Model  doctorModel  `json:"model"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, stdout)
	}
	return rep.Config, rep.Model
}

// `warden doctor` makes one real request to the model and tells a refused
// key, a wrong URL and a dead server apart; a broken config.toml is named
// (file, line, key) without losing the environment's model.
func TestDoctorChecksTheModel(t *testing.T) {
	models := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/v1/models":
			http.NotFound(w, r)
		case r.Header.Get("Authorization") != "Bearer sk-good":
			w.WriteHeader(401)
			w.Write([]byte(`{"error":{"message":"Incorrect API key provided"}}`))
		default:
			w.Write([]byte(`{"object":"list","data":[{"id":"m1","object":"model"}]}`))
		}
	})
	srv := httptest.NewServer(models)
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()

	for _, tc := range []struct {
		name, url, key, status string
		listed                 bool
	}{
		{"ok", srv.URL + "/v1", "sk-good", "ok", true},
		{"bad key", srv.URL + "/v1", "sk-bad", "unauthorized", false},
		{"wrong path", srv.URL, "sk-good", "not_found", false},
		{"nothing listens", closed, "sk-good", "unreachable", false},
	} {
		_, m := doctorJSONWith(t, t.TempDir(), "WARDEN_MODEL=m1", "OPENAI_BASE_URL="+tc.url, "OPENAI_API_KEY="+tc.key)
		if m.Check == nil || m.Check.Status != tc.status || m.Check.Listed != tc.listed {
			t.Errorf("%s: %+v", tc.name, m.Check)
		}
		if strings.Contains(m.Check.Detail, "sk-") {
			t.Errorf("%s: the key is shown: %s", tc.name, m.Check.Detail)
		}
	}

	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".config", "warden"), 0o700)
	file := filepath.Join(home, ".config", "warden", "config.toml")
	os.WriteFile(file, []byte("[model]\nname = \"from-file\"\nbase_urll = \"x\"\n"), 0o600)
	c, m := doctorJSONWith(t, home, "WARDEN_MODEL=m1", "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY=sk-good")
	if !strings.Contains(c.Error, file+`:3: unknown key "model.base_urll"`) {
		t.Errorf("config error = %q", c.Error)
	}
	if m.Name != "m1" || m.Check == nil || m.Check.Status != "ok" {
		t.Errorf("with a broken file the environment's model must still be checked: %+v", m)
	}
	_, m = doctorJSONWith(t, t.TempDir())
	if m.Configured || m.Check != nil || !strings.Contains(m.Missing, "WARDEN_MODEL") {
		t.Errorf("no model: %+v", m)
	}
}
