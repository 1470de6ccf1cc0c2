package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/wardenhq/warden/agent"
	"github.com/wardenhq/warden/approvals/command"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/lsp/jobs"
	"github.com/wardenhq/warden/lsp/textdoc"
	"github.com/wardenhq/warden/lsp/wire"
	"github.com/wardenhq/warden/sandbox"
)

func init() {
	RegisterCommand(Command{Name: "warden.agent.run", Title: "Running the agent", Start: startAgentRun})
	RegisterCommand(Command{Name: "warden.agent.cancel", Run: cancelAgent})
}

// AgentRunArgs is the argument of warden.agent.run. Mode, when set, picks a
// built-in instruction (fix, explain, tests, comment); an instruction given
// as well is added to it.
type AgentRunArgs struct {
	Instruction string               `json:"instruction"`
	Mode        string               `json:"mode,omitempty"`
	URI         protocol.DocumentURI `json:"uri,omitempty"`
	Range       *protocol.Range      `json:"range,omitempty"`
	// Diagnostics are the problems to fix (the Fix with agent action).
	Diagnostics []protocol.Diagnostic `json:"diagnostics,omitempty"`
}

// startAgentRun validates the request and snapshots the editor context (the
// selection as it is now), then returns the job that runs the session.
func startAgentRun(s *Server, args []json.RawMessage) (JobFunc, error) {
	var a AgentRunArgs
	if len(args) != 1 {
		return nil, InvalidParams("warden.agent.run takes one argument {instruction, uri?, range?}, got %d", len(args))
	}
	if err := DecodeArg(args, 0, &a); err != nil {
		return nil, err
	}
	if a.Range != nil && a.URI == "" {
		return nil, InvalidParams("arguments[0].range needs arguments[0].uri")
	}
	instruction, err := modeInstruction(s, a)
	if err != nil {
		return nil, err
	}
	// No model, no agent: say so in the answer, before any job is said to
	// have started (the client shows the error).
	if _, err := agent.NewClientFor(s.Config()); err != nil {
		return nil, err
	}
	// A comment mode instruction is the buffer's own text.
	task := agent.Task{Instruction: instruction, FromFile: a.Mode == "comment" && strings.TrimSpace(a.Instruction) == ""}
	var note string
	if a.URI != "" {
		path := textdoc.URIToPath(a.URI)
		if path == "" {
			return nil, InvalidParams("arguments[0].uri %q is not a file: URI", a.URI)
		}
		if own := ownDir(path); own != "" {
			if a.Mode != "" && a.Mode != "ask" {
				return nil, InvalidParams("%s is in Warden's own %s directory: Warden does not work on its own files; run %s from a file of your workspace", path, own, a.Mode)
			}
			// A plain Ask stands without it: the question is the user's.
			note = fmt.Sprintf("Warden: %s is in Warden's own %s directory; the agent was not given it (or a selection in it) as context", path, own)
			a.URI, a.Range, a.Diagnostics = "", nil, nil
		}
	}
	if a.URI != "" {
		path := textdoc.URIToPath(a.URI)
		task.File = path
		if a.Range != nil {
			doc, err := s.docs.Get(a.URI)
			if err != nil {
				return nil, InvalidParams("arguments[0].uri: %v", err)
			}
			// Whole lines: the model sees the code around a diagnostic or a
			// cursor, not a fragment of a line.
			rng := *a.Range
			if rng.End.Character > 0 || rng.End.Line == rng.Start.Line {
				rng.End = protocol.Position{Line: rng.End.Line + 1}
			}
			rng.Start.Character = 0
			if int(rng.End.Line) >= doc.LineCount() {
				rng.End = doc.PositionAt(len(doc.Text))
			}
			sel, err := doc.Slice(rng)
			if err != nil {
				return nil, InvalidParams("arguments[0].range: %v", err)
			}
			task.Selection = sel
			task.StartLine, task.EndLine = int(rng.Start.Line)+1, int(rng.End.Line)
			if rng.End.Character > 0 {
				task.EndLine++ // the last line has no line break
			}
		}
		for _, d := range a.Diagnostics {
			line := fmt.Sprintf("line %d: %s", d.Range.Start.Line+1, d.Message)
			if d.Source != "" {
				line += " (" + d.Source + ")"
			}
			task.Diagnostics = append(task.Diagnostics, line)
		}
	}
	return func(ctx context.Context, job *jobs.Job) (string, error) {
		if note != "" {
			job.Show(protocol.MessageTypeInfo, note)
		}
		return runAgent(ctx, s, job, task)
	}, nil
}

