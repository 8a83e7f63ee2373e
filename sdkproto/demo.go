package sdkproto

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// DemoRuntime is a scripted Runtime for demos and tests: no model, no
// network. Every prompt is answered by echoing its text as an assistant
// message, with the event sequence of a real turn:
//
//	agent/inbox/spliced (receipt; inserted[0].id is the returned messageId)
//	session.status running          (only when the session was idle)
//	turn/start, agent/inbox/spliced (claim: removedCount 1, inserted [])
//	                                 -- the prompt result is written here
//	step/start, user/message, request/header (first turn of a session)
//	assistant/chunk: block-start, text-delta..., block-end, usage, finish
//	assistant/message (usage, sourceEventSeqs = the chunk seqs)
//	step/end, turn/end {kind: completed}
//	session.status idle             (when nothing else is queued)
//
// A prompt whose text starts with a command changes the script:
//
//	/think X     streams a reasoning block before the text X
//	/tool X      step 1 calls the tool "echo" with {"text":X}: tool/call and
//	             tool/result follow its assistant/message; step 2 answers
//	             "tool said: X"
//	/subagent X  step 1 calls the tool "subagent"; a child session (random
//	             UUID, seqs from 0) runs the prompt X between
//	             subagent.started and subagent.finished (provider spawn,
//	             lastAssistantMessage = the child's answer); the parent
//	             then answers "subagent said: <answer>"
//	/fail X      the model fails: finish {kind: error}, step/end, turn/end
//	             {kind: error, error: {message: X, code: DEMO_FAILURE}}
//	/slow X      streams X word by word, DemoOptions.SlowDelay apart (for
//	             interrupting a turn with shutdown or Ctrl-C)
//
// Prompts queue per session: one turn at a time per session, while
// different sessions run concurrently. Shutdown cuts turns off.
type DemoRuntime struct {
	opts   DemoOptions
	ctx    context.Context // ends at Shutdown
	cancel context.CancelFunc
	turns  tracker // turn goroutines

	mu       sync.Mutex
	sessions map[string]*demoSession
}

