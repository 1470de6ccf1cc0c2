package sandbox

// launchWaitsReady: on Linux the helper prepares the sandbox while Ready
// runs, and starts the command only on the launcher's go, sent once Ready
// has returned (helperProc.start).
const launchWaitsReady = true
