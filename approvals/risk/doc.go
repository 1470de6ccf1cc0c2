// Package risk states the static facts of a command line, a patch or a read
// before it runs: what it deletes or overwrites (counted on disk), which
// secrets it reads (files, credential stores, programs that print them) or
// writes on the command line, what it fetches and runs or uploads, which
// services and other machines it touches, where clones, archives and
// installs land, and what git would obey (configuration, hooks, remotes,
// submodules), with what Warden knows of git in risk/gitfacts. Each concern
// has its own file; Assess runs them all over an approvals/command analysis
// and returns a Risk: a level, the facts worst first, and whether the sandbox
// described in the Context stops every high effect (the facts never
// contradict the sandbox line of a dialog). It never runs anything and never
// decides: approvals weighs the facts.
package risk
