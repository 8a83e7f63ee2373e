package scripted

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
)

// Runtime is the sdkproto.Runtime that plays a Script, behind an
// sdkproto.Server: it keeps the sessions, queues each session's prompts
// and plays one turn at a time per session, while sessions run
// concurrently, as the demo runtime and the real one do. A Runtime serves
// one connection: its prompts are counted from its first, and Shutdown
// ends it. Its methods are safe for concurrent use.
type Runtime struct {
	script Script
	// pastScript, when set, hears of a prompt that no turn was scripted
	// for, with its error (Options.PastScript).
	pastScript func(p Prompt, err error)
	pastMu     sync.Mutex // serializes the calls of pastScript

	ctx    context.Context // ends at Shutdown
	cancel context.CancelFunc
	turns  sync.WaitGroup // the sessions' agents at work

	em   atomic.Pointer[sdkproto.Emitter]
	conn atomic.Pointer[rpc.Conn] // of the latest request

	mu       sync.Mutex
	closed   bool // Shutdown began: no agent starts any more
	prompts  int  // received so far
	sessions map[string]*session
	past     []Prompt // the prompts that came past the script
}

var _ sdkproto.Runtime = (*Runtime)(nil)

// Options configure a Runtime. A nil *Options means defaults.
type Options struct {
	// PastScript, when set, is called at each prompt that the script has
	// no turn for, before the prompt is answered, with the prompt and its
	// error (see ErrPastScript). Its calls are serialized, each after
	// the prompt was counted, so Runtime.Err called in the last of them
	// counts every such prompt before it. It runs on the goroutine that
	// serves the prompt, which waits for it.
	PastScript func(p Prompt, err error)
}

// NewRuntime returns a Runtime that plays s, to be served by an
// sdkproto.Server (Serve does both). It returns the error of Script.Err
// when a Turn of s was misused.
func NewRuntime(s Script, opts *Options) (*Runtime, error) {
	if err := s.Err(); err != nil {
		return nil, err
	}
	p := &Runtime{script: s, sessions: map[string]*session{}}
	if opts != nil {
		p.pastScript = opts.PastScript
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// ErrPastScript is the error of a prompt that the script has no turn
// for: one past Script.Turns, when the Script has no Reply or its Reply
// returned nil. The error of such a prompt wraps it and names the prompt,
// by its place among the prompts (the first is prompt 1) and its
// session, and the script's number of turns: "scripted: no turn scripted
// for prompt 3 (session main), past the script's 2 turns". The runtime
// answers the prompt with -32603 and that message; Serve returns the
// error once serving has ended (Runtime.Err), and sdktest.NewRuntime
// fails the test with it.
var ErrPastScript = errors.New("scripted: no turn scripted")

// Serve serves the script on r and w with an sdkproto.Server, as
// demo.Serve serves the demo runtime, and returns as
// sdkproto.Server.Serve does: after a shutdown request, at the end of r,
// or when ctx ends. A prompt that the script has no turn for is answered
// with -32603 and the message of its error (see ErrPastScript); when one
// came, and serving ended without a failure of its own (ended by a
// shutdown request, the end of r or ctx), Serve returns the error of the
// first such prompt, which wraps ErrPastScript and says how many more
// came (Runtime.Err). It returns an error at once when a Turn of s was
// misused (Script.Err). A program that needs a Server of its own
// (sdkproto.ServerOptions) serves a Runtime of NewRuntime with it, and
// reads Runtime.Err once it has served.
func Serve(ctx context.Context, s Script, r io.Reader, w io.Writer) error {
	p, err := NewRuntime(s, nil)
	if err != nil {
		return err
	}
	err = sdkproto.NewServer(p, nil).Serve(ctx, r, w)
	if past := p.Err(); past != nil && (err == nil || ctx.Err() != nil && errors.Is(err, ctx.Err())) {
		return past
	}
	return err
}

// pastErr returns the error of prompt pr, which no turn was scripted
// for (see ErrPastScript).
func (p *Runtime) pastErr(pr Prompt) error {
	turns := "turns"
	if len(p.script.Turns) == 1 {
		turns = "turn"
	}
	var reply string
	if p.script.Reply != nil {
		reply = ", and Reply returned nil"
	}
	return fmt.Errorf("%w for prompt %d (session %s), past the script's %d %s%s", ErrPastScript, pr.N+1, pr.SessionID, len(p.script.Turns), turns, reply)
}

// Err returns the error of the first prompt that came past the script
// (the first received: prompts may be served concurrently), wrapping
// ErrPastScript and saying how many more came, or nil when none did.
func (p *Runtime) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.past) == 0 {
		return nil
	}
	first := p.past[0]
	for _, pr := range p.past[1:] {
		if pr.N < first.N {
			first = pr
		}
	}
	err := p.pastErr(first)
	switch more := len(p.past) - 1; {
	case more == 1:
		err = fmt.Errorf("%w (and 1 more prompt after it)", err)
	case more > 1:
		err = fmt.Errorf("%w (and %d more prompts after it)", err, more)
	}
	return err
}

