package fuzz

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/linerpc/linerpc/rpc"
	"pgregory.net/rapid"
)

// smModel is connMachine's model of a Conn: its line (smLine), what the
// peer wrote that the Conn has not read yet, the calls, the frames the
// Conn is to write, its end; and what the step under way is to make the
// Conn do (want...), which Check compares with what it did.
type smModel struct {
	t        *rapid.T
	line     smLine
	inbox    []smInput           // what the peer wrote that the Conn has not read: the reading is held back
	byLabel  map[string]*smEntry // the peer's requests and notifications
	labels   []string            // their labels, in the order sent
	calls    []*smCall           // by number, from 1
	frames   map[string]*smFrame // the frames the Conn is to write
	stalled  bool                // every Write waits
	inEnded  bool                // the peer closed its end
	ended    bool                // the end of the input took its turn
	closed   bool                // Close was called
	quiet    bool                // after the end of the input, nothing is left to do: the Conn closed
	endErr   error               // why the Conn ended; nil while it lives
	nextReq  int
	nextNote int

	wantStarts map[string]bool // the handlers that start
	wantEnds   map[int64]smOutcome
	wantDrops  []rpc.DropReason
}

// smCall is a call of the program's, or of a handler's with its context.
type smCall struct {
	n         int64     // its number, and its params
	id        int64     // its request's id, once a Write took its frame
	h         *smEntry  // the handler that made it; nil: the program
	cancel    func()    // ends the program's call's context
	state     callState //
	frame     *smFrame  // its request frame; nil when it was never queued
	responded bool      // the peer sent its response
	outcome   smOutcome // the response's, once read
	entry     *smEntry  // its response, waiting for its turn
}

type callState uint8

const (
	callPending  callState = iota // in the Conn's table: no response read
	callAnswered                  // its response read, waiting for its turn
	callEnded
)

// smOutcome is how a call ends: err is context.Canceled, ErrInputEnded,
// ErrClosed or the *rpc.Error of the peer's error object; nil with
// result.
type smOutcome struct {
	err    error
	result int64
}

func (o smOutcome) String() string {
	if o.err != nil {
		return o.err.Error()
	}
	return fmt.Sprintf("result %d", o.result)
}

// matches reports whether a call that returned err and result ended so.
func (o smOutcome) matches(err error, result int64) bool {
	var want, got *rpc.Error
	switch {
	case errors.As(o.err, &want):
		return errors.As(err, &got) && got.Code == want.Code && got.Message == want.Message
	case o.err != nil:
		return errors.Is(err, o.err)
	}
	return err == nil && result == o.result
}

// smFrame is a frame the Conn is to write: a call's request ("call N"),
// the cancellation of a call ("cancel ID"), an answer ("answer LABEL").
type smFrame struct {
	key     string
	state   frameState
	want    string  // an answer's outcome: "result", or the error's code
	call    *smCall // a request's call
	cancels *smCall // a cancellation's call
}

type frameState uint8

const (
	frameQueued  frameState = iota // no Write has taken it
	frameTaken                     // the Write the stalled output holds carries it
	frameMaybe                     // queued as its call failed with the Conn's end: withdrawn, unless a Write took it first
	frameWritten                   // written
	frameDropped                   // withdrawn, or dropped by Close
)

// smInput is a message the peer wrote: a request or notification
// (entry), a response to call, a cancellation of the request cancel, a
// response to no call, or the end of the input.
type smInput struct {
	entry   *smEntry
	call    *smCall
	outcome smOutcome
	cancel  string
	stray   bool
	end     bool
}

// wrote is the peer writing in: the Conn reads it in its turn.
func (m *smModel) wrote(in smInput) {
	if m.closed {
		return // the Conn reads no more
	}
	m.inbox = append(m.inbox, in)
	m.advance()
}

// advance starts what may start, and has the Conn read on, until nothing
// more can happen.
func (m *smModel) advance() {
	for !m.closed {
		if e := m.line.next(); e != nil {
			m.start(e)
			continue
		}
		if len(m.inbox) == 0 || !m.read(m.inbox[0]) {
			break
		}
		m.inbox = m.inbox[1:]
	}
	m.line.prune()
}

// read is the Conn reading in; it reports false when in is a notification
// that finds no room: it holds the reading back.
func (m *smModel) read(in smInput) bool {
	switch {
	case in.entry != nil:
		return m.admit(in.entry)
	case in.call != nil:
		m.settle(in.call, in.outcome)
	case in.stray:
		m.wantDrops = append(m.wantDrops, rpc.DropUnmatchedResponse)
	case in.cancel != "":
		m.retire(in.cancel)
	case in.end:
		m.place(&smEntry{kind: smEnd})
	}
	return true
}

