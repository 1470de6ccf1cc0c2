package linux

import (
	"github.com/wardenhq/warden/sandbox/protect"
	"github.com/wardenhq/warden/sandbox/toolcache"
)

// HelperArg is argv[1] of the hidden sandbox helper: `warden HelperArg
// ns|flat net|nonet` (with or without namespaces and network), with the spec
// as JSON on fd 4 and the status pipe on fd 3. cmd/warden hands such a
// process to HelperMain before anything else runs.
const HelperArg = "__sandbox-helper"

// Layers the helper applies, in the spec and in what doctor reports.
type Layers struct {
	Namespaces bool `json:"ns,omitempty"`       // user, mount, pid, ipc (+ net when off) namespaces and the mount view
	Landlock   bool `json:"landlock,omitempty"` // filesystem, TCP and scope rules
	Seccomp    bool `json:"seccomp,omitempty"`  // the syscall filter
	DropCaps   bool `json:"caps,omitempty"`     // empty capability sets and bounding set
}

// Spec is everything the helper needs, passed as JSON over a pipe (not
// argv: other users can read a process's command line, and Env may carry
// values the caller chose to pass).
type Spec struct {
	Path      string         `json:"path"` // resolved program
	Argv      []string       `json:"argv"`
	Env       []string       `json:"env"`
	Cwd       string         `json:"cwd"`
	Mode      string         `json:"mode"`
	Network   Network        `json:"net,omitempty"`
	Roots     []protect.Root `json:"roots,omitempty"`
	Layers    Layers         `json:"layers"`
	FileSize  int64          `json:"fsize,omitempty"`
	Processes int64          `json:"nproc,omitempty"`
	// Sockets are the unix sockets outside to mask, Hidden the directories
	// to cover because they can be entered but not listed: the launcher
	// scans once for both (and caches) so the helper starts faster.
	Sockets []string `json:"sockets,omitempty"`
	Hidden  []string `json:"hidden,omitempty"`
	// MediateSockets: the helper's supervisor decides every connect and
	// addressed send (unixmediate_linux.go), so nothing is masked.
	MediateSockets bool `json:"mediate,omitempty"`
	// RecordRoots are the roots whose changes the launcher records: the
	// supervisor reports every path a call may change there before the
	// call goes on (recordwrites_linux.go).
	RecordRoots []string `json:"record,omitempty"`
	// Secrets are what the read policy hides (HiddenPaths, resolved by the
	// launcher): each target is masked in the mount namespace.
	Secrets []HiddenPath `json:"secrets,omitempty"`
	// Readable, under restricted read access, are all the command may read
	// besides the writable roots (Landlock rules); nil reads everything.
	Readable []string `json:"readable,omitempty"`
	// CacheLayers are the toolchain caches to mount layered on the user's
	// (toolcache), under namespaces only.
	CacheLayers []toolcache.Layer `json:"cachelayers,omitempty"`
}

// Network is the network the helper gives the command: the spec's form of
// sandbox.NetworkMode, with the same values.
type Network string

const (
	NetworkOff Network = "off"
	NetworkAsk Network = "ask"
	NetworkOn  Network = "on"
)

// HiddenPath is one existing path the read policy hides in a run.
type HiddenPath struct {
	Path   string `json:"path"`   // as written (globs expanded)
	Target string `json:"target"` // symlinks resolved: what is masked
	Dir    bool   `json:"dir,omitempty"`
	// Allow are read_allow exceptions inside a hidden directory (resolved
	// paths under Target), shown through the mask.
	Allow []string `json:"allow,omitempty"`
}
