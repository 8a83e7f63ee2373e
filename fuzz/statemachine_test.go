package fuzz

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"pgregory.net/rapid"
)

// connMachine drives a Conn, in a testing/synctest bubble, through what
// its program and its peer may do, and after every step, once every
// goroutine of the bubble is durably blocked (the Conn has done all it
// can), checks it against a model (smModel) whose line (smLine) is the
// rule of rpc/line.go.
//
// The Conn has LSP's cancellation, and bounds drawn for each run:
// MaxConcurrentRequests 1 to 3 (so a cap of 2 to 6 handlers alive),
// MaxWaiting none to 4, MaxWaitingBytes the default or a few hundred
// bytes (the peer's lines have paddings drawn, so that their lengths
// count).
//
// The steps:
//   - the program calls the peer, and may cancel the call's context,
//     before its response or while the response waits for its turn;
//   - the peer answers a call whose request it read (the program's or a
//     handler's) with a result, its id in any spelling (5, 5.0, 5e0,
//     5.00E+0), or with an error object; answers a call answered or
//     ended already; answers an id never used (0, -1, a string, 1.5,
//     1e400);
//   - the peer sends a request (ordinary, Exclusive or Async) or a
//     notification (ordinary or Async), and cancels a request
//     ($/cancelRequest): running, yielded, in a call, waiting for its
//     turn, answered, or never sent;
//   - a handler that runs or has yielded returns (a request's with its
//     result or an error), yields (rpc.Yield), or calls the peer with its
//     own context;
//   - the output stalls (every Write waits, as with a peer that stopped
//     reading) and resumes;
//   - the input ends; Close.
//
// The model keeps the line: every request, notification, response and
// end of the input the Conn has read, in the order it read them, each
// waiting, running, yielded or gone, a handler resumed at its response's
// place; the slots, the room, the cap. It keeps what the peer wrote that
// the Conn has not read (a notification that found no room holds the
// reading back), the calls, the frames the Conn is to write. After every
// step Check compares, exactly:
//   - the handlers that started with those the rule lets start, each
//     once: the line's order of turns, its slots, its room and its cap;
//   - every answer with the model's, each request answered once: its
//     handler's result or error; CodeOverloaded when it found no room or
//     when its turn came at the cap; CodeRequestCancelled when the peer
//     cancelled it while it waited for its turn (it never ran), or when
//     its handler, cancelled, returned an error (a result is kept); none
//     after Close;
//   - every call's end with the model's, each call ended once: the
//     response's result or error when its turn comes in the line (a
//     response waits for the solo entries before it that have not
//     yielded; a response to a solo handler's call is solo itself) and
//     not before; context.Canceled when its context ends, the handler's
//     when the peer cancels the handler's request; ErrInputEnded when
//     the end of the input takes its turn; ErrClosed at Close; and a
//     call made once the Conn ended fails at once;
//   - the frames written with the model's: a call's request unless it was
//     withdrawn (its context ended, or the Conn ended, before a Write
//     took it); the cancellation of a call whose context ended after a
//     Write took its request, by its id, after the request; the answers;
//     nothing else, and after Close nothing but what the Write in
//     progress held; every Write whole frames;
//   - the lines dropped with the model's: the responses to no pending
//     call, the cancellations of no request in hand, nothing else;
//   - the contexts of the handlers alive: ended when the peer cancelled
//     the request, and at Close, not before;
//   - Err and Done: the Conn ends when the end of the input takes its
//     turn, or at Close; after the end of the input, Wait returns as
//     soon as the handlers have returned and the frames are written, not
//     before.
//
// At the end the Conn is closed, the output resumed, the handlers let
// return and the input closed: no call is left pending, Wait returns,
// and every goroutine of the bubble, the Conn's among them, exits
// (synctest fails a run that leaves one behind).
//
// The peer does not send a cancellation while the reading is held back:
// the Conn reads it once there is room, and what it ends then (a
// handler's call, whose end changes the line) races with what the Conn
// reads next, as it would with any peer.
type connMachine struct {
	smModel
	c     *rpc.Conn
	in    chan string // the lines the peer writes, in order; "" ends the input
	pr    *io.PipeReader
	pw    *io.PipeWriter
	out   *gatedWriter
	obs   *smObserved
	wait  chan struct{} // closed when Wait returns
	doing *atomic.Pointer[string]
	step  string
	once  sync.Once
}

