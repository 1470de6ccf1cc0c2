package sandbox

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/sandbox/guard"
	"github.com/wardenhq/warden/sandbox/linux"
	"golang.org/x/sys/unix"
)

// Starting a helper is most of a sandboxed command's start-up: creating the
// namespaces, starting the Go runtime, mounting /proc and /dev. None of it
// depends on the command, so a long-lived process (the language server, the
// agent loop) keeps one spare helper per kind of sandbox, started in the
// background after each run and waiting for its spec. The next run of that
// kind only sends the spec. Everything that depends on the command or on the
// moment (the policy's mounts, the socket scan, the protected-path watch, environment,
// working directory, Landlock, seccomp, capabilities, limits) still happens
// when it runs, and a spare's mount namespace keeps receiving the host's
// mounts and unmounts until then.

// A spare lives spareIdle: it holds a copy of the mount table, which a host
// whose mounts do not propagate (no systemd) does not keep current. While
// runs keep coming (within spareKeepWarm of the last one, an agent's turn
// can take minutes) an expired spare is replaced by a fresh one; after that
// the pool goes quiet until the next run. An idle spare costs about 1 MB
// of memory of its own (the rest is the binary's shared pages).
var (
	spareIdle     = 60 * time.Second
	spareKeepWarm = 10 * time.Minute
)

// A run's replacement spare starts once the caller has reported the run's
// result (RefillSpares), not when the command ends: a starting helper keeps a
// core busy for milliseconds (namespaces, the Go runtime, /proc and /dev),
// which on a small machine would delay the result it was not needed for. A
// caller that never says so gets its spare spareRefillDelay after the run.
var spareRefillDelay = 50 * time.Millisecond

// spareKey is what a helper is started with: which binary, and which
// namespaces.
type spareKey struct {
	helper     string
	namespaced bool
	network    linux.Network
}

type sparePool struct {
	mu       sync.Mutex
	enabled  bool
	epoch    int       // counts KeepSpareHelpers(false): a spare started before is not kept
	lastUse  time.Time // of any spare or cold helper
	idle     map[spareKey]*spareHelper
	starting map[spareKey]*spareStart
	owed     map[spareKey]bool // runs ended: refill once reported
	owedAt   *time.Timer       // refills the owed ones if nobody reports
	later    []func()          // ended runs' tidying, once reported (afterReport)
}

// spareStart is a spare on its way; done is closed when the start ends.
type spareStart struct {
	done  chan struct{}
	epoch int
}

type spareHelper struct {
	h     *helperProc
	timer *time.Timer
}

var spares = &sparePool{idle: map[spareKey]*spareHelper{}, starting: map[spareKey]*spareStart{}, owed: map[spareKey]bool{}}

// coldStartForTest makes runs ignore spares (the start-up benchmark times
// both ways); sparesTaken counts runs that used one.
var (
	coldStartForTest bool
	sparesTaken      atomic.Int64
)

// KeepSpareHelpers turns spare helpers on or off for this process. Turn it
// on in processes that run many commands; a one-shot command gains nothing
// from it. Turning it off ends the spares there are.
func KeepSpareHelpers(on bool) {
	spares.mu.Lock()
	spares.enabled = on
	var drop []*spareHelper
	if !on {
		spares.epoch++
		for k, s := range spares.idle {
			drop = append(drop, s)
			delete(spares.idle, k)
		}
	}
	var later []func()
	if !on {
		later, spares.later = spares.later, nil
	}
	spares.mu.Unlock()
	for _, f := range later {
		f()
	}
	guard.LingerWatches(on)
	for _, s := range drop {
		s.timer.Stop()
		s.h.kill()
	}
}

// keepingSpares says whether this process keeps spare helpers: a long-lived
// one (KeepSpareHelpers).
func keepingSpares() bool {
	spares.mu.Lock()
	defer spares.mu.Unlock()
	return spares.enabled
}

// afterReport queues f, tidying after a run that nothing waits for (the
// git placeholders' release), to run once the run's result is reported
// (RefillSpares) or spareRefillDelay after, whichever comes first, and
// before the spares start. A process that keeps no spares (one command)
// gets false and runs f itself.
func afterReport(f func()) bool {
	sp := spares
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.enabled {
		return false
	}
	sp.later = append(sp.later, f)
	if sp.owedAt == nil {
		sp.owedAt = time.AfterFunc(spareRefillDelay, sp.payOwed)
	}
	return true
}

// PrepareSpare starts a spare helper for commands under pol now, so that
// the first of them starts warm too (helper as in Command.Helper). It does
// nothing unless KeepSpareHelpers is on.
func PrepareSpare(pol Policy, helper string) {
	spares.fill(helperKey(pol, helper))
}

