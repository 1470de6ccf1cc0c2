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
// As in Codex (testdata/scenarios has a case for each): "\r\n", "\n" and a
// lone "\r" end lines, in the patch and in the files; an addition appended
// at the end of a file does not move where the next chunk is searched for
// (edits are applied in file order); a line inside a chunk that starts with
// a space is context even when it reads "*** Update File: x"; an
// "*** Environment ID: ..." line before the first file is ignored.
//
// Where Warden differs from Codex on purpose:
//   - the whole patch is checked before anything is written and a failure
//     changes nothing (Codex leaves the files it changed before the error);
//   - an ambiguous hunk is an error, not the first match;
//   - a pure addition under an @@ anchor goes right after the anchor
//     (without one it appends, as in Codex); several @@ lines narrow the
//     search step by step;
//   - context lines keep the file's own text; files keep their line
//     endings, modes and missing final newline;
//   - an Update File with a Move to and no chunks renames the file (Codex
//     refuses an update without chunks);
//   - the same path changed in two sections is an error naming both lines
//     (Codex applies the sections one after the other);
//   - a chunk with only context lines is an error (Codex accepts it and
//     changes nothing): it is almost always a chunk whose +/- lines were lost.
package patch