// admit takes in a request or notification just read. It starts, or
// waits: in the room, or outside it when it is solo and nothing before it
// holds the line. A request that finds no room is answered
// CodeOverloaded; a notification that finds none is not taken in (admit
// reports false), and is read again at every change.
func (m *smModel) admit(e *smEntry) bool {
	l := &m.line
	head := l.head()
	l.place(e)
	switch {
	case l.mayStart(e):
		l.add(e)
		e.indexed = e.kind == smRequest
		m.start(e)
		return true
	case (head != nil || !e.solo) && !l.roomFor(e):
		if e.kind == smNotification {
			return false
		}
		e.state = smGone
		m.answer(e, "-32050")
		return true
	}
	l.add(e)
	e.indexed = e.kind == smRequest
	return true
}

// place puts a response or the end of the input in the line, outside the
// room.
func (m *smModel) place(e *smEntry) {
	m.line.place(e)
	if m.line.mayStart(e) {
		m.start(e)
		return
	}
	m.line.add(e)
}

// start starts e, whose turn has come: a response is delivered, the end
// of the input ends the Conn, a handler starts (Async, it yields as it
// starts, but for a notification past the cap), and a request at the cap of handlers alive is answered
// CodeOverloaded instead.
func (m *smModel) start(e *smEntry) {
	l := &m.line
	switch {
	case e.kind == smResponse:
		e.state = smGone
		m.deliver(e.settles, e.pos)
		return
	case e.kind == smEnd:
		e.state = smGone
		m.endStarts()
		return
	case e.kind == smRequest && l.alive >= l.capAlive():
		e.state, e.indexed = smGone, false
		m.answer(e, "-32050")
		return
	}
	l.alive++
	e.started = true
	m.wantStarts[e.label] = true
	e.state = smRunning
	if e.async && (e.kind == smRequest || l.alive <= l.capAlive()) {
		// An Async handler yields as it starts; past the cap, an Async
		// notification's yield is refused, as any notification's is.
		e.state = smYielded
	}
}

// settle is the response to c read, with outcome o: it waits for its
// turn in the line, solo when it resumes a solo handler.
func (m *smModel) settle(c *smCall, o smOutcome) {
	if c.state != callPending {
		m.wantDrops = append(m.wantDrops, rpc.DropUnmatchedResponse) // its context ended first
		return
	}
	c.state, c.outcome = callAnswered, o
	if h := c.h; h != nil && h.state == smRunning {
		// Its handler's yield was refused at the cap: it still holds the
		// line, and the response is inside its turn.
		m.end(c, o)
		return
	}
	e := &smEntry{kind: smResponse, settles: c, solo: c.h != nil && c.h.solo && c.h.resumes()}
	c.entry = e
	m.place(e)
}

// deliver ends c with its response, whose turn came at pos: a handler
// that yielded resumes there, and holds what is placed after it.
func (m *smModel) deliver(c *smCall, pos int) {
	c.entry = nil
	m.end(c, c.outcome)
	if h := c.h; h != nil && h.resumes() {
		h.state, h.pos = smRunning, pos
	}
}

// end ends c with o in this step.
func (m *smModel) end(c *smCall, o smOutcome) {
	c.state = callEnded
	m.wantEnds[c.n] = o
	if c.h != nil {
		c.h.call = nil
	}
}

// endStarts is the end of the input taking its turn: the Conn ends, and
// every call awaiting its response fails.
func (m *smModel) endStarts() {
	m.ended, m.endErr = true, rpc.ErrInputEnded
	for _, c := range m.calls {
		switch c.state {
		case callAnswered:
			m.t.Fatalf("model: the end of the input started before the response to call %d", c.n)
		case callPending:
			m.end(c, smOutcome{err: rpc.ErrInputEnded})
			m.failedFrame(c)
		}
	}
}

// failedFrame is what becomes of the frame of c, failed by the Conn's
// end: withdrawn when it waits behind the Write the stall holds;
// otherwise a Write may take it before its caller withdraws it (a
// handler's call that let the end start, by yielding, as it was made).
func (m *smModel) failedFrame(c *smCall) {
	f := c.frame
	if f == nil || f.state != frameQueued {
		return
	}
	f.state = frameMaybe
	if !m.stalled {
		return
	}
	for _, g := range m.frames {
		if g.state == frameTaken {
			m.drop(f)
			return
		}
	}
}

