// Package agent is the model loop: an OpenAI-compatible Chat Completions client,
// the tool registry (shell, apply_patch, read_file, list_dir, update_plan),
// sessions and their transcripts, and the optional model risk summary.
//
// Nothing here knows about LSP or terminals. What a session needs from its
// surroundings it declares as small interfaces (CommandRunner, PatchApplier,
// FileReader, Observer) that lsp and cmd implement: the editor asks through
// dialogs and buffers, the terminal through prompts and the disk. What the
// agent reads itself for the model passes the sandbox's read policy through
// a ReadGate (readpolicy.go), which Orchestrated implements.
package agent
