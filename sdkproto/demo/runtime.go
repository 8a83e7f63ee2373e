package demo

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/linerpc/linerpc/sdkproto"
)

// Runtime is the scripted sdkproto.Runtime: it keeps the sessions, queues
// each session's prompts and runs one turn at a time per session, while
// different sessions run concurrently; Shutdown cuts turns off. What a
// turn emits is the script of the package documentation.
type Runtime struct {
	opts   Options
	ctx    context.Context // ends at Shutdown
	cancel context.CancelFunc
	turns  tracker // turn goroutines

	mu       sync.Mutex
	sessions map[string]*session
}

var _ sdkproto.Runtime = (*Runtime)(nil)

// Options configure a Runtime. A nil *Options means defaults.
type Options struct {
	// Providers have an adapter; initialize with another one fails with
	// upstream's `no adapter registered for provider "<p>"`. Nil means
	// deepseek-official only.
	Providers []string
	// Efforts are the reasoning efforts the models support; nil means
	// off, low, high and max, as the DeepSeek adapter offers.
	Efforts []string
	// Delay separates streamed deltas; zero streams at once.
	Delay time.Duration
	// SlowDelay separates the deltas of /slow; zero means 200ms.
	SlowDelay time.Duration
}

// NewRuntime returns a Runtime with opts.
func NewRuntime(opts *Options) *Runtime {
	d := &Runtime{sessions: map[string]*session{}}
	if opts != nil {
		d.opts = *opts
	}
	if d.opts.Providers == nil {
		d.opts.Providers = []string{"deepseek-official"}
	}
	if d.opts.Efforts == nil {
		d.opts.Efforts = []string{"off", "low", "high", "max"}
	}
	if d.opts.SlowDelay == 0 {
		d.opts.SlowDelay = 200 * time.Millisecond
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	return d
}

// Serve serves a default Runtime on r and w with an sdkproto.Server, e.g.
// Serve(ctx, os.Stdin, os.Stdout) in a runtime's main. It returns as
// sdkproto.Server.Serve does.
func Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	return sdkproto.NewServer(NewRuntime(nil), nil).Serve(ctx, r, w)
}

// Initialize checks that an adapter serves the provider and that the
// effort, when given, is supported.
func (d *Runtime) Initialize(ctx context.Context, req sdkproto.InitializeRequest) error {
	provider := req.Route.Provider
	if raw := req.Params.Member("provider"); raw != nil {
		provider = sdkproto.Interpolate(raw) // a missing provider prints as undefined
	}
	if !slices.Contains(d.opts.Providers, provider) {
		return fmt.Errorf("no adapter registered for provider \"%s\"", provider)
	}
	if e := req.Route.ReasoningEffort; e != "" && !slices.Contains(d.opts.Efforts, e) {
		return fmt.Errorf("provider \"%s\" model \"%s\" does not support reasoning effort \"%s\"",
			provider, req.Route.Model, e)
	}
	return nil
}

// Prompt queues the message and, when the session is idle, starts its
// turn: the receipt, running, turn/start and the claim are written before
// the reply, as the real runtime does.
func (d *Runtime) Prompt(ctx context.Context, req sdkproto.PromptRequest) (sdkproto.SessionPromptResult, error) {
	s := d.sessionOf(req.SessionID, req.Route)
	msg := userMessage(req.Content)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.receive(ctx, req.Emitter, msg); err != nil {
		return sdkproto.SessionPromptResult{}, err
	}
	if !s.running {
		s.running = true
		if err := req.Emitter.Status(ctx, s.id, sdkproto.StatusRunning); err != nil {
			return sdkproto.SessionPromptResult{}, err
		}
		first := s.claim(ctx, req.Emitter)
		d.turns.add()
		go d.work(s, req.Emitter, first)
	}
	return sdkproto.SessionPromptResult{MessageID: msg.ID}, nil
}

// Shutdown cuts off the turns in flight and waits for them to stop.
func (d *Runtime) Shutdown(ctx context.Context) error {
	d.cancel()
	d.turns.wait()
	return nil
}

// sessionOf returns the session id, created with route on first use.
func (d *Runtime) sessionOf(id string, route sdkproto.Route) *session {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.sessions[id]
	if s == nil {
		s = &session{id: id, route: route}
		d.sessions[id] = s
	}
	return s
}

// session is one agent: its route, its inbox and its turn counter.
type session struct {
	id    string
	route sdkproto.Route

	mu      sync.Mutex
	queue   []sdkproto.Message
	running bool
	turn    int64
}

// receive appends the receipt and queues msg. Called with s.mu held.
func (s *session) receive(ctx context.Context, em *sdkproto.Emitter, msg sdkproto.Message) error {
	_, err := em.Append(ctx, s.id, sdkproto.EventAgentInboxSpliced, sdkproto.InboxSplicedData{
		Target: "next-turn", Start: int64(len(s.queue)), Inserted: []sdkproto.Message{msg},
	})
	if err == nil {
		s.queue = append(s.queue, msg)
	}
	return err
}

// claim starts the next turn with the first queued message. Called with
// s.mu held and a non-empty queue.
func (s *session) claim(ctx context.Context, em *sdkproto.Emitter) sdkproto.Message {
	s.turn++
	removed := int64(1)
	em.Append(ctx, s.id, sdkproto.EventTurnStart, sdkproto.TurnData{Turn: s.turn})
	em.Append(ctx, s.id, sdkproto.EventAgentInboxSpliced, sdkproto.InboxSplicedData{
		Target: "next-turn", Start: 0, RemovedCount: &removed, Inserted: []sdkproto.Message{},
	})
	msg := s.queue[0]
	s.queue = s.queue[1:]
	return msg
}

// work runs turns until the session's queue is empty, then goes idle.
func (d *Runtime) work(s *session, em *sdkproto.Emitter, msg sdkproto.Message) {
	defer d.turns.done()
	for {
		d.runTurn(s, em, msg, s.turn)
		s.mu.Lock()
		if len(s.queue) == 0 || d.ctx.Err() != nil {
			s.running = false
			em.Status(d.ctx, s.id, sdkproto.StatusIdle)
			s.mu.Unlock()
			return
		}
		msg = s.claim(d.ctx, em)
		s.mu.Unlock()
	}
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

// tracker counts running goroutines so that Shutdown can wait for the last
// one (a WaitGroup would forbid adding while waiting).
type tracker struct {
	mu   sync.Mutex
	n    int
	idle *sync.Cond
}

func (t *tracker) add() {
	t.mu.Lock()
	t.n++
	t.mu.Unlock()
}

func (t *tracker) done() {
	t.mu.Lock()
	t.n--
	if t.n == 0 && t.idle != nil {
		t.idle.Broadcast()
	}
	t.mu.Unlock()
}

func (t *tracker) wait() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.idle == nil {
		t.idle = sync.NewCond(&t.mu)
	}
	for t.n > 0 {
		t.idle.Wait()
	}
}