// yield is the handler e yielding: refused for a notification handler
// past the cap of handlers alive.
func (m *smModel) yield(e *smEntry) {
	if e.state != smRunning || e.kind == smNotification && m.line.alive > m.line.capAlive() {
		return
	}
	e.state = smYielded
}

// returned is the handler e returning, failed or not: a request is
// answered (after Close, not at all).
func (m *smModel) returned(e *smEntry, fail bool) {
	if e.kind == smRequest {
		outcome := "result"
		switch {
		case fail && e.retired:
			outcome = "-32800"
		case fail:
			outcome = "7"
		}
		m.answer(e, outcome)
	}
	m.line.alive--
	e.state, e.indexed = smGone, false
	m.advance()
}

// retire is the peer's cancellation of the request label, read: waiting
// for its turn, it is answered CodeRequestCancelled and never runs;
// started, its context ends, which abandons the call it is in.
func (m *smModel) retire(label string) {
	e := m.byLabel[label]
	switch {
	case e == nil || !e.indexed:
		m.wantDrops = append(m.wantDrops, rpc.DropUnmatchedCancel)
		return
	case e.retired:
		return
	}
	e.retired, e.ctxDone = true, true
	if e.state == smQueued {
		e.state, e.indexed = smGone, false
		m.answer(e, "-32800")
		return
	}
	if e.call != nil {
		m.abandon(e.call)
	}
}

// abandon is the context of c ending before its outcome: its frame is
// withdrawn if no Write took it, else the call is cancelled on the wire;
// its response, if it waits in the line, is dropped. A handler it was
// made by does not resume.
func (m *smModel) abandon(c *smCall) {
	if e := c.entry; e != nil {
		e.state = smGone
		c.entry = nil
	}
	m.end(c, smOutcome{err: context.Canceled})
	switch c.frame.state {
	case frameQueued:
		m.drop(c.frame)
	case frameTaken, frameWritten:
		m.queue(&smFrame{key: fmt.Sprintf("cancel %d", c.id), cancels: c})
	}
}

// answer queues the answer to the request e.
func (m *smModel) answer(e *smEntry, outcome string) {
	m.queue(&smFrame{key: "answer " + e.label, want: outcome})
}

// queue queues f, to be written; nothing is after Close.
func (m *smModel) queue(f *smFrame) {
	if m.closed {
		f.state = frameDropped
		return
	}
	if m.frames[f.key] != nil {
		m.t.Fatalf("model: %s queued twice", f.key)
	}
	m.frames[f.key] = f
}

func (m *smModel) drop(f *smFrame) {
	f.state = frameDropped
	delete(m.frames, f.key)
}

// closeAll is Close: every call fails with why the Conn ended, what waits
// is dropped, the handlers' contexts end, and the frames no Write took
// are dropped.
func (m *smModel) closeAll() {
	if m.closed {
		return
	}
	m.closed = true
	if m.endErr == nil {
		m.endErr = rpc.ErrClosed
	}
	for _, c := range m.calls {
		if c.state == callPending || c.state == callAnswered {
			c.entry = nil
			m.end(c, smOutcome{err: m.endErr})
		}
	}
	for _, e := range m.line.entries {
		switch {
		case e.state == smQueued:
			e.state = smGone
		case e.kind <= smNotification:
			e.ctxDone = true
		}
	}
	for _, f := range m.frames {
		if f.state != frameTaken {
			m.drop(f)
		}
	}
	m.inbox = nil
}

// describe tells the model's state, for a failure.
func (m *smModel) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model: %d slots, room %d (%d bytes), %d alive; line:", m.line.slots, m.line.room, m.line.roomBytes, m.line.alive)
	states := [...]string{"waiting", "running", "yielded", "gone"}
	for _, e := range m.line.entries {
		switch e.kind {
		case smResponse:
			fmt.Fprintf(&b, " [%d response to call %d, solo %v, %s]", e.pos, e.settles.n, e.solo, states[e.state])
		case smEnd:
			fmt.Fprintf(&b, " [%d end, %s]", e.pos, states[e.state])
		default:
			fmt.Fprintf(&b, " [%d %s %s, %s]", e.pos, e.method, e.label, states[e.state])
		}
	}
	fmt.Fprintf(&b, "; %d unread; to write %v", len(m.inbox), slices.Sorted(maps.Keys(m.frames)))
	return b.String()
}