// errHandlerFailed is what a handler that fails returns.
var errHandlerFailed = &rpc.Error{Code: 7, Message: "failed"}

// smParams are the params of the peer's requests and notifications.
type smParams struct {
	L   string `json:"l"`
	Pad string `json:"pad"`
}

// smBound bounds every wait of the machine in the bubble's time, which
// passes only once every goroutine of the bubble is durably blocked: a
// wait that reaches it waited for what can no longer happen. smHang
// bounds a run in real time, against a goroutine that never blocks, or
// blocks for ever on a mutex, which the bubble's time does not see.
const (
	smRounds = 4 // rounds of rapid's Repeat, about 30 steps each, in a run
	smBound  = time.Hour
	smHang   = 5 * time.Minute
)

func newConnMachine(t *rapid.T, doing *atomic.Pointer[string]) *connMachine {
	slots := rapid.IntRange(1, 3).Draw(t, "MaxConcurrentRequests")
	waiting := rapid.SampledFrom([]int{-1, 1, 2, 4}).Draw(t, "MaxWaiting")
	waitingBytes := rapid.SampledFrom([]int{0, 200, 600}).Draw(t, "MaxWaitingBytes")
	m := &connMachine{
		smModel: smModel{
			t:       t,
			line:    smLine{slots: slots, room: max(waiting, 0), roomBytes: waitingBytes},
			byLabel: map[string]*smEntry{}, frames: map[string]*smFrame{},
			wantStarts: map[string]bool{}, wantEnds: map[int64]smOutcome{},
		},
		in: make(chan string, 1024), wait: make(chan struct{}), doing: doing,
		obs: &smObserved{cmds: map[string]chan smCmd{}, ctxs: map[string]context.Context{}},
	}
	if waitingBytes == 0 {
		m.line.roomBytes = rpc.DefaultMaxWaitingBytes
	}
	m.out = &gatedWriter{obs: m.obs}
	reg := rpc.NewRegistry()
	request := func(ctx context.Context, p smParams) (string, error) { return m.serve(ctx, p.L) }
	notification := func(ctx context.Context, p smParams) { m.serve(ctx, p.L) }
	rpc.Handle(reg, rpc.NewMethod[smParams, string]("req"), request)
	rpc.Handle(reg, rpc.NewMethod[smParams, string]("excl"), request, rpc.Exclusive)
	rpc.Handle(reg, rpc.NewMethod[smParams, string]("areq"), request, rpc.Async)
	rpc.HandleNotification(reg, rpc.NewNotification[smParams]("note"), notification)
	rpc.HandleNotification(reg, rpc.NewNotification[smParams]("anote"), notification, rpc.Async)
	m.pr, m.pw = io.Pipe()
	m.c = rpc.NewConn(m.pr, m.out, &rpc.Options{
		Handler: reg, OnDrop: m.obs.dropped, Cancellation: rpc.LSPCancellation(),
		MaxConcurrentRequests: slots, MaxWaiting: waiting, MaxWaitingBytes: waitingBytes,
	})
	m.c.Start()
	go func() {
		for line := range m.in {
			if line == "" {
				m.pw.Close()
				continue
			}
			io.WriteString(m.pw, line+"\n") // fails once the run closed the pipe
		}
	}()
	go func() {
		m.c.Wait()
		close(m.wait)
	}()
	return m
}