// DemoOptions configure a DemoRuntime. A nil *DemoOptions means defaults.
type DemoOptions struct {
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

// FailureCode is the LlmFailure code of a /fail turn.
const FailureCode = "DEMO_FAILURE"

// NewDemoRuntime returns a DemoRuntime with opts.
func NewDemoRuntime(opts *DemoOptions) *DemoRuntime {
	d := &DemoRuntime{sessions: map[string]*demoSession{}}
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

// ServeDemo serves a default DemoRuntime on r and w with Server.Serve,
// e.g. ServeDemo(ctx, os.Stdin, os.Stdout) in a runtime's main.
func ServeDemo(ctx context.Context, r io.Reader, w io.Writer) error {
	return NewServer(NewDemoRuntime(nil), nil).Serve(ctx, r, w)
}

// Initialize checks that an adapter serves the provider and that the
// effort, when given, is supported.
func (d *DemoRuntime) Initialize(ctx context.Context, req InitializeRequest) error {
	provider := req.Route.Provider
	if raw := req.Params.Member("provider"); raw != nil {
		provider = Interpolate(raw) // a missing provider prints as undefined
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
func (d *DemoRuntime) Prompt(ctx context.Context, req PromptRequest) (SessionPromptResult, error) {
	s := d.session(req.SessionID, req.Route)
	msg := userMessage(req.Content)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.receive(ctx, req.Emitter, msg); err != nil {
		return SessionPromptResult{}, err
	}
	if !s.running {
		s.running = true
		if err := req.Emitter.Status(ctx, s.id, StatusRunning); err != nil {
			return SessionPromptResult{}, err
		}
		first := s.claim(ctx, req.Emitter)
		d.turns.add()
		go d.work(s, req.Emitter, first)
	}
	return SessionPromptResult{MessageID: msg.ID}, nil
}

// Shutdown cuts off the turns in flight and waits for them to stop.
func (d *DemoRuntime) Shutdown(ctx context.Context) error {
	d.cancel()
	d.turns.wait()
	return nil
}

// session returns the session id, created with route on first use.
func (d *DemoRuntime) session(id string, route Route) *demoSession {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.sessions[id]
	if s == nil {
		s = &demoSession{id: id, route: route}
		d.sessions[id] = s
	}
	return s
}

// demoSession is one agent: its route, its inbox and its turn counter.
type demoSession struct {
	id    string
	route Route

	mu      sync.Mutex
	queue   []Message
	running bool
	turn    int64
}

// receive appends the receipt and queues msg. Called with s.mu held.
func (s *demoSession) receive(ctx context.Context, em *Emitter, msg Message) error {
	_, err := em.Append(ctx, s.id, EventAgentInboxSpliced, InboxSplicedData{
		Target: "next-turn", Start: int64(len(s.queue)), Inserted: []Message{msg},
	})
	if err == nil {
		s.queue = append(s.queue, msg)
	}
	return err
}

// claim starts the next turn with the first queued message. Called with
// s.mu held and a non-empty queue.
func (s *demoSession) claim(ctx context.Context, em *Emitter) Message {
	s.turn++
	removed := int64(1)
	em.Append(ctx, s.id, EventTurnStart, TurnData{Turn: s.turn})
	em.Append(ctx, s.id, EventAgentInboxSpliced, InboxSplicedData{
		Target: "next-turn", Start: 0, RemovedCount: &removed, Inserted: []Message{},
	})
	msg := s.queue[0]
	s.queue = s.queue[1:]
	return msg
}

// work runs turns until the session's queue is empty, then goes idle.
func (d *DemoRuntime) work(s *demoSession, em *Emitter, msg Message) {
	defer d.turns.done()
	for {
		d.runTurn(s, em, msg, s.turn)
		s.mu.Lock()
		if len(s.queue) == 0 || d.ctx.Err() != nil {
			s.running = false
			em.Status(d.ctx, s.id, StatusIdle)
			s.mu.Unlock()
			return
		}
		msg = s.claim(d.ctx, em)
		s.mu.Unlock()
	}
}

// runTurn plays the script of msg as turn number turn and returns the
// content of the last assistant message.
func (d *DemoRuntime) runTurn(s *demoSession, em *Emitter, msg Message, turn int64) []ContentBlock {
	t := &demoTurn{d: d, s: s, em: em, turn: turn, step: 1}
	t.emit(EventStepStart, StepData{Turn: turn, Step: 1})
	t.emitSurface(Event{Type: EventUserMessage}, msg)
	if turn == 1 {
		t.emit(EventRequestHeader, requestHeader(s.route))
	}
	cmd, arg := parseCommand(FinalText(msg.Content))
	reason := TurnEndReason{Kind: TurnCompleted}
	switch cmd {
	case "/fail":
		failure := &LlmFailure{Message: arg, Code: FailureCode}
		t.chunk(map[string]any{"type": ChunkFinish, "reason": FinishReason{Kind: FinishError, Failure: failure}})
		t.emit(EventStepEnd, StepData{Turn: turn, Step: t.step})
		reason = TurnEndReason{Kind: TurnError, Error: failure}
	case "/tool":
		t.toolStep("echo", marshal(map[string]string{"text": arg}), func() string { return arg })
		t.answer("", "tool said: "+arg, d.opts.Delay)
	case "/subagent":
		var answer string
		t.toolStep("subagent", marshal(map[string]string{"prompt": arg}), func() string {
			answer = d.runChild(s, em, arg)
			return answer
		})
		t.answer("", "subagent said: "+answer, d.opts.Delay)
	case "/think":
		t.answer("Thinking about: "+arg, arg, d.opts.Delay)
	case "/slow":
		t.answer("", arg, d.opts.SlowDelay)
	default:
		t.answer("", arg, d.opts.Delay)
	}
	t.emit(EventTurnEnd, TurnEndData{Turn: turn, Reason: reason})
	return t.last
}

// runChild runs prompt as a subagent of parent, between subagent.started
// and subagent.finished, and returns the child's answer.
func (d *DemoRuntime) runChild(parent *demoSession, em *Emitter, prompt string) string {
	child := d.session(newUUID(), parent.route)
	em.SubagentStarted(d.ctx, parent.id, child.id)
	child.mu.Lock()
	child.receive(d.ctx, em, userMessage([]ContentBlock{TextBlock(prompt)}))
	child.running = true
	em.Status(d.ctx, child.id, StatusRunning)
	msg := child.claim(d.ctx, em)
	child.mu.Unlock()

	last := d.runTurn(child, em, msg, child.turn)

	child.mu.Lock()
	child.running = false
	em.Status(d.ctx, child.id, StatusIdle)
	child.mu.Unlock()
	em.SubagentFinished(d.ctx, SubagentFinishedParams{
		Provider: "spawn", AgentID: child.id, ParentSessionID: parent.id, ChildSessionID: child.id,
		Status: RunOK, StopReason: StopCompleted, LastAssistantMessage: last,
	})
	return FinalText(last)
}

// demoTurn emits the events of one turn. Emit errors (shutdown began, the
// connection closed) stop the script: every later emit is skipped.
type demoTurn struct {
	d          *DemoRuntime
	s          *demoSession
	em         *Emitter
	turn, step int64
	chunkSeqs  []int64 // of the current step
	last       []ContentBlock
	err        error
}

func (t *demoTurn) emit(typ EventType, data any) { t.emitSurface(Event{Type: typ}, data) }

// emitSurface appends ev with data and returns its seq (-1 when skipped).
func (t *demoTurn) emitSurface(ev Event, data any) int64 {
	if t.err != nil {
		return -1
	}
	ev.Data = marshal(data)
	if ev.Type == EventUserMessage || ev.Type == EventAssistantMessage || ev.Type == EventToolResult {
		ev.SurfaceOp = AppendOp()
	}
	ev, t.err = t.em.AppendEvent(t.d.ctx, t.s.id, ev)
	return ev.Seq
}

func (t *demoTurn) chunk(c map[string]any) {
	seq := t.emitSurface(Event{Type: EventAssistantChunk}, map[string]any{"turn": t.turn, "step": t.step, "chunk": c})
	t.chunkSeqs = append(t.chunkSeqs, seq)
}

// answer streams a model reply with an optional reasoning block and a
// text block, and ends the step.
func (t *demoTurn) answer(reasoning, text string, delay time.Duration) {
	if text == "" {
		text = "(empty prompt)" // a model reply without content is an error upstream
	}
	var content []ContentBlock
	index := 0
	if reasoning != "" {
		t.stream(index, "reasoning", ChunkReasoningDelta, reasoning, delay)
		content = append(content, ReasoningBlock(reasoning))
		index++
	}
	t.stream(index, "text", ChunkTextDelta, text, delay)
	content = append(content, TextBlock(text))
	for i, b := range content { // all block-ends follow all deltas, as upstream
		t.chunk(map[string]any{"type": ChunkBlockEnd, "index": i, "block": b})
	}
	t.finishStep(content, FinishStop)
}

// stream sends block-start and the deltas of one block, delay apart.
func (t *demoTurn) stream(index int, blockType string, delta ChunkType, text string, delay time.Duration) {
	t.chunk(map[string]any{"type": ChunkBlockStart, "index": index, "blockType": blockType})
	for _, part := range strings.SplitAfter(text, " ") {
		if delay > 0 {
			select {
			case <-t.d.ctx.Done():
				t.err = t.d.ctx.Err()
			case <-time.After(delay):
			}
		}
		t.chunk(map[string]any{"type": delta, "index": index, "text": part})
	}
}

// finishStep sends usage, finish and the assistant message, then step/end.
func (t *demoTurn) finishStep(content []ContentBlock, kind FinishKind) {
	usage := TokenUsage{InputTokens: 10, OutputTokens: int64(len(t.chunkSeqs))}
	t.chunk(map[string]any{"type": ChunkUsage, "usage": usage})
	t.chunk(map[string]any{"type": ChunkFinish, "reason": FinishReason{Kind: kind}})
	msg := Message{ID: newUUID(), Role: "assistant", Content: content,
		Source: MessageSource{Kind: "model", Provider: t.s.route.Provider, Model: t.s.route.Model}}
	t.emitSurface(Event{Type: EventAssistantMessage, SourceEventSeqs: t.chunkSeqs},
		AssistantMessageData{Turn: t.turn, Step: t.step, Message: msg, Usage: &usage})
	t.last, t.chunkSeqs = content, nil
	if kind != FinishToolCalls {
		t.emit(EventStepEnd, StepData{Turn: t.turn, Step: t.step})
	}
}

// toolStep streams a call of tool name with args, runs it (run returns
// its output text), sends tool/call and tool/result, and starts the next
// step.
func (t *demoTurn) toolStep(name string, args json.RawMessage, run func() string) {
	id := "call-" + newUUID()[:8]
	t.chunk(map[string]any{"type": ChunkBlockStart, "index": 0, "blockType": BlockTypeToolCall})
	t.chunk(map[string]any{"type": ChunkToolCallDelta, "index": 0, "id": id, "name": name, "argumentsDelta": string(args)})
	call := ToolCallBlock(id, name, string(args))
	t.chunk(map[string]any{"type": ChunkBlockEnd, "index": 0, "block": call})
	t.finishStep([]ContentBlock{call}, FinishToolCalls)
	t.emit(EventToolCall, ToolCallData{Turn: t.turn, Step: t.step, CallID: id, Name: name, Arguments: string(args)})
	out := ""
	if t.err == nil {
		out = run()
	}
	result := Message{ID: newUUID(), Role: "user",
		Content: []ContentBlock{ToolResultBlock(id, []ContentBlock{TextBlock(out)}, false)},
		Source:  MessageSource{Kind: "tool", CallID: id}}
	t.emitSurface(Event{Type: EventToolResult}, ToolResultData{Turn: t.turn, Step: t.step, Message: result})
	t.emit(EventStepEnd, StepData{Turn: t.turn, Step: t.step})
	t.step++
	t.emit(EventStepStart, StepData{Turn: t.turn, Step: t.step})
}

// requestHeader is the data of request/header for route.
func requestHeader(r Route) map[string]any {
	config := map[string]any{"provider": r.Provider, "model": r.Model}
	if r.ReasoningEffort != "" {
		config["reasoningEffort"] = r.ReasoningEffort
	}
	if r.MaxTokens > 0 {
		config["maxTokens"] = r.MaxTokens
	}
	return map[string]any{"header": map[string]any{"config": config}, "reason": "initial"}
}

// parseCommand splits "/cmd rest" into the command and its argument; text
// without a known command is all argument.
func parseCommand(text string) (cmd, arg string) {
	for _, c := range []string{"/think", "/tool", "/subagent", "/fail", "/slow"} {
		if text == c || strings.HasPrefix(text, c+" ") {
			return c, strings.TrimPrefix(text[len(c):], " ")
		}
	}
	return "", text
}

// userMessage is the durable user message of a prompt.
func userMessage(content []ContentBlock) Message {
	if content == nil {
		content = []ContentBlock{}
	}
	return Message{ID: newUUID(), Role: "user", Content: content, Source: MessageSource{Kind: "user"}}
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
