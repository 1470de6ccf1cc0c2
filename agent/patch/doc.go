// Package patch is the patch model: how the agent's (and the user's) patches
// are read, checked, applied and undone.
//
// The entry point, used by the agent's apply_patch tool, the CLI and the
// editor's warden.patch.apply command:
//
//	changes, err := patch.Parse(text)           // Codex "*** Begin Patch" or unified/git diff
//	plan, err := patch.Prepare(changes, ws, opt) // resolve paths, locate hunks, compute results
//	// plan.Concerns lists what needs approval (outside the workspace, protected
//	// paths, binaries): ask through the approvals orchestrator before going on.
//	res, err := patch.Apply(ctx, ws, plan, cps)  // land it, recording a checkpoint
//	fmt.Print(res)                               // what really landed, for the model
//
// A Workspace is where plans land: Disk here (all or nothing, through
// temporary files and renames), or the editor in package lsp, which sends one
// workspace/applyEdit and reads back which hunks the user accepted. Hunks are
// located with Codex's tolerance ladder (exact, then ignoring trailing
// whitespace, surrounding whitespace, and typographic punctuation), and never
// at an ambiguous place: two equally good matches is an error naming both.
// Checkpoints.Undo reverts the last patch through the same Workspace.
//
// A Workspace reports a Result with one FileResult per plan file, in plan
// order: landed, partly landed (which hunks) or not, and why. Editor
// workspaces use LandedHunks to tell which hunks a document shows.
// Checkpoints keep only what really landed, so undo never reverts someone
// else's edit, and undo refuses (EditedSinceError) when a file changed since,
// unless forced.
//
// Where Warden differs from Codex on purpose: the whole patch is checked
// before anything is written and a failure changes nothing; an ambiguous
// hunk is an error, not the first match; a pure addition under an @@ anchor
// goes right after the anchor (without one it appends, as in Codex); several
// @@ lines narrow the search step by step; context lines keep the file's own
// text; files keep their line endings, modes and missing final newline.
package patch
