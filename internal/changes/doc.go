// Package changes records what a command changed in the roots it could
// write, so that Warden can say what changed and undo it like a patch.
//
// Before a run that can write, a Recorder takes a snapshot of each root: one
// Entry (size, times, inode, mode) per file, symbolic link and empty
// directory, and for each a way to get its content back (a link's is its
// target, read when listed; an empty directory's, its mode). A file whose stat matches its git index entry (outside git's
// racy window) needs nothing: its content is the index's blob in the user's
// own object store, read back, read-only, at undo time. Any other file is
// copied into the Store (content-addressed, under Warden's state directory)
// unless the Store's stat cache says the same bytes are there already, so a
// snapshot copies only what changed since the last one. After the run, a
// second look lists what was created, modified, deleted and moved, and
// Change describes it and lists each file's state before and after, which
// agent/patch keeps in the same history as patches.
//
// Where the sandbox reports each path a command is about to change
// (BeginTracked, Run.Touch), nothing is listed: the file is kept at the
// report, as it still is before the run, and the look after the run reads
// the reported paths only, so the record costs what the command changed.
// A running command may put a link on a path meanwhile: files are read and
// looked at without following one on the way (readBeneath, pathBeneath).
//
// Nothing is ever written to the roots or to a repository's .git. The
// package imports nothing of Warden's: approvals runs a Recorder around a
// command, agent/patch stores and undoes what it found.
package changes