// serve is every handler: it records that it started, and does what the
// test tells it, until it returns.
func (m *connMachine) serve(ctx context.Context, label string) (string, error) {
	for cmd := range m.obs.started(label, ctx) {
		switch cmd.kind {
		case cmdReturn:
			return label, nil
		case cmdFail:
			return "", errHandlerFailed
		case cmdYield:
			rpc.Yield(ctx)
		case cmdCall:
			m.call(ctx, cmd.n)
		}
	}
	return "", errors.New("the run ended")
}

// call calls the peer, and records how the call ended.
func (m *connMachine) call(ctx context.Context, n int64) {
	var result int64
	err := m.c.Call(ctx, "work", n, &result)
	m.obs.ended(n, err, result)
}

func (m *connMachine) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"call":          m.Call,
		"cancel":        m.Cancel,
		"respond":       m.Respond,
		"stray":         m.Stray,
		"request":       m.Request,
		"notify":        m.Notify,
		"cancelRequest": m.CancelRequest,
		"return":        m.Return,
		"yield":         m.Yield,
		"handlerCall":   m.HandlerCall,
		"output":        m.Output,
		"end":           m.End,
		"":              m.Check,
	}
}

// did names the step, for the failures and for the watchdog.
func (m *connMachine) did(format string, args ...any) {
	m.step = fmt.Sprintf(format, args...)
	s := "the Conn to settle after " + m.step
	m.doing.Store(&s)
}

// send writes line as the peer; the model reads in in its turn.
func (m *connMachine) send(line string, in smInput) {
	select {
	case m.in <- line:
	default:
		m.t.Fatalf("the peer's queue of %d lines is full", cap(m.in))
	}
	m.wrote(in)
}

// The steps.

// newCall returns a new call of the program's (h nil) or of the handler h.
func (m *connMachine) newCall(h *smEntry) *smCall {
	c := &smCall{n: int64(len(m.calls) + 1), h: h}
	m.calls = append(m.calls, c)
	return c
}

// sent records that c is in the Conn's table and its frame queued.
func (m *connMachine) sent(c *smCall) {
	c.state = callPending
	c.frame = &smFrame{key: fmt.Sprintf("call %d", c.n), call: c}
	m.queue(c.frame)
}

// Call: the program calls the peer. Once the Conn has ended, the call
// fails at once with why.
func (m *connMachine) Call(t *rapid.T) {
	c := m.newCall(nil)
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	m.did("the program makes call %d", c.n)
	go m.call(ctx, c.n)
	if m.endErr != nil {
		m.end(c, smOutcome{err: m.endErr})
		return
	}
	m.sent(c)
}

// Cancel: the context of a call of the program's ends, before its
// response or while its response waits for its turn.
func (m *connMachine) Cancel(t *rapid.T) {
	c := m.pickCall(t, "cancel", func(c *smCall) bool {
		return c.h == nil && (c.state == callPending || c.state == callAnswered)
	})
	m.did("the context of call %d ends", c.n)
	c.cancel()
	m.abandon(c)
	m.advance()
}