// helperKey is the kind of helper a command under pol will take: without
// namespaces, network ask runs as off (askFallsBackToOff).
func helperKey(pol Policy, helper string) spareKey {
	ns := pol.Sandboxed() && namespacesUsable()
	network := pol.network()
	if network == NetworkAsk && !ns && pol.Sandboxed() {
		network = NetworkOff
	}
	return spareKey{helper: helper, namespaced: ns, network: linux.Network(network)}
}

// take returns the spare for key, or nil.
func (sp *sparePool) take(key spareKey) *helperProc {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.lastUse = time.Now()
	s := sp.idle[key]
	if s == nil || !sp.enabled || coldStartForTest {
		return nil
	}
	delete(sp.idle, key)
	s.timer.Stop()
	sparesTaken.Add(1)
	return s.h
}

// fill starts a spare for key in the background unless one is there or on
// its way.
func (sp *sparePool) fill(key spareKey) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if st := sp.starting[key]; !sp.enabled || coldStartForTest || sp.idle[key] != nil || (st != nil && st.epoch == sp.epoch) {
		return
	}
	st := &spareStart{done: make(chan struct{}), epoch: sp.epoch}
	sp.starting[key] = st
	go func() {
		defer close(st.done)
		h, err := spawnHelper(key)
		if err == nil {
			if err = h.status.waitIdle(); err != nil {
				h.kill()
			}
		}
		sp.mu.Lock()
		defer sp.mu.Unlock()
		if sp.starting[key] == st {
			delete(sp.starting, key)
		}
		if err != nil {
			return // the next run starts cold and reports what is wrong
		}
		if !sp.enabled || sp.epoch != st.epoch || sp.idle[key] != nil {
			go h.kill()
			return
		}
		s := &spareHelper{h: h}
		s.timer = time.AfterFunc(spareIdle, func() {
			sp.mu.Lock()
			mine := sp.idle[key] == s
			if mine {
				delete(sp.idle, key)
			}
			refresh := time.Since(sp.lastUse) < spareKeepWarm
			sp.mu.Unlock()
			if mine {
				h.kill()
				if refresh {
					sp.fill(key)
				}
			}
		})
		sp.idle[key] = s
	}()
}

// fillAfterReport starts the spare for key once the run's caller has
// reported (RefillSpares), or after spareRefillDelay.
func (sp *sparePool) fillAfterReport(key spareKey) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.owed[key] = true
	if sp.owedAt == nil {
		sp.owedAt = time.AfterFunc(spareRefillDelay, sp.payOwed)
	}
}

// payOwed does the ended runs' tidying and starts the spares they are owed.
func (sp *sparePool) payOwed() {
	sp.mu.Lock()
	keys, later := sp.owed, sp.later
	sp.owed, sp.later = map[spareKey]bool{}, nil
	if sp.owedAt != nil {
		sp.owedAt.Stop()
		sp.owedAt = nil
	}
	sp.mu.Unlock()
	for _, f := range later {
		f()
	}
	for k := range keys {
		sp.fill(k)
	}
}

// RefillSpares says the results of the runs that ended are reported: their
// replacement spares start now. A process that keeps spares calls it once
// it has told its user (see spareRefillDelay).
func RefillSpares() { spares.payOwed() }

// settle starts the owed spares and waits until no spare is being started
// (for tests and benchmarks, which must not time their baselines while one
// starts).
func (sp *sparePool) settle() {
	sp.payOwed()
	for {
		sp.mu.Lock()
		var wait chan struct{}
		for _, st := range sp.starting {
			wait = st.done
			break
		}
		sp.mu.Unlock()
		if wait == nil {
			return
		}
		<-wait
	}
}

// helperArgs are the arguments a helper for key is started with.
func helperArgs(key spareKey) []string {
	args := []string{linux.HelperArg, linux.ArgFlat, linux.ArgNoNetwork}
	if key.namespaced {
		args[1] = linux.ArgNamespaced
	}
	switch key.network {
	case linux.NetworkOn:
		args[2] = linux.ArgNetwork
	case linux.NetworkAsk:
		args[2] = linux.ArgAskNetwork
	}
	return args
}

// hostSockDiag returns a new sock_diag socket of the launcher's network
// namespace for a helper that gets a namespace of its own and mediates,
// nil for others (each helper its own: replies to concurrent requests on
// one socket would interleave). The
// supervisor asks it whether a socket file outside is bound at all, so a
// stale one is answered ECONNREFUSED (as without a sandbox) and a live one
// EACCES, without ever connecting to a host service to find out.
func hostSockDiag(key spareKey) *os.File {
	if !key.namespaced || key.network == linux.NetworkOn || !linux.SocketMediation() || linux.MediationOffForTest {
		return nil
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil // the supervisor then answers EACCES for every socket outside
	}
	return os.NewFile(uintptr(fd), "sock_diag")
}
