package lsp

import (
	"context"
	"encoding/json"
	"runtime"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/lsp/jobs"
	"github.com/wardenhq/warden/lsp/wire"
	"github.com/wardenhq/warden/sandbox"
)

func init() {
	RegisterCommand(Command{
		Name:  "warden.status",
		Title: "Status",
		Run: func(_ context.Context, s *Server, args []json.RawMessage) (any, error) {
			if len(args) > 0 {
				return nil, InvalidParams("warden.status takes no arguments (got %d)", len(args))
			}
			return s.Status(), nil
		},
	})
}

// Status is the answer to warden.status: the server's state as JSON.
type Status struct {
	Version          string                  `json:"version"`
	GoVersion        string                  `json:"goVersion"`
	Client           ClientInfo              `json:"client"`
	Capabilities     wire.ClientCapabilities `json:"capabilities"`
	WorkspaceFolders []StatusFolder          `json:"workspaceFolders"`
	OpenDocuments    int                     `json:"openDocuments"`
	Policy           StatusPolicy            `json:"policy"`
	Model            StatusModel             `json:"model"`
	Jobs             []jobs.Info             `json:"jobs"`
	Commands         []string                `json:"commands"`
	// Sources says where each setting that is not at its default came
	// from, by TOML key (model.base_url): "config.toml", "editor settings",
	// "environment OPENAI_API_KEY" or "warden.policy.set". A key left out
	// has its default.
	Sources map[string]config.Origin `json:"sources"`
	// Latency is the server's own handling time per request method, from
	// reading the message to writing the reply.
	Latency map[string]LatencyStats `json:"latency"`
	// Changes are the recorded changes warden.undo can revert (patches and
	// commands), newest first.
	Changes []StatusChange `json:"changes"`
}

// StatusFolder is one workspace folder.
type StatusFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
	Path string `json:"path,omitempty"`
}

// StatusPolicy is the effective approval and sandbox policy.
type StatusPolicy struct {
	ApprovalPolicy string   `json:"approvalPolicy"`
	GranularReject []string `json:"granularReject"`
	SandboxMode    string   `json:"sandboxMode"`
	// NetworkAccess says that commands get the network directly (on), and
	// is left out otherwise: a false beside "ask" read as no network.
	// Network is the mode: off, ask (through Warden's proxy) or on.
	NetworkAccess   bool     `json:"networkAccess,omitempty"`
	Network         string   `json:"network"`
	WritableRoots   []string `json:"writableRoots"`
	ApprovalTimeout string   `json:"approvalTimeout"`
}

// StatusModel says which model is configured; never the key.
type StatusModel struct {
	Configured bool   `json:"configured"`
	Name       string `json:"name,omitempty"`
	BaseURL    string `json:"baseURL,omitempty"`
}

// Status returns the server's state.
func (s *Server) Status() Status {
	cfg := s.Config()
	folders := []StatusFolder{}
	for _, f := range s.WorkspaceFolders() {
		folders = append(folders, StatusFolder{URI: string(f.URI), Name: f.Name, Path: f.Path})
	}
	return Status{
		Version:          s.opts.Version,
		GoVersion:        runtime.Version(),
		Client:           s.ClientInfo(),
		Capabilities:     s.Capabilities(),
		WorkspaceFolders: folders,
		OpenDocuments:    s.docs.Count(),
		Policy:           policyOf(cfg),
		Model:            StatusModel{Configured: cfg.Model.Configured(), Name: cfg.Model.Name, BaseURL: cfg.Model.BaseURL},
		Jobs:             s.Jobs(),
		Commands:         CommandNames(),
		Sources:          sourcesOf(cfg),
		Latency:          s.latency.stats(),
		Changes:          s.recordedChanges(),
	}
}

func policyOf(cfg config.Config) StatusPolicy {
	orEmpty := func(v []string) []string {
		if v == nil {
			return []string{}
		}
		return v
	}
	return StatusPolicy{
		ApprovalPolicy:  cfg.ApprovalPolicy,
		GranularReject:  orEmpty(cfg.Granular),
		SandboxMode:     cfg.SandboxMode,
		NetworkAccess:   effectiveNetwork(cfg) == sandbox.NetworkOn,
		Network:         string(effectiveNetwork(cfg)),
		WritableRoots:   orEmpty(cfg.WritableRoots),
		ApprovalTimeout: cfg.ApprovalTimeout.D().String(),
	}
}

// sourcesOf is cfg's origins, never null.
func sourcesOf(cfg config.Config) map[string]config.Origin {
	out := make(map[string]config.Origin, len(cfg.Origins))
	for k, v := range cfg.Origins {
		out[k] = v
	}
	return out
}