// Respond: the peer answers a call whose request it read, with a result
// (its id in one of its spellings) or with an error object.
func (m *connMachine) Respond(t *rapid.T) {
	if m.inEnded {
		t.Skip("the input ended")
	}
	c := m.pickCall(t, "respond", func(c *smCall) bool {
		return c.state == callPending && !c.responded && c.frame.state == frameWritten
	})
	c.responded = true
	var line string
	var o smOutcome
	if rapid.IntRange(0, 3).Draw(t, "error") == 0 {
		msg := fmt.Sprintf("no %d", c.id)
		line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-1,"message":%q}}`, c.id, msg)
		o.err = &rpc.Error{Code: -1, Message: msg}
	} else {
		spelling := rapid.SampledFrom([]string{"%d", "%d.0", "%de0", "%d.00E+0"}).Draw(t, "spelling")
		line = fmt.Sprintf(`{"jsonrpc":"2.0","id":`+spelling+`,"result":%d}`, c.id, c.id*10)
		o.result = c.id * 10
	}
	m.did("the peer answers call %d: %s", c.n, line)
	m.send(line, smInput{call: c, outcome: o})
}

// Stray: the peer answers a call answered or ended already, or an id
// never used: the Conn drops it.
func (m *connMachine) Stray(t *rapid.T) {
	if m.inEnded {
		t.Skip("the input ended")
	}
	ids := []string{"0", "-1", "1000000", `"1"`, "1.5", "1e400"}
	for _, c := range m.calls {
		if c.frame != nil && c.frame.state == frameWritten && (c.responded || c.state == callEnded) {
			ids = append(ids, strconv.FormatInt(c.id, 10))
		}
	}
	id := rapid.SampledFrom(ids).Draw(t, "stray")
	line := `{"jsonrpc":"2.0","id":` + id + `,"result":-1}`
	m.did("the peer answers no call: %s", line)
	m.send(line, smInput{stray: true})
}

// Request: the peer sends a request, ordinary (shared), Exclusive (solo)
// or Async (shared, it yields as it starts).
func (m *connMachine) Request(t *rapid.T) {
	method := rapid.SampledFrom([]string{"req", "excl", "areq"}).Draw(t, "method")
	m.peerSends(t, &smEntry{kind: smRequest, method: method, solo: method == "excl", async: method == "areq"})
}

// Notify: the peer sends a notification, ordinary or Async; either is
// solo.
func (m *connMachine) Notify(t *rapid.T) {
	method := rapid.SampledFrom([]string{"note", "anote"}).Draw(t, "method")
	m.peerSends(t, &smEntry{kind: smNotification, method: method, solo: true, async: method == "anote"})
}

func (m *connMachine) peerSends(t *rapid.T, e *smEntry) {
	if m.inEnded {
		t.Skip("the input ended")
	}
	pad := strings.Repeat("x", rapid.SampledFrom([]int{0, 40, 160}).Draw(t, "pad"))
	var line string
	if e.kind == smRequest {
		m.nextReq++
		e.label = fmt.Sprintf("r%d", m.nextReq)
		line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":%q,"params":{"l":%[1]q,"pad":%q}}`, e.label, e.method, pad)
	} else {
		m.nextNote++
		e.label = fmt.Sprintf("n%d", m.nextNote)
		line = fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":{"l":%q,"pad":%q}}`, e.method, e.label, pad)
	}
	e.size = len(line)
	e.cmds = make(chan smCmd, 1)
	m.obs.mu.Lock()
	m.obs.cmds[e.label] = e.cmds
	m.obs.mu.Unlock()
	m.byLabel[e.label] = e
	m.labels = append(m.labels, e.label)
	m.did("the peer sends %s %s (%d bytes)", e.method, e.label, e.size)
	m.send(line, smInput{entry: e})
}

// CancelRequest: the peer cancels a request ($/cancelRequest), mostly one
// in hand.
func (m *connMachine) CancelRequest(t *rapid.T) {
	switch {
	case m.inEnded:
		t.Skip("the input ended")
	case len(m.inbox) > 0:
		t.Skip("the reading is held back")
	}
	var inHand []string
	for _, l := range m.labels {
		if m.byLabel[l].indexed {
			inHand = append(inHand, l)
		}
	}
	labels := append(slices.Clone(m.labels), "r0")
	if len(inHand) > 0 && rapid.IntRange(0, 3).Draw(t, "in hand") > 0 {
		labels = inHand
	}
	label := rapid.SampledFrom(labels).Draw(t, "cancelRequest")
	m.did("the peer cancels %s", label)
	m.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":%q}}`, label), smInput{cancel: label})
}

