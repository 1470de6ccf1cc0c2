// Package jobs runs a connection's long commands: each job runs under a
// context that ends on cancel (by id, by its request's $/cancelRequest, by its
// progress token, or with the connection), a panic becomes its failure, and
// its progress is shown in the editor: begun as it starts (without waiting
// for the client's token), reported in order, ended with its message, or said
// with window/showMessage to a client without progress UI. WatchRun puts a
// running command's elapsed time and last output line in that progress.
//
// It reaches the editor only through Conn; lsp registers the commands that
// start jobs and implements Conn over its connection.
package jobs
