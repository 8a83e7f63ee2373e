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
	// phaseEnded: the end of the input (or its failure) took its turn in
	// the line. Nothing more is read; the work in hand is finished
	// (handlers answer, frames are written), and once the Conn is quiet it
	// closes.
	phaseEnded
	// phaseClosed: Close, a failed write, or the end of the work in hand
	// after Shutdown or the end of the input. Nothing more is read, served
	// or written.
	phaseClosed
)

var phaseNames = [...]string{"new", "open", "draining", "ended", "closed"}

func (p phase) String() string { return phaseNames[p] }

// readRole says who reads the input. One goroutine at a time holds the
// reading role (worker.go): a worker of the Conn, or a caller reading its
// own response (call.go); or the role is lent (see lend).
type readRole uint8

const (
	readNotYet readRole = iota // before Start
	readFree                   // nobody reads: a worker is on its way to (staff), and a caller may take it
	readLeft                   // nobody reads, and a caller left a frame to a worker: only a worker may take it
	readLent                   // nobody reads, and nobody was woken to: the lender, a caller, or the watchdog takes it
	readHeld                   // a goroutine reads
	readOver                   // the input ended or failed, or the Conn closed
)

// state is everything about a Conn that changes while it runs: its phase,
// this side's calls awaiting their responses, the peer's messages in the
// line, the frames on their way out, and the goroutines at work. It lives
// under Conn.mu, and every change ends with Conn.unlock, which applies the
// rules that follow from any change. Keeping it in one place is what lets
// each rule be written once.
//
// Invariants, checked by unlock after every change:
//   - the phase only moves forward; err is set exactly when the phase
//     reaches phaseEnded, and never changes after; every call awaiting its
//     response fails with err then, and done is closed;
//   - no goroutine of the Conn starts once it is closed, so Wait never
//     races a goroutine's start;
//   - the line's own invariants (line.violation);
//   - in phaseDraining and phaseEnded, a Conn that is quiet (nothing of
//     the peer's in hand, nothing queued or being written) is closed;
//   - while the Conn lives, there are as many workers looking for work as
//     there is work without a goroutine (staff).
type state struct {
	phase phase
	err   error // why the Conn ended: set with phaseEnded or phaseClosed

	// goroutines counts the goroutines doing the Conn's work: its workers,
	// the watchdog's callback while it is armed, and a caller while it
	// holds the reading role or writes its own frame. Each is counted,
	// under the lock, before it starts, and uncounted in its last change. Wait
	// waits for the count to reach zero once the Conn is closed, when
	// nothing can start any more.
	goroutines int
	// looking counts the workers on their way to look for work: started
	// or woken, not yet looked (worker.go).
	looking int
	reading readRole
	// lender is the handler whose worker lent the reading role to run it
	// (nil when a caller lent it); lends counts the lends, watched is the
	// lend the watchdog saw at its last tick, and watching says that the
	// watchdog is armed (see lend).
	lender   *job
	lends    uint32
	watched  uint32
	watching bool

	calls   map[uint64]*call // this side's calls awaiting their response, by id (call.go)
	batches int              // the peer's batches being read whose array is not queued yet (batch.go)
	line    line             // the peer's messages in hand (line.go)
	out     outbox           // the frames to write (writer.go)

	// changed is broadcast at every change while Wait, Shutdown or a
	// reader waits for a condition on the state.
	changed signal
}

// lock takes the state for a change; unlock ends it.
func (c *Conn) lock() { c.mu.Lock() }

// unlock ends a change of the state: it checks the invariants (under
// test), closes a
// Conn that Shutdown or the end of the input left with nothing more to do,
// staffs the work without a goroutine, and wakes the goroutines waiting
// for a change; then it releases the lock. Every change of the state ends
// here.
func (c *Conn) unlock() {
	s := &c.st
	if onViolation != nil {
		if msg := s.violation(); msg != "" {
			c.violated(msg)
		}
	}
	if (s.phase == phaseDraining || s.phase == phaseEnded) && s.quiet() {
		c.setPhase(s, phaseClosed, ErrClosed)
	}
	c.staff(s)
	s.changed.broadcast()
	c.mu.Unlock()
}

// update applies change to the state.
func (c *Conn) update(change func(s *state)) {
	c.lock()
	change(&c.st)
	c.unlock()
}

// await waits, with the lock held, until done holds of the state, and
// reports true; or until stop is closed, and reports false. It lets the
// lock go while it waits for sig (changed, or the outbox's room), and
// holds it again when it returns. It is the one wait on the state: Wait,
// Shutdown, room in the write queue or the line, the framing's choice.
func (c *Conn) await(sig *signal, stop <-chan struct{}, done func(s *state) bool) bool {
	for !done(&c.st) {
		s := &c.st
		if s.out.claimWriter() {
			// Answers queued without a writer by the worker that reads
			// (see answer) must not wait for it while it waits: a worker
			// writes them.
			c.staff(s)
		}
		ch := sig.wait()
		c.mu.Unlock() // nothing else changed
		select {
		case <-ch:
		case <-stop:
			c.lock()
			return false
		}
		c.lock()
	}
	return true
}

// quiet reports whether the Conn has nothing in hand: nothing of the
// peer's in the line and nothing to write.
func (s *state) quiet() bool { return s.line.empty() && s.batches == 0 && s.out.empty() }

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
		for id, pc := range s.calls {
			delete(s.calls, id)
			pc.err = why
			pc.done <- struct{}{}
		}
		close(c.done)
	}
	if p >= phaseEnded && s.reading != readHeld {
		s.reading = readOver
		s.lender = nil
	}
	if p != phaseClosed {
		return
	}
	if s.watching && c.watchdog.Stop() {
		s.watching = false // it would not have run: uncount it
		s.goroutines--
	}
	// Nothing more is read, served or written. The handlers' contexts end
	// with why, even when the input had ended first.
	c.cancel(why)
	s.line.dropAll(s.err)
	s.out.dropAll()
	if s.reading == readHeld && c.readDeadline != nil {
		// Under the lock, so that the reader, which gives the stream its
		// deadline back when it stops, does so after this.
		c.readDeadline.SetReadDeadline(time.Now())
	}
	if s.out.writing && c.writeDeadline != nil {
		c.writeDeadline.SetWriteDeadline(time.Now()) // likewise, see flush
	}
}

// violation returns what invariant the state breaks, or "".
func (s *state) violation() string {
	switch {
	case (s.phase >= phaseEnded) != (s.err != nil):
		return fmt.Sprintf("phase %v with error %v", s.phase, s.err)
	case s.goroutines < 0 || s.looking < 0:
		return fmt.Sprintf("%d goroutines, %d looking for work", s.goroutines, s.looking)
	case s.phase == phaseClosed && (s.line.queued() || len(s.out.frames) > 0):
		return "work left waiting after the Conn closed"
	case s.reading != readNotYet && s.phase == phaseNew:
		return "reading before Start"
	case s.batches < 0:
		return "negative count of batches"
	}
	return s.line.violation()
}

// violated reports a broken invariant of the state: a defect of this
// package, never something a peer can cause. The invariants are checked
// under test only (onViolation, set by the package's tests), where a
// broken one panics where it happened; the log line is for a test that
// unsets it.
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