// pickHandler draws a handler that runs, or has yielded, and is not in a
// call.
func (m *connMachine) pickHandler(t *rapid.T, what string) *smEntry {
	var labels []string
	for _, l := range m.labels {
		if e := m.byLabel[l]; e.started && e.state != smGone && e.call == nil {
			labels = append(labels, l)
		}
	}
	if len(labels) == 0 {
		t.Skip("no handler to " + what)
	}
	return m.byLabel[rapid.SampledFrom(labels).Draw(t, what)]
}

func (m *connMachine) pickCall(t *rapid.T, what string, ok func(*smCall) bool) *smCall {
	var ns []int64
	for _, c := range m.calls {
		if ok(c) {
			ns = append(ns, c.n)
		}
	}
	if len(ns) == 0 {
		t.Skip("no call to " + what)
	}
	return m.calls[rapid.SampledFrom(ns).Draw(t, what)-1]
}

// Return: a handler returns, a request's with its result or an error.
func (m *connMachine) Return(t *rapid.T) {
	e := m.pickHandler(t, "return")
	fail := e.kind == smRequest && rapid.IntRange(0, 2).Draw(t, "fail") == 0
	if fail {
		m.did("%s fails", e.label)
		e.cmds <- smCmd{kind: cmdFail}
	} else {
		m.did("%s returns", e.label)
		e.cmds <- smCmd{kind: cmdReturn}
	}
	m.returned(e, fail)
}

// Yield: a handler calls rpc.Yield.
func (m *connMachine) Yield(t *rapid.T) {
	e := m.pickHandler(t, "yield")
	m.did("%s yields", e.label)
	e.cmds <- smCmd{kind: cmdYield}
	if !m.closed {
		m.yield(e)
		m.advance()
	}
}

// HandlerCall: a handler calls the peer with its context, which yields
// it; the response is its turn again. With its context ended, or the
// Conn ended, the call fails at once, and it does not yield.
func (m *connMachine) HandlerCall(t *rapid.T) {
	e := m.pickHandler(t, "call")
	c := m.newCall(e)
	m.did("%s makes call %d", e.label, c.n)
	e.cmds <- smCmd{kind: cmdCall, n: c.n}
	switch {
	case e.ctxDone:
		m.end(c, smOutcome{err: context.Canceled})
	case m.endErr != nil:
		m.end(c, smOutcome{err: m.endErr})
	default:
		e.call = c
		m.sent(c)
		m.yield(e)
		m.advance()
	}
}

// Output stalls the output (every Write waits, as with a peer that
// stopped reading), or resumes it.
func (m *connMachine) Output(t *rapid.T) {
	if m.stalled {
		m.did("the output resumes")
		m.out.resume()
	} else {
		m.did("the output stalls")
		m.out.stall()
	}
	m.stalled = !m.stalled
}

// End ends the input or closes the Conn (three times in four it does
// nothing, so that runs go on a while).
func (m *connMachine) End(t *rapid.T) {
	switch rapid.IntRange(0, 7).Draw(t, "end") {
	case 0:
		if m.inEnded {
			t.Skip("the input ended")
		}
		m.did("the input ends")
		m.inEnded = true
		m.send("", smInput{end: true})
	case 1:
		m.did("Close")
		m.c.Close()
		m.closeAll()
	default:
		t.Skip("not yet")
	}
}

// smLendBound is more than the bound on a reading role lent by a
// handler that runs on the worker that read it, or by a caller (two
// periods of the Conn's watchdog, 500 µs each): once it has passed in the
// bubble, whatever the peer wrote has been read.
const smLendBound = 2 * time.Millisecond