// session is one agent: its route, its inbox and its turns.
type session struct {
	id    string
	route sdkproto.Route
	// child sessions are a subagent's: their seqs are counted here and
	// start at 2, as the runtime forwards nothing of what it logs before
	// publishing them (docs/wire.md §5.5).
	child bool

	mu      sync.Mutex // held while a prompt is received or a turn claimed
	opened  bool       // its preamble was sent
	queue   []queued
	running bool
	turns   int64

	next int64 // a child's next seq; guarded by the Emitter's order of the session
}

// queued is a prompt waiting for its turn.
type queued struct {
	msg  sdkproto.Message
	turn *Turn
}

// Initialize accepts every route that passed the Server's checks.
func (p *Runtime) Initialize(ctx context.Context, _ sdkproto.InitializeRequest) error {
	p.enter(ctx)
	return nil
}

// enter keeps the connection of a request: a turn's Ask calls the client
// on it, and the leak check waits for it.
func (p *Runtime) enter(ctx context.Context) {
	if c := rpc.ConnFromContext(ctx); c != nil {
		p.conn.Store(c)
	}
}

// Prompt picks the prompt's turn, sends the new session's preamble and
// the receipt, and, when the session is idle, starts its turn: running,
// turn/start and the claim are sent before the reply, as the real
// runtime does.
func (p *Runtime) Prompt(ctx context.Context, req sdkproto.PromptRequest) (sdkproto.SessionPromptResult, error) {
	p.enter(ctx)
	p.em.Store(req.Emitter)
	p.mu.Lock()
	n := p.prompts
	p.prompts++
	s := p.sessions[req.SessionID]
	if s == nil {
		s = &session{id: req.SessionID, route: req.Route}
		p.sessions[req.SessionID] = s
	}
	p.mu.Unlock()

	pr := Prompt{N: n, SessionID: req.SessionID, Content: req.Content, Text: sdkproto.FinalText(req.Content)}
	turn := p.turnFor(pr)
	switch {
	case turn == nil:
		err := p.pastErr(pr)
		p.mu.Lock()
		p.past = append(p.past, pr)
		p.mu.Unlock()
		if p.pastScript != nil {
			p.pastMu.Lock()
			p.pastScript(pr, err)
			p.pastMu.Unlock()
		}
		return sdkproto.SessionPromptResult{}, err
	case turn.err != nil:
		return sdkproto.SessionPromptResult{}, turn.err
	case len(turn.actions) > 0 && turn.actions[0].Kind == actRefuse:
		return sdkproto.SessionPromptResult{}, errors.New(turn.actions[0].Message)
	}

	em := req.Emitter
	msg := userMessage(req.Content)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.opened {
		// The preamble of a session the SDK creates: its policy events,
		// before the receipt (testdata/transcripts/README.md, fact 1).
		for _, ev := range []struct {
			typ  sdkproto.EventType
			data any
		}{
			{sdkproto.EventPermissionPreset, map[string]string{"preset": "danger-full-access"}},
			{sdkproto.EventSandboxMode, map[string]string{"mode": "danger-full-access"}},
			{sdkproto.EventApprovalPolicy, map[string]string{"policy": "never"}},
		} {
			if _, err := p.append(ctx, em, s, event(ev.typ, ev.data)); err != nil {
				return sdkproto.SessionPromptResult{}, err
			}
		}
		s.opened = true
	}
	if _, err := p.append(ctx, em, s, event(sdkproto.EventAgentInboxSpliced, sdkproto.InboxSplicedData{
		Target: "next-turn", Start: int64(len(s.queue)), Inserted: []sdkproto.Message{msg},
	})); err != nil {
		return sdkproto.SessionPromptResult{}, err
	}
	s.queue = append(s.queue, queued{msg: msg, turn: turn})
	if !s.running {
		p.mu.Lock()
		closed := p.closed
		if !closed {
			p.turns.Add(1)
		}
		p.mu.Unlock()
		if closed {
			return sdkproto.SessionPromptResult{}, sdkproto.ErrShuttingDown
		}
		s.running = true
		em.Status(ctx, s.id, sdkproto.StatusRunning)
		first := p.claim(ctx, em, s)
		go p.work(em, s, first)
	}
	return sdkproto.SessionPromptResult{MessageID: msg.ID}, nil
}

