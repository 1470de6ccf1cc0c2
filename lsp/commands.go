package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/wardenhq/warden/lsp/jobs"
	"go.lsp.dev/jsonrpc2"
)

func init() {
	handle("workspace/executeCommand", (*Server).executeCommand)
}

// Command is one warden.* command for workspace/executeCommand. Set exactly
// one of Run and Start.
type Command struct {
	// Name is the command id, "warden." followed by the feature.
	Name string
	// Title names the work in progress bars ("Running the agent");
	// RegisterCommand puts "Warden: " before it.
	Title string

	// Run answers at once with its result. It runs on the goroutine that
	// handles editor messages, so it must be quick and must not call the
	// client (warden.status is one).
	Run func(ctx context.Context, s *Server, args []json.RawMessage) (any, error)

	// Start validates the arguments and returns the job to run; an error is
	// sent back as InvalidParams (use InvalidParams or DecodeArg to name the
	// bad argument) and nothing runs. Start runs on the message goroutine:
	// validate only. The reply goes out at once; the job then runs on its own
	// goroutine under a context that ends when it is cancelled
	// (window/workDoneProgress/cancel, $/cancelRequest of the executeCommand
	// request, CancelJob) or the connection ends.
	Start func(s *Server, args []json.RawMessage) (JobFunc, error)
}

// JobFunc is the work of a command. It may call the client and take as long
// as it needs; it must return soon after ctx ends. The returned string is the
// closing message of its progress; an error is shown to the user unless the
// job was cancelled.
type JobFunc = jobs.Func

var (
	commandsMu sync.RWMutex
	commands   = map[string]Command{}
)

// RegisterCommand adds a command; call it from init. The command is
// advertised in executeCommandProvider. It panics on a duplicate or
// malformed registration, which is a programming error.
func RegisterCommand(c Command) {
	if !strings.HasPrefix(c.Name, "warden.") {
		panic("lsp: command name must start with warden.: " + c.Name)
	}
	if (c.Run == nil) == (c.Start == nil) {
		panic("lsp: command " + c.Name + " must set exactly one of Run and Start")
	}
	commandsMu.Lock()
	defer commandsMu.Unlock()
	if _, dup := commands[c.Name]; dup {
		panic("lsp: command registered twice: " + c.Name)
	}
	if c.Title == "" {
		c.Title = c.Name
	}
	// The title is the job's progress title: it starts as every message does.
	c.Title = withPrefix(c.Title)
	commands[c.Name] = c
}

// CommandNames lists the registered commands, sorted.
func CommandNames() []string {
	commandsMu.RLock()
	defer commandsMu.RUnlock()
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func lookupCommand(name string) (Command, bool) {
	commandsMu.RLock()
	defer commandsMu.RUnlock()
	c, ok := commands[name]
	return c, ok
}

// JobStarted is the immediate answer to a command that runs as a job.
type JobStarted struct {
	JobID string `json:"jobId"`
	Title string `json:"title"`
}

func (s *Server) executeCommand(ctx context.Context, params json.RawMessage) (any, error) {
	var p struct {
		Command       string            `json:"command"`
		Arguments     []json.RawMessage `json:"arguments"`
		WorkDoneToken json.RawMessage   `json:"workDoneToken"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if err := required(need("params.command", p.Command == "")); err != nil {
		return nil, err
	}
	cmd, ok := lookupCommand(p.Command)
	if !ok {
		return nil, InvalidParams("params.command: unknown command %q; warden has %s", p.Command, strings.Join(CommandNames(), ", "))
	}
	if cmd.Run != nil {
		return cmd.Run(ctx, s, p.Arguments)
	}
	fn, err := cmd.Start(s, p.Arguments)
	if err != nil {
		return nil, asInvalidParams(err)
	}
	if fn == nil {
		return nil, fmt.Errorf("%s: Start returned no job", cmd.Name)
	}
	job := s.jobs.Start(cmd.Name, cmd.Title, fn, requestKey(ctx), p.WorkDoneToken)
	return JobStarted{JobID: job.ID, Title: job.Title}, nil
}

// asInvalidParams keeps JSON-RPC errors and turns others into InvalidParams.
func asInvalidParams(err error) error {
	if err == nil {
		return nil
	}
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) {
		return err
	}
	return jsonrpc2.NewError(jsonrpc2.InvalidParams, err.Error())
}

type requestKeyCtx struct{}

// requestKey is the id key of the request being handled, if any.
func requestKey(ctx context.Context) string {
	k, _ := ctx.Value(requestKeyCtx{}).(string)
	return k
}
