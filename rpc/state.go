package rpc

import (
	"fmt"
	"testing"
)

// connState is the lifecycle of a Conn and the accounting of the peer's
// requests: everything that decides when the connection ends, when Shutdown
// may return, and whether a request may start. It lives under Conn.mu and
// changes only through Conn.update, which checks its invariants and acts on
// what a change made true (closing done and drained). Keeping it in one
// place is what lets each rule below be written once.
//
// Invariants, checked after every change:
//   - err is set once and never changes; done is closed exactly when it is
//     set, and every pending call is failed with it then.
//   - closed implies err: Close and a failed write end the connection.
//   - active never exceeds maxActive, nor lent, stuck never exceeds
//     active; requests wait only while every slot is taken and some slot
//     is not stuck; none waits once closed.
//   - drained is closed once, when Shutdown has begun (draining), the read
//     loop has handled every line received (idle, or no longer reading),
//     and no handler runs and no request waits.
type connState struct {
	started  bool // Start was called (or Close before it: nothing will start)
	reading  bool // the read loop runs
	idle     bool // the read loop has handled every line it received and waits for more
	draining bool // Shutdown began: requests in input read from now on are refused
	closed   bool // Close was called or the output failed: nothing more is read, served or written

	// err is why the connection ended: ErrClosed, ErrInputEnded, the
	// input's read error or the output's write error. Nil while it lives.
	err error

	// The handler slots (see slots.go).
	active    int       // slots taken by running handlers
	maxActive int       // MaxConcurrentRequests
	stuck     int       // handlers that hold a slot and wait for the peer
	lent      int       // handlers running without a slot, having lent theirs
	waiting   taskQueue // requests admitted but waiting for a slot

	// requests are the peer's requests running or waiting, by the key of
	// their id, under a cancellation policy only (cancel.go): a request is
	// there from its admission until its handler returns or it is settled
	// otherwise (cancelled while waiting, overloaded, dropped by Close).
	requests map[idKey]*requestContext
}

// checkInvariants is set under test, so that an impossible transition
// panics where it happens instead of hanging a test later.
var checkInvariants = testing.Testing()

// update applies change to the state under the lock, checks the
// invariants, and performs the effects the change made due: when the
// connection has just ended, done is closed and the pending calls fail;
// when Shutdown has nothing more to wait for, drained is closed.
func (c *Conn) update(change func(s *connState)) {
	c.mu.Lock()
	wasEnded := c.st.err != nil
	change(&c.st)
	s := &c.st
	if checkInvariants {
		s.check(wasEnded)
	}
	endNow := !wasEnded && s.err != nil
	var drained chan struct{}
	if s.draining && c.drained != nil && (s.idle || !s.reading) && s.active == 0 && s.lent == 0 && s.waiting.len() == 0 {
		drained, c.drained = c.drained, nil
	}
	err := s.err
	c.mu.Unlock()

	if drained != nil {
		close(drained)
	}
	if endNow {
		c.pending.failAll(err)
		close(c.done)
	}
}

// check panics when the state breaks an invariant; wasEnded says whether
// the connection had ended before the change.
func (s *connState) check(wasEnded bool) {
	switch {
	case wasEnded && s.err == nil:
		panic("rpc: the connection's end was undone")
	case s.closed && s.err == nil:
		panic("rpc: closed without a reason")
	case s.active < 0 || s.active > s.maxActive:
		panic(fmt.Sprintf("rpc: %d handler slots in use of %d", s.active, s.maxActive))
	case s.lent < 0 || s.lent > s.maxActive || s.stuck < 0 || s.stuck > s.active:
		panic(fmt.Sprintf("rpc: %d handlers lent their slots and %d of %d are stuck", s.lent, s.stuck, s.active))
	case s.waiting.len() > 0 && (s.active < s.maxActive || s.stuck == s.active):
		panic("rpc: a request waits for a slot that is free or for ever")
	case s.closed && s.waiting.len() > 0:
		panic("rpc: requests wait after Close")
	case s.reading && !s.started:
		panic("rpc: reading before Start")
	}
}

// endWith records why the connection ended, unless it already had.
func (s *connState) endWith(err error) {
	if s.err == nil {
		s.err = err
	}
}