// modeInstruction is the task's instruction: the mode's built-in one, the
// user's, or both.
func modeInstruction(s *Server, a AgentRunArgs) (string, error) {
	given := strings.TrimSpace(a.Instruction)
	var builtin string
	switch a.Mode {
	case "", "ask":
	case "fix":
		builtin = agent.FixInstruction
	case "explain":
		builtin = agent.ExplainInstruction
	case "tests":
		builtin = agent.TestsInstruction
	case "comment":
		if given == "" && a.URI != "" && a.Range != nil {
			if doc, err := s.docs.Get(a.URI); err == nil {
				if _, text, ok := commentIn(doc, *a.Range); ok {
					builtin = commentInstruction(text)
				}
			}
		}
		if builtin == "" && given == "" {
			return "", InvalidParams("arguments[0]: mode comment needs a range holding a `warden:` comment")
		}
	default:
		return "", InvalidParams("arguments[0].mode %q: want fix, explain, tests, comment or ask", a.Mode)
	}
	switch {
	case builtin == "" && given == "":
		return "", InvalidParams("arguments[0].instruction is required: say what the agent should do")
	case builtin == "":
		return given, nil
	case given == "" || given == builtin:
		return builtin, nil
	}
	return builtin + "\n\nThe user adds: " + given, nil
}

// runAgent runs one task as a session and tells the user how it ended.
func runAgent(ctx context.Context, s *Server, job *jobs.Job, task agent.Task) (string, error) {
	cfg := s.Config()
	model, err := agent.NewClientFor(cfg)
	if err != nil {
		return "", err
	}
	root := s.rootFor(task.File)
	tools, err := s.agentTools(root, model)
	if err != nil {
		return "", err
	}
	obs := &jobObserver{job: job, s: s}
	env := agent.ToolEnv{
		Dir: root, Roots: s.readableRoots(root),
		Runner: outcomeRunner{tools.runner, obs}, Patcher: tools.patcher, Reads: tools.reads,
		Files: documentFiles{s.docs}, Observer: obs,
	}
	if task.QuotesFile() {
		// The editor's text goes to the model as a read would: the read
		// policy first.
		if err := env.CheckForward(ctx, task.File); err != nil {
			return "", fmt.Errorf("the request's text from %s was not sent to the model: %w", task.File, err)
		}
	}
	sess, err := agent.NewSession(agent.SessionConfig{
		Model:         model,
		Env:           env,
		Facts:         agentFacts(cfg, s.ClientInfo().Name),
		TranscriptDir: filepath.Join(config.StateDir(), "sessions"),
		OnText:        obs.text,
		OnReasoning:   obs.reasoning,
	})
	if err != nil {
		return "", err
	}
	defer sess.Close()
	s.log.Info("agent session started", "session", sess.ID, "root", root, "transcript", sess.Transcript.MarkdownPath)

	res, runErr := sess.Run(ctx, task.Prompt())
	// A cancelled run only logs where its transcript is: the user moved on.
	s.showTranscript(sess.Transcript.MarkdownPath, ctx.Err() == nil)
	switch {
	case runErr != nil:
		return "", runErr
	case res.Stopped:
		job.Show(protocol.MessageTypeWarning, "Warden: agent stopped: "+res.Reason)
		return "stopped: " + res.Reason, nil
	}
	answer := strings.TrimSpace(res.Answer)
	if answer == "" {
		answer = "(the agent finished without a message)"
	}
	job.Show(protocol.MessageTypeInfo, "Warden: agent: "+shortAnswer(answer))
	return "done", nil
}

// maxMessageAnswer bounds the answer in a notification; the transcript has
// all of it.
const maxMessageAnswer = 4000

func shortAnswer(answer string) string {
	if len(answer) <= maxMessageAnswer {
		return answer
	}
	cut := maxMessageAnswer
	for cut > 0 && !utf8.RuneStart(answer[cut]) {
		cut--
	}
	return answer[:cut] + "… (the whole answer is in the transcript)"
}

// showTranscript logs where the Markdown transcript is and, when open is
// set and the client can (window/showDocument), opens it beside the code.
func (s *Server) showTranscript(path string, open bool) {
	s.client.LogMessage(protocol.MessageTypeInfo, "Warden: agent transcript: "+path)
	if !open || !s.Capabilities().ShowDocument || s.connCtx.Err() != nil {
		return
	}
	if _, err := s.client.ShowDocument(s.connCtx, &wire.ShowDocumentParams{URI: textdoc.PathToURI(path), TakeFocus: false}); err != nil {
		s.log.Debug("showDocument of the transcript failed", "err", err)
	}
}

// rootFor is the workspace folder that holds file (links resolved), else the
// first folder, else the server's working directory: never a directory the
// file names, so a file outside the workspace does not move the boundary.
func (s *Server) rootFor(file string) string { return s.rootOf(file) }

// readableRoots are the workspace folders (the agent may read across them)
// with root first.
func (s *Server) readableRoots(root string) []string {
	roots := []string{root}
	for _, f := range s.WorkspaceFolders() {
		if f.Path != "" && f.Path != root {
			roots = append(roots, f.Path)
		}
	}
	return roots
}