// Check waits until the Conn has done all it can, the bound on a lent
// reading role included, and compares what it did with the model.
func (m *connMachine) Check(t *rapid.T) {
	synctest.Wait()
	time.Sleep(smLendBound)
	synctest.Wait()
	starts, written, ends, drops, split := m.obs.take()
	if split != "" {
		t.Fatalf("after %s: %s", m.step, split)
	}
	m.checkFrames(t, written)
	got := slices.Sorted(slices.Values(starts))
	if want := slices.Sorted(maps.Keys(m.wantStarts)); !slices.Equal(got, want) {
		t.Fatalf("after %s: handlers %v started, want %v; %s", m.step, got, want, m.describe())
	}
	clear(m.wantStarts)
	m.checkEnds(t, ends)
	if !slices.Equal(drops, m.wantDrops) {
		t.Fatalf("after %s: dropped %v, want %v", m.step, drops, m.wantDrops)
	}
	m.wantDrops = nil
	for _, l := range m.labels {
		e := m.byLabel[l]
		if !e.started || e.state == smGone {
			continue
		}
		if ended := m.obs.contextEnded(l); ended != e.ctxDone {
			t.Fatalf("after %s: the context of %s has ended: %v, want %v", m.step, l, ended, e.ctxDone)
		}
	}
	m.checkEnd(t)
}

// checkFrames matches the frames written, and those of the Write the
// stall holds, with the model's.
func (m *connMachine) checkFrames(t *rapid.T, written []smWire) {
	for _, w := range written {
		f := m.frames[w.key]
		switch {
		case f == nil:
			t.Fatalf("after %s: the Conn wrote %s, which the model does not expect; %s", m.step, w.key, m.describe())
		case f.call != nil:
			f.call.id = w.id
		case f.cancels != nil && f.cancels.frame.state != frameWritten:
			t.Fatalf("after %s: the Conn wrote %s before the request it cancels", m.step, w.key)
		case f.want != w.outcome:
			t.Fatalf("after %s: %s is %s, want %s", m.step, w.key, w.outcome, f.want)
		}
		f.state = frameWritten
		delete(m.frames, w.key)
	}
	held := m.out.held()
	inFlight := map[string]bool{}
	for _, w := range held {
		f := m.frames[w.key]
		if f == nil {
			t.Fatalf("after %s: a Write took %s, which the model does not expect; %s", m.step, w.key, m.describe())
		}
		f.state = frameTaken
		if f.call != nil {
			f.call.id = w.id
		}
		inFlight[w.key] = true
	}
	for _, key := range slices.Sorted(maps.Keys(m.frames)) {
		switch f := m.frames[key]; {
		case f.state == frameMaybe && !inFlight[key]:
			m.drop(f) // withdrawn
		case f.state == frameTaken && !inFlight[key]:
			t.Fatalf("after %s: a Write took %s, and returned without writing it", m.step, key)
		case !m.stalled:
			t.Fatalf("after %s: %s was not written, with the output flowing; %s", m.step, key, m.describe())
		}
	}
	if m.stalled && len(m.frames) > 0 && len(held) == 0 {
		t.Fatalf("after %s: %v wait to be written, and no Write took them", m.step, slices.Sorted(maps.Keys(m.frames)))
	}
}

func (m *connMachine) checkEnds(t *rapid.T, ends []smEnded) {
	for _, e := range ends {
		o, ok := m.wantEnds[e.n]
		switch {
		case !ok:
			t.Fatalf("after %s: call %d ended (%v, result %d), which the model does not expect now; %s", m.step, e.n, e.err, e.result, m.describe())
		case !o.matches(e.err, e.result):
			t.Fatalf("after %s: call %d ended with %v (result %d), want %v", m.step, e.n, e.err, e.result, o)
		}
		delete(m.wantEnds, e.n)
	}
	if len(m.wantEnds) > 0 {
		t.Fatalf("after %s: calls %v did not end, want %v; %s", m.step, slices.Sorted(maps.Keys(m.wantEnds)), m.wantEnds, m.describe())
	}
}

