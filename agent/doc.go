// Package agent is the model loop: an OpenAI-compatible Chat Completions client,
// the tool registry (shell, apply_patch, read_file, list_dir, update_plan),
// sessions and their transcripts. Nothing here knows about LSP; the editor is
// reached only through interfaces this package declares.
package agent