// turnFor returns the turn of prompt pr, nil when none is scripted.
func (p *Runtime) turnFor(pr Prompt) *Turn {
	if pr.N < len(p.script.Turns) {
		return p.script.Turns[pr.N]
	}
	if p.script.Reply != nil {
		return p.script.Reply(pr)
	}
	return nil
}

// claim starts the session's next turn with its first queued prompt:
// turn/start, then the splice that takes the prompt off the inbox. Called
// with s.mu held and a prompt queued.
func (p *Runtime) claim(ctx context.Context, em *sdkproto.Emitter, s *session) queued {
	s.turns++
	removed := int64(1)
	p.append(ctx, em, s, event(sdkproto.EventTurnStart, sdkproto.TurnData{Turn: s.turns}))
	p.append(ctx, em, s, event(sdkproto.EventAgentInboxSpliced, sdkproto.InboxSplicedData{
		Target: "next-turn", Start: 0, RemovedCount: &removed, Inserted: []sdkproto.Message{},
	}))
	q := s.queue[0]
	s.queue = s.queue[1:]
	return q
}

// work plays the session's turns until its inbox is empty, then sends
// idle.
func (p *Runtime) work(em *sdkproto.Emitter, s *session, q queued) {
	defer p.turns.Done()
	for {
		p.play(em, s, q.msg, q.turn.actions)
		s.mu.Lock()
		if len(s.queue) == 0 || p.ctx.Err() != nil {
			s.running = false
			em.Status(p.ctx, s.id, sdkproto.StatusIdle)
			s.mu.Unlock()
			return
		}
		q = p.claim(p.ctx, em, s)
		s.mu.Unlock()
	}
}

// Shutdown cuts the turns in flight off (a pause ends at once) and waits
// for the sessions' agents to stop.
func (p *Runtime) Shutdown(context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	p.turns.Wait()
	return nil
}

// append appends ev to the session's log: with the Emitter's seqs for a
// session the client created, with the session's own (from 2) for a
// child. It returns the seq the event was sent with.
func (p *Runtime) append(ctx context.Context, em *sdkproto.Emitter, s *session, ev sdkproto.Event) (int64, error) {
	if !s.child {
		sent, err := em.AppendEvent(ctx, s.id, ev)
		return sent.Seq, err
	}
	ev.Seq, ev.Time = s.next, now()
	if err := em.Event(ctx, s.id, ev); err != nil {
		return 0, err
	}
	s.next++
	return ev.Seq, nil
}

// event returns an event of type typ with data encoded.
func event(typ sdkproto.EventType, data any) sdkproto.Event {
	raw, err := encode(data)
	if err != nil {
		panic("scripted: " + err.Error()) // the data the runtime builds always encode
	}
	return sdkproto.Event{Type: typ, Data: raw}
}

// userMessage is the durable user message of a prompt.
func userMessage(content []sdkproto.ContentBlock) sdkproto.Message {
	if content == nil {
		content = []sdkproto.ContentBlock{}
	}
	return sdkproto.Message{ID: newUUID(), Role: "user", Content: content, Source: sdkproto.MessageSource{Kind: "user"}}
}

// newUUID returns a random UUID v4 in canonical lowercase form.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