func agentFacts(cfg config.Config, editor string) []string {
	net := "no network"
	switch effectiveNetwork(cfg) {
	case sandbox.NetworkOn:
		net = "network allowed"
	case sandbox.NetworkAsk:
		net = "network through Warden's proxy, each new host asked"
	}
	facts := []string{
		"Sandbox: " + cfg.SandboxMode + ", " + net,
		"Approval policy: " + cfg.ApprovalPolicy,
	}
	if editor != "" {
		facts = append(facts, "Editor: "+editor)
	}
	return facts
}

// cancelAgent cancels one job of any kind ({jobId}: an agent run, an exec,
// a patch, an undo; warden.status lists the ids) or, with no argument, every
// agent run. Clients without progress UI (eglot) have no other way to cancel.
// It answers with the ids it cancelled.
func cancelAgent(_ context.Context, s *Server, args []json.RawMessage) (any, error) {
	var a struct {
		JobID string `json:"jobId"`
	}
	if len(args) > 0 {
		if err := DecodeArg(args, 0, &a); err != nil {
			return nil, err
		}
	}
	// The job table knows a job from the moment its command answered, so a
	// cancel right after the start finds it.
	var running, cancelled []string
	for _, j := range s.Jobs() {
		running = append(running, j.ID+" "+j.Command)
		if (a.JobID == "" && j.Command == "warden.agent.run") || a.JobID == j.ID {
			if s.CancelJob(j.ID) {
				cancelled = append(cancelled, j.ID)
			}
		}
	}
	if a.JobID != "" && len(cancelled) == 0 {
		return nil, InvalidParams("arguments[0].jobId %q is not a running job (running: %s)", a.JobID, strings.Join(running, ", "))
	}
	if cancelled == nil {
		cancelled = []string{}
	}
	return map[string]any{"cancelled": cancelled}, nil
}

// jobObserver shows the session as the job's $/progress.
type jobObserver struct {
	s   *Server
	job *jobs.Job
	// line is the model's text since its last line break; it is shown at
	// most every textInterval, so a fast stream does not flood the editor.
	line     strings.Builder
	lastText time.Time
}

const textInterval = 250 * time.Millisecond

func (o *jobObserver) Step(text string) { o.job.Report(command.EscapeText(text), -1) }

// text follows the model's streamed words: the line being written, or the
// last one finished.
func (o *jobObserver) text(delta string) {
	shown := ""
	if i := strings.LastIndexByte(delta, '\n'); i >= 0 {
		o.line.WriteString(delta[:i])
		shown = o.line.String()
		if j := strings.LastIndexByte(shown, '\n'); j >= 0 {
			shown = shown[j+1:]
		}
		o.line.Reset()
		delta = delta[i+1:]
	}
	o.line.WriteString(delta)
	if strings.TrimSpace(o.line.String()) != "" {
		shown = o.line.String()
	}
	if time.Since(o.lastText) < textInterval {
		return
	}
	line := strings.TrimSpace(shown)
	if line == "" {
		return
	}
	if len(line) > 80 {
		cut := len(line) - 77
		for cut < len(line) && !utf8.RuneStart(line[cut]) {
			cut++
		}
		line = "…" + line[cut:]
	}
	o.lastText = time.Now()
	o.job.Report("Model: "+command.EscapeText(line), -1)
}

// reasoning shows that the model is thinking, not what: its reasoning is in
// the transcript, in a collapsed section, and never passes for its answer.
func (o *jobObserver) reasoning(string) {
	if time.Since(o.lastText) < textInterval {
		return
	}
	o.lastText = time.Now()
	o.job.Report("Model: thinking… (the reasoning is in the transcript)", -1)
}

func (o *jobObserver) Plan(plan []agent.PlanStep) {
	done, current := 0, ""
	for _, p := range plan {
		switch p.Status {
		case "completed":
			done++
		case "in_progress":
			current = p.Step
		}
	}
	msg := fmt.Sprintf("Plan %d/%d", done, len(plan))
	if current != "" {
		msg += ": " + command.EscapeText(current)
	}
	o.job.Report(msg, done*100/len(plan))
	o.s.client.LogMessage(protocol.MessageTypeInfo, "Warden: agent plan:\n"+agent.PlanText(plan))
}

// documentFiles reads through the document store: open buffers first.
type documentFiles struct{ docs *textdoc.Store }

func (d documentFiles) ReadFile(path string) ([]byte, error) {
	data, _, _, err := d.docs.ReadFile(path)
	return data, err
}

// Buffer implements agent.BufferReader: the open buffer only, so the agent
// reads the disk itself from the file it checked against the read policy.
func (d documentFiles) Buffer(path string) ([]byte, bool, error) {
	data, _, open, err := d.docs.Buffer(path)
	return data, open, err
}
