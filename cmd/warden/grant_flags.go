package main

import (
	"flag"

	"github.com/wardenhq/warden/sandbox"
)

// grantFlags are the additional permissions a command line asks for:
// --grant-write D, --grant-read P, --grant-network HOST (each repeatable;
// paths absolute or relative to --cwd). The request still needs approval:
// the grant is shown in the prompt, and runs only inside the sandbox.
type grantFlags struct {
	write, read, network ruleFileList
}

func (f *grantFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.write, "grant-write", "ask to write this directory inside the sandbox (repeatable; needs approval)")
	fs.Var(&f.read, "grant-read", "ask to read this path the read policy hides (repeatable; needs approval)")
	fs.Var(&f.network, "grant-network", "ask for network to this host[:port] through the proxy (repeatable; needs approval and network ask)")
}

// grant is the request's sandbox.Grant, as written.
func (f grantFlags) grant() sandbox.Grant {
	return sandbox.Grant{Write: f.write, Read: f.read, Network: f.network}
}
