package rpc

import (
	"fmt"
	"time"
)

// phase is where a Conn is in its life. It only moves forward, and only
// through setPhase.
type phase uint8

const (
	// phaseNew: made by NewConn. Nothing is read; a notification may be
	// queued, but a call fails with ErrNotStarted.
	phaseNew phase = iota
	// phaseOpen: Start was called: the input is read and served.
	phaseOpen
	// phaseDraining: Shutdown began. What is read from now on is not
	// served (responses still settle calls); the rest is, and once the
	// Conn is quiet it closes.
	phaseDraining
	// phaseEnded: the input ended or failed. Nothing more is read; the
	// work in hand is finished (handlers answer, frames are written), and
	// once the Conn is quiet it closes.
	phaseEnded
	// phaseClosed: Close, a failed write, or the end of the work in hand
	// after Shutdown or the end of the input. Nothing more is read, served
	// or written.
	phaseClosed
)

var phaseNames = [...]string{"new", "open", "draining", "ended", "closed"}

func (p phase) String() string { return phaseNames[p] }

// state is everything about a Conn that changes while it runs: its phase,
// this side's calls awaiting their responses, the peer's requests and
// notifications on their way to their handlers, the frames on their way
// out, and the goroutines at work. It lives under Conn.mu, and every change
// ends with Conn.unlock, which applies the rules that follow from any
// change. Keeping it in one place is what lets each rule be written once.
//
// Invariants, checked by unlock after every change:
//   - the phase only moves forward; err is set exactly when the phase
//     reaches phaseEnded, and never changes after; every call awaiting its
//     response fails with err then;
//   - done is closed once err is set and every notification read before
//     has been handled (or dropped by Close): so a program that sees Done
//     has seen every notification the peer sent before its input ended;
//   - no goroutine of the Conn starts once it is closed and none runs, so
//     Wait never races a goroutine's start;
//   - the inbox's own invariants (see inbox.check);
//   - in phaseDraining and phaseEnded, a Conn that is quiet (no request or
//     notification in hand, nothing queued or being written) is closed.
type state struct {
	phase phase
	err   error // why the Conn ended: set with phaseEnded or phaseClosed

	// goroutines counts the goroutines of the Conn: the read loop, the
	// request handlers', the notification runner and the writer. Each is
	// counted, under the lock, before its go statement, and uncounted in
	// its last change. Wait waits for the count to reach zero once the
	// Conn is closed, when nothing can start any more.
	goroutines int
	reading    bool // the read loop runs (Close interrupts its Read)

	calls callTable // this side's calls (call.go)
	in    inbox     // the peer's requests and notifications (inbox.go)
	out   outbox    // the frames to write (writer.go)

	// changed is broadcast at every change while Wait, Shutdown or the
	// read loop waits for a condition on the state.
	changed signal
}

// lock takes the state for a change; unlock ends it.
func (c *Conn) lock() { c.mu.Lock() }

// unlock ends a change of the state: it closes a Conn that Shutdown or the
// end of the input left with nothing more to do, checks the invariants,
// and wakes the goroutines waiting for a change; then it releases the
// lock. Every change of the state ends here.
func (c *Conn) unlock() {
	s := &c.st
	if msg := s.violation(); msg != "" {
		c.violated(msg)
	}
	if (s.phase == phaseDraining || s.phase == phaseEnded) && s.quiet() {
		c.setPhase(s, phaseClosed, ErrClosed)
	}
	if s.err != nil && (s.phase == phaseClosed || !s.in.noting) && !isClosed(c.done) {
		close(c.done)
	}
	s.changed.broadcast()
	c.mu.Unlock()
}

// update applies change to the state.
func (c *Conn) update(change func(s *state)) {
	c.lock()
	change(&c.st)
	c.unlock()
}

// quiet reports whether the Conn has nothing in hand: no request or
// notification of the peer's (running, waiting or held) and nothing to
// write.
func (s *state) quiet() bool { return s.in.empty() && s.out.empty() }

// setPhase moves the Conn to phase p, if it is not there or beyond yet,
// and carries out what the move entails. why is the reason when p ends the
// Conn (the first reason stays). It is the one place where a Conn's life
// changes; called under the lock.
func (c *Conn) setPhase(s *state, p phase, why error) {
	if p <= s.phase {
		return
	}
	s.phase = p
	if p >= phaseEnded && s.err == nil {
		s.err = why
		s.calls.failAll(why, s.in.notesAhead())
	}
	if p != phaseClosed {
		return
	}
	// Nothing more is read, served or written. The handlers' contexts end
	// with why, even when the input had ended first.
	c.cancel(why)
	s.in.dropAll()
	s.out.dropAll()
	if s.reading && c.readDeadline != nil {
		// Under the lock, so that the read loop, which gives the stream
		// its deadline back when it stops, does so after this.
		c.readDeadline.SetReadDeadline(time.Now())
	}
	if s.out.inWrite && c.writeDeadline != nil {
		c.writeDeadline.SetWriteDeadline(time.Now()) // likewise, see flush
	}
}

// violation returns what invariant the state breaks, or "".
func (s *state) violation() string {
	switch {
	case (s.phase >= phaseEnded) != (s.err != nil):
		return fmt.Sprintf("phase %v with error %v", s.phase, s.err)
	case s.goroutines < 0:
		return "a goroutine was uncounted twice"
	case s.phase == phaseClosed && (s.in.queued() || len(s.out.frames) > 0):
		return "work left waiting after the Conn closed"
	case s.reading && s.phase == phaseNew:
		return "reading before Start"
	}
	return s.in.violation()
}

// violated reports a broken invariant of the state: a defect of this
// package, never something a peer can cause. It logs it; under test
// (onViolation, set by the package's tests) it panics where it happened.
func (c *Conn) violated(msg string) {
	if onViolation != nil {
		onViolation("rpc: " + msg)
	}
	if c.log != nil {
		c.log.Error("rpc: internal error: " + msg)
	}
}

// onViolation, when set, is called with the invariant a Conn broke.
var onViolation func(msg string)

// isClosed reports whether ch is closed.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// signal lets goroutines wait for a condition on the state, as sync.Cond
// does, but with a context or a channel beside it: a waiter takes the
// channel under the lock, releases the lock, and waits on it; a change
// closes it. It costs nothing while nobody waits.
type signal struct{ ch chan struct{} }

// wait returns the channel that the next broadcast closes.
func (g *signal) wait() <-chan struct{} {
	if g.ch == nil {
		g.ch = make(chan struct{})
	}
	return g.ch
}

// broadcast wakes every waiter.
func (g *signal) broadcast() {
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
}
