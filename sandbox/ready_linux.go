package sandbox

// launchWaitsReady: launch calls Command.Ready itself, after preparing the
// helper's spec and just before sending it (launch_linux.go).
const launchWaitsReady = true
