package approvals

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"
)

// SessionStore remembers "Allow for session" answers and makes concurrent
// identical requests share one prompt. A request carries one or more keys (a
// command has one; a patch has one per file) and skips the prompt only when
// every key was approved for the session (a key may name wider keys that
// also satisfy it: see orKeys).
type SessionStore struct {
	mu       sync.Mutex
	approved map[string]bool
	pending  map[string]*pendingPrompt
	// contacted are the network destinations reached this session (see
	// network_session.go).
	contacted map[string]bool
	// lapsed are unsandboxed approvals that no longer hold, with why (see
	// session_lapse.go).
	lapsed map[string]string
}

type pendingPrompt struct {
	done     chan struct{}
	decision ReviewDecision
	err      error
	// again asks the prompting call to withdraw its dialog and show a new
	// one: an identical request came while it was open.
	again chan struct{}
}

// NewSessionStore returns an empty store.
func NewSessionStore() *SessionStore {
	return &SessionStore{approved: map[string]bool{}, pending: map[string]*pendingPrompt{}}
}

// CommandKey is the session key of a command: argv, cwd and the sandbox it
// runs under (so approving a sandboxed run never approves an escalated one).
func CommandKey(argv []string, cwd, sandbox string) string {
	b, _ := json.Marshal(struct {
		Kind    string   `json:"kind"`
		Argv    []string `json:"argv"`
		Cwd     string   `json:"cwd"`
		Sandbox string   `json:"sandbox"`
	}{"command", argv, cwd, sandbox})
	return string(b)
}

// PatchFileKey is the session key of one file a patch touches.
func PatchFileKey(path string) string {
	b, _ := json.Marshal(struct {
		Kind string `json:"kind"`
		Path string `json:"path"`
	}{"patch", path})
	return string(b)
}

// Remembered reports whether every key was approved for the session.
func (s *SessionStore) Remembered(keys []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rememberedLocked(keys)
}

func (s *SessionStore) rememberedLocked(keys []string) bool {
	if len(keys) == 0 {
		return false
	}
	for _, k := range keys {
		if !slices.ContainsFunc(keyAlternatives(k), func(a string) bool { return s.approved[a] }) {
			return false
		}
	}
	return true
}

// Ask returns ApprovedForSession at once when every key is remembered.
// Otherwise it calls ask, unless an identical request is already waiting for
// the user, in which case it waits for that answer instead of asking twice.
// ApprovedForSession stores each key. cached reports an answer that did not
// come from a prompt of this call.
//
// With remember false the remembered answers are not consulted (a high-risk
// request is asked every time), but identical pending prompts are still
// shared.
func (s *SessionStore) Ask(ctx context.Context, keys []string, remember bool, ask func(context.Context) (ReviewDecision, error)) (d ReviewDecision, cached bool, err error) {
	id := strings.Join(keys, "\x00")
	if !remember {
		id = "ask-every-time\x00" + id
	}
	s.mu.Lock()
	if remember && s.rememberedLocked(keys) {
		s.mu.Unlock()
		return ApprovedForSession, true, nil
	}
	if p, ok := s.pending[id]; ok {
		s.mu.Unlock()
		// The dialog on screen may be lost (eglot never answers one the
		// user dismissed with C-g): once it has been open a while, withdraw
		// it and ask again; every waiter gets the new dialog's answer.
		// Never wait silently.
		select {
		case p.again <- struct{}{}:
		default:
		}
		select {
		case <-p.done:
			return p.decision, true, p.err
		case <-ctx.Done():
			return Denied, false, ctx.Err()
		}
	}
	p := &pendingPrompt{done: make(chan struct{}), again: make(chan struct{}, 1)}
	s.pending[id] = p
	s.mu.Unlock()

	p.decision, p.err = askUntilSettled(ctx, p.again, ask)
	if p.err != nil {
		p.decision = Denied // fail closed
	}

	s.mu.Lock()
	if p.decision == ApprovedForSession {
		for _, k := range keys {
			s.approved[exactKey(k)] = true
			delete(s.lapsed, exactKey(k))
		}
	}
	delete(s.pending, id)
	s.mu.Unlock()
	close(p.done)
	return p.decision, false, p.err
}

// RepromptAfter is how long a dialog may be open before an identical new
// request withdraws it and shows a new one; identical requests that come
// sooner (an agent's parallel calls) share it.
var RepromptAfter = 2 * time.Second

// askUntilSettled calls ask, and calls it again (after cancelling the first
// call) when again fires while a dialog older than RepromptAfter is open.
func askUntilSettled(ctx context.Context, again <-chan struct{}, ask func(context.Context) (ReviewDecision, error)) (ReviewDecision, error) {
	type answer struct {
		d   ReviewDecision
		err error
	}
	for {
		askCtx, cancel := context.WithCancel(ctx)
		res := make(chan answer, 1)
		shown := time.Now()
		go func() {
			d, err := ask(askCtx)
			res <- answer{d, err}
		}()
	wait:
		for {
			select {
			case a := <-res:
				cancel()
				return a.d, a.err
			case <-again:
				if time.Since(shown) < RepromptAfter {
					continue
				}
				cancel()
				if a := <-res; a.err == nil {
					// Answered just before it was withdrawn: keep the answer.
					return a.d, nil
				}
				if ctx.Err() != nil {
					return Denied, ctx.Err()
				}
				break wait
			}
		}
	}
}
