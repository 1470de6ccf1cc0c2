// Package lsp is Warden's editor face: the language server lifecycle over
// stdio, the document store that mirrors the editor's buffers, code actions,
// the warden.* commands run as cancellable jobs, and the typed client for
// server→client calls (approval dialogs, workspace edits, progress).
//
// It also holds the editor-backed implementations of the interfaces that lower
// packages declare: approvals.Prompter (showMessageRequest) here, and the patch
// Workspace (workspace/applyEdit) in lsp/patchedit.
//
// Below it, by role, packages that do not know the server: lsp/framing (the
// messages on the wire), lsp/wire (the LSP shapes protocol lacks, the client
// capabilities), lsp/textdoc (the document store), lsp/jobs (cancellable jobs
// and their progress) and lsp/patchedit.
//
// # Adding a feature (the extension API)
//
// Each feature lives in its own file of this package and plugs in from init,
// without editing the core files:
//
//	func init() {
//		lsp.RegisterCommand(lsp.Command{
//			Name:  "warden.exec",
//			Title: "Running a command",
//			// Start validates on the message goroutine; its error is the
//			// InvalidParams reply. The job runs after the reply has gone.
//			Start: func(s *lsp.Server, args []json.RawMessage) (lsp.JobFunc, error) {
//				var a execArgs
//				if err := lsp.DecodeArg(args, 0, &a); err != nil {
//					return nil, err // "arguments[0].command: want an array, got string"
//				}
//				if len(a.Command) == 0 {
//					return nil, lsp.InvalidParams("arguments[0].command must not be empty")
//				}
//				return func(ctx context.Context, job *jobs.Job) (string, error) {
//					job.Report("waiting for approval", -1)
//					choice, err := s.Client().ShowMessageRequest(ctx, ...)
//					...
//					return "exit status 0", nil // closing progress message
//				}, nil
//			},
//		})
//		lsp.RegisterCodeActions(lsp.CodeActionProvider{
//			Name:    "agent",
//			Kinds:   []protocol.CodeActionKind{"quickfix", "refactor.rewrite"},
//			Actions: func(ctx context.Context, s *lsp.Server, req lsp.CodeActionRequest) ([]lsp.CodeAction, error) { ... },
//			Resolve: nil, // optional: fill in Edit lazily from Data
//		})
//	}
//
// Commands: RegisterCommand adds a warden.* command; the command list in
// executeCommandProvider is built from the registry. A command with Run
// answers synchronously (quick, no client calls: warden.status). A command
// with Start answers at once with JobStarted{jobId, title} and runs its
// JobFunc as a job under a context that ends on window/workDoneProgress/cancel,
// on $/cancelRequest of the executeCommand request (numeric ids too), on
// Server.CancelJob, on shutdown, or when the connection ends. Progress is
// reported by the server: begin (cancellable) when the job starts, Job.Report
// in between, end with the job's message, "cancelled" or "failed: …". A
// failed job is also shown with window/showMessage (lsp/jobs). Server.Jobs
// lists jobs.
//
// Code actions: RegisterCodeActions adds a provider; each request asks every
// provider (sorted by name) and filters by context.only. Providers get a
// Document snapshot, the range and the diagnostics; they must be quick and
// must not call the client. If a provider has Resolve, its actions' Data is
// wrapped so codeAction/resolve reaches it again with the original Data.
//
// Documents: Server.Docs() is the store (lsp/textdoc). Docs().ReadFile(path) returns the
// open buffer and its version (open=true), else the file on disk (open=false,
// version 0); an out-of-sync buffer is an error (textdoc.ErrOutOfSync), never stale
// text. Get(uri) returns an immutable *Document snapshot (Text, Version,
// Offset/PositionAt in UTF-16 columns, Slice, Line(i) without splitting the
// text: providers run per request, keep them O(range), not O(document)). WaitVersion(ctx, uri, v)
// waits for the editor's didChange to reach version v (use it to verify an
// applyEdit really landed: Neovim answers applied=true even when it skipped a
// stale edit). Observe(fn) sees every open/change/close; Changed() is a
// channel closed at the next one.
//
// Client calls (from jobs only, never from handlers, providers or
// observers, which run on the message goroutine): Server.Client() has
// ShowMessageRequest (nil item = dismissed), ApplyEdit (own result type),
// ShowDocument, WorkDoneProgressCreate + Progress (by pointer), ShowMessage,
// LogMessage. Calls end with an error when the editor disconnects: treat it
// as a denial. Capabilities() (also Server.Capabilities) gives the flags the
// client announced: ChangeAnnotations (send AnnotatedTextEdit.AnnotationID
// only then), ShowDocument, WorkDoneProgress, DocumentChanges,
// ResourceOperations, MessageActionProperties, CodeActionResolve.
//
// Wire types protocol v0.12.0 lacks (lsp/wire): WorkspaceEdit with mixed
// DocumentChanges (TextDocumentEdit with AnnotatedTextEdit, Create/Rename/
// DeleteFile) and ChangeAnnotations, ApplyWorkspaceEditParams/Result,
// ShowDocumentParams/Result, CodeAction.
//
// Settings: Server.Config() is config.toml + environment + the editor's
// initializationOptions / didChangeConfiguration (bare or under "warden").
// UpdateConfig changes it (validated, all or nothing); OnConfigChange watches.
// Per-connection state for a feature: Server.Value(key, init).
//
// Approvals: Server.Orchestrator(root) returns the approvals orchestrator for
// work in a workspace root (whose rules apply; roots.go decides which folder
// holds a path, links resolved), with a sandbox whose workspace is every
// workspace folder whatever a command's cwd, from the current settings, sharing the
// connection's session store ("Allow for session"), audit log and a watched
// rule book per root; its Prompter is EditorPrompter (showMessageRequest, the
// dialog contract in DESIGN.md). warden.exec {command, cwd?, justification?}
// runs one command through it. config.toml is reloaded on change.
//
// Patches: PatchWorkspace() is the editor's patch.Workspace (lsp/patchedit: one
// workspace/applyEdit per plan, outcome read back from the documents) and
// Checkpoints() the connection's undo store; warden.patch.apply and
// warden.undo (patch_commands.go) use both.
//
// Tests: lsp/lsptest drives the real binary over pipes; see its doc.
package lsp