// checkEnd checks Err and Done; and that, once the end of the input took
// its turn, the Conn closes (Wait returns) as soon as nothing is left to
// do, and not before.
func (m *connMachine) checkEnd(t *rapid.T) {
	err := m.c.Err()
	if (err != nil) != (m.endErr != nil) || err != nil && !errors.Is(err, m.endErr) {
		t.Fatalf("after %s: Err is %v, want %v; %s", m.step, err, m.endErr, m.describe())
	}
	select {
	case <-m.c.Done():
		if m.endErr == nil {
			t.Fatalf("after %s: Done is closed, and the Conn lives", m.step)
		}
	default:
		if m.endErr != nil {
			t.Fatalf("after %s: Done is open, and the Conn ended with %v", m.step, m.endErr)
		}
	}
	if m.closed {
		return // Wait waits for the reader too, which only the end of the run releases
	}
	if m.ended && m.line.alive == 0 && len(m.line.entries) == 0 && len(m.frames) == 0 {
		m.quiet = true
	}
	select {
	case <-m.wait:
		if !m.quiet {
			t.Fatalf("after %s: Wait returned, with work left; %s", m.step, m.describe())
		}
	default:
		if !m.quiet {
			break
		}
		// How late it is: the bubble's time runs until it returns.
		start := time.Now()
		select {
		case <-m.wait:
			t.Fatalf("after %s: Wait did not return, with nothing left to do after the end of the input; it returned %v of the bubble's time later", m.step, time.Since(start))
		case <-time.After(smBound):
			t.Fatalf("after %s: Wait did not return, with nothing left to do after the end of the input, nor %v later", m.step, smBound)
		}
	}
}

// release lets every goroutine of the run end: the Conn closes, the
// output resumes, the handlers return, the input closes. It checks
// nothing, so that a run that failed ends too.
func (m *connMachine) release() {
	m.once.Do(func() {
		m.c.Close()
		m.out.resume()
		m.obs.mu.Lock()
		for _, ch := range m.obs.cmds {
			close(ch)
		}
		m.obs.mu.Unlock()
		close(m.in)
		m.pr.Close()
		for _, c := range m.calls {
			if c.cancel != nil {
				c.cancel()
			}
		}
	})
}

// finish ends a run: Close, the output resumed, the handlers let return,
// each step checked; then Wait must return, and no call be left pending.
func (m *connMachine) finish(t *rapid.T) {
	if !m.closed {
		m.did("Close")
		m.c.Close()
		m.closeAll()
		m.Check(t)
	}
	if m.stalled {
		m.did("the output resumes")
		m.out.resume()
		m.stalled = false
		m.Check(t)
	}
	m.did("the handlers return, the input closes")
	m.release()
	for _, e := range m.byLabel {
		e.state = smGone
	}
	m.Check(t)
	m.did("Wait")
	select {
	case <-m.wait:
	case <-time.After(smBound):
		t.Fatalf("Wait did not return: a goroutine of the Conn is left")
	}
	for _, c := range m.calls {
		if c.state != callEnded {
			t.Fatalf("call %d left pending", c.n)
		}
	}
}

// TestStateMachineConn runs connMachine (see its doc comment), each run in
// a testing/synctest bubble.
func TestStateMachineConn(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var doing atomic.Pointer[string]
		start := "the run to start"
		doing.Store(&start)
		hang := time.AfterFunc(smHang, func() {
			buf := make([]byte, 1<<20)
			panic(fmt.Sprintf("TestStateMachineConn: a run took %v, waiting for %s; goroutines:\n%s",
				smHang, *doing.Load(), buf[:runtime.Stack(buf, true)]))
		})
		defer hang.Stop()
		rapid.SyncTest(rt, func(rt *rapid.T) {
			m := newConnMachine(rt, &doing)
			defer func() {
				if r := recover(); r != nil {
					rt.Logf("failed after %s", m.step)
					m.release()
					panic(r)
				}
			}()
			for range smRounds {
				rt.Repeat(m.actions())
			}
			m.finish(rt)
		})
	})
}
