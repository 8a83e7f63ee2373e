package rpc

import (
	"fmt"

	"github.com/linerpc/linerpc/internal/wire"
)

// The inbox holds the peer's requests and notifications between the read
// loop, which admits them in arrival order, and the goroutines of the Conn
// that run their handlers. The read loop never runs a handler.
//
// Requests run concurrently, each on a worker of its own, at most
// MaxConcurrentRequests at once (the slots). A request that finds every
// slot taken waits, in arrival order, in a waiting room bounded by
// MaxWaitingRequests and MaxWaitingBytes; one that finds the room full is
// answered CodeOverloaded at once and never runs. Reading goes on either
// way, so the responses to this side's own calls are never held behind the
// peer's requests. A goroutine that finishes a request takes the next one
// waiting, with the same slot, or exits.
//
// An exclusive request (HandleExclusive) is a barrier: it starts once every
// request read before it has finished, runs alone, and the requests read
// after it are held, in order, until it has returned. Held requests count
// against the waiting room.
//
// A handler that calls its own peer and waits would hold its slot while the
// peer may need this side's slots to answer: with both ends doing so under
// load, every slot on both sides ends up waiting for the other. Two rules
// keep that from stalling for ever:
//   - such a handler lends its slot while it waits (it goes to the next
//     waiting request), as long as at most MaxConcurrentRequests handlers
//     have lent theirs; it takes a slot back when its call returns if one
//     is free, and runs on without one otherwise;
//   - when every handler holding a slot waits for the peer (stuck), no
//     request could start any more: the waiting and held ones, and those
//     that come, are answered CodeOverloaded instead of waiting.
//
// So at most 2 × MaxConcurrentRequests handlers run, and a request either
// runs or is answered.
//
// Notifications run one at a time, in arrival order, on one worker at a
// time (the notification runner). They wait in a queue with the waiting room's bounds (a
// room of their own); a notification that finds it full holds the read
// loop back until the runner has taken one: the same backpressure rule as
// the write queue's. Exclusive requests do not hold notifications. A
// request starts once the notifications read before it have been handled
// (notesAhead, serveRequest), unless the handler running is in a call to
// the peer (noteCalls), which may need that request answered.
type inbox struct {
	slots      int // MaxConcurrentRequests
	maxWaiting int // MaxWaitingRequests (0: none may wait)
	maxBytes   int // MaxWaitingBytes

	active    int        // slots taken by running handlers
	lent      int        // handlers running without a slot, lent while they waited for the peer
	stuck     int        // handlers holding a slot while they wait for the peer
	waiting   fifo[*job] // requests waiting for a slot, in arrival order
	barrier   *job       // the exclusive request waiting for those before it, or running
	held      fifo[*job] // requests read after the barrier, in arrival order
	bytes     int        // the lines of the waiting and held requests
	notes     fifo[note] // notifications waiting for the runner
	noteBytes int        // their lines
	noting    bool       // the notification runner runs (it exits when notes is empty)
	// notesIn counts the notifications admitted, notesOut those handled:
	// a call whose response came behind notesIn returns once notesOut
	// has caught up (see call.go).
	notesIn, notesOut uint64
	// noteCalls counts the calls in progress of the notification handler
	// running: while it waits for the peer, the requests read after it
	// do not wait for it (serveRequest).
	noteCalls int
	// batches counts the peer's batches read whose array is not queued
	// yet (batch.go): the Conn is not quiet while one is open.
	batches int
	byID    *idIndex // with a preempter: the requests in hand by id
}

// notesAhead returns what a call settled now waits for (call.notesAhead):
// the count of notifications admitted when some are not handled yet, else
// zero.
func (in *inbox) notesAhead() uint64 {
	if in.notesOut < in.notesIn {
		return in.notesIn
	}
	return 0
}

// admission is what became of a request the read loop admitted.
type admission uint8

const (
	admitted   admission = iota // it runs, waits or is held
	overloaded                  // answer CodeOverloaded: it will not run
	late                        // read after Shutdown began: dropped (DropShutdown)
	refused                     // the Conn is closed: dropped silently
)

// admit takes the request r, just read, into the inbox. Called by the read
// loop, under the lock. A request not admitted is the caller's to answer
// or drop.
func (c *Conn) admit(s *state, r *job) admission {
	in := &s.in
	switch {
	case s.phase == phaseClosed:
		return refused
	case s.phase >= phaseDraining:
		return late
	}
	r.notesAhead = in.notesAhead()
	switch {
	case in.barrier != nil:
		if in.allStuck() || !in.roomFor(r) {
			return overloaded
		}
		in.held.push(r)
		in.bytes += r.size
	case r.exclusive && in.idle():
		in.barrier = r
		c.start(s, r)
	case r.exclusive:
		if in.allStuck() {
			return overloaded
		}
		in.barrier = r // it waits, outside the room: one barrier may always wait
	case in.active < in.slots:
		c.start(s, r)
	case in.allStuck() || !in.roomFor(r):
		return overloaded
	default:
		in.waiting.push(r)
		in.bytes += r.size
	}
	in.byID.add(r)
	return admitted
}

// allStuck reports whether every handler holding a slot waits for the
// peer: a request that would wait could then wait for ever.
func (in *inbox) allStuck() bool { return in.stuck == in.active && in.active > 0 }

// idle reports whether no request is running or waiting.
func (in *inbox) idle() bool { return in.active == 0 && in.lent == 0 && in.waiting.len() == 0 }

// roomFor reports whether r may wait: the waiting room has a place, and
// room for its line (one request may always wait alone).
func (in *inbox) roomFor(r *job) bool {
	n := in.waiting.len() + in.held.len()
	return n < in.maxWaiting && (n == 0 || in.bytes+r.size <= in.maxBytes)
}

// start gives the request r a slot and a worker. Called under the lock.
func (c *Conn) start(s *state, r *job) {
	s.in.active++
	r.holds, r.started = true, true
	c.goWork(s, work{kind: runRequest, j: r})
}

// runRequests is a worker's work of running requests: it serves r, then
// the requests that wait for its slot, until none does.
func (c *Conn) runRequests(r *job) {
	for r != nil {
		r = c.answer(r, c.serveRequest(r))
	}
}

// answer queues f, the response to r (if any), and finishes r, in one
// change of the state: the response waits for room in the write queue
// with r's slot taken (the backpressure on the peer's requests), and the
// slot goes on once it is queued. It returns the next request for the
// worker to run (see finish).
func (c *Conn) answer(r *job, f *frame) (next *job) {
	if r.batch != nil {
		// The array is written when the batch's last answer is in; the
		// slot goes on now.
		c.batchAnswered(r.batch, r.req.ID, f, fromHandler)
		f = nil
	}
	if f != nil {
		_, err := c.sendWith(f, fromHandler, nil, func(s *state) error {
			next = c.finish(s, r)
			return nil
		})
		if err == nil {
			return next
		}
		c.replyFailed(f, err) // the Conn closed: r is finished below
	}
	c.lock()
	next = c.finish(&c.st, r)
	c.unlock()
	return next
}

// finish records that the handler of r returned and its answer is queued,
// and returns the next request for its worker to run, which inherits its
// slot; when there is none, the slot is given back. Called under the lock.
func (c *Conn) finish(s *state, r *job) *job {
	in := &s.in
	r.finished = true
	in.byID.remove(r)
	switch {
	case !r.holds:
		in.lent--
	case r.calls > 0: // a goroutine it left behind still calls
		in.stuck--
		fallthrough
	default:
		in.active--
	}
	if r == in.barrier {
		in.lift()
	}
	return c.startWaiting(s, true)
}

// lift ends the barrier: the requests it held are admitted in order, up to
// the next exclusive one, which becomes the barrier.
func (in *inbox) lift() {
	in.barrier = nil
	for in.held.len() > 0 {
		r := in.held.pop()
		if r.exclusive {
			in.bytes -= r.size // a barrier waits outside the room
			in.barrier = r
			return
		}
		in.waiting.push(r) // it stays in the room
	}
}

// startWaiting starts the requests that may start now: the barrier once
// nothing runs before it, else the waiting ones while slots are free. With
// self, the first is returned for the calling goroutine to run rather than
// started on a goroutine of its own. Called under the lock.
func (c *Conn) startWaiting(s *state, self bool) (mine *job) {
	in := &s.in
	for {
		var r *job
		switch b := in.barrier; {
		case b != nil && b.started:
			return mine // the barrier runs alone
		case b != nil && in.idle():
			r = b
		case in.waiting.len() > 0 && in.active < in.slots:
			r = in.waiting.pop()
			in.bytes -= r.size
		default:
			return mine
		}
		if self && mine == nil {
			in.active++
			r.holds, r.started = true, true
			mine = r
			continue
		}
		c.start(s, r)
	}
}

// callStarted records that the handler of r calls its Conn's peer (see
// the rules above). It returns the requests to answer CodeOverloaded,
// since every slot is stuck. Called under the lock.
func (c *Conn) callStarted(s *state, r *job) (overload []*job) {
	in := &s.in
	if r.finished {
		return nil // a goroutine the handler left behind
	}
	if r.calls++; r.calls > 1 || !r.holds {
		// Already counted: another of its calls is pending, or it still
		// runs on a slot lent by an earlier call (lent stays as it is).
		return nil
	}
	if in.lent < in.slots {
		r.holds = false
		in.lent++
		in.active--
		c.startWaiting(s, false) // the slot goes to a waiting request
		return nil
	}
	in.stuck++
	if in.stuck < in.active {
		return nil
	}
	for in.waiting.len() > 0 {
		overload = append(overload, in.waiting.pop())
	}
	for in.held.len() > 0 {
		overload = append(overload, in.held.pop())
	}
	for _, w := range overload {
		in.bytes -= w.size
		in.byID.remove(w)
	}
	return overload
}

// callEnded records that the call of callStarted returned. Called under
// the lock.
func (c *Conn) callEnded(s *state, r *job) {
	in := &s.in
	if r.finished {
		return
	}
	if r.calls--; r.calls > 0 {
		return
	}
	switch {
	case r.holds:
		in.stuck--
	case in.active < in.slots:
		// A free slot (none waits for it, or it would not be free).
		r.holds = true
		in.lent--
		in.active++
	}
}

// admitNote queues the notification n, just read, for the runner, and
// starts the runner if it does not run. It reports false, having done
// nothing, when the queue is full: the read loop then waits for a change
// and tries again. A notification read after Shutdown began is refused
// (late). Called by the read loop, under the lock.
func (c *Conn) admitNote(s *state, n note) (admission, bool) {
	in := &s.in
	switch {
	case s.phase == phaseClosed:
		return refused, true
	case s.phase >= phaseDraining:
		return late, true
	case in.notes.len() > 0 && (in.notes.len() >= max(in.maxWaiting, 1) || in.noteBytes+n.size > in.maxBytes):
		return admitted, false // one may always wait alone
	}
	in.notes.push(n)
	in.noteBytes += n.size
	in.notesIn++
	if !in.noting {
		in.noting = true
		c.goWork(s, work{kind: runNotes})
	}
	return admitted, true
}

// runNotes is a worker's work of running the notifications (as the
// notification runner): it runs the queued ones in order until the queue
// is empty.
func (c *Conn) runNotes() {
	c.lock()
	for {
		s := &c.st
		if s.in.notes.len() == 0 {
			s.in.noting = false
			c.unlock()
			return
		}
		n := s.in.notes.pop()
		s.in.noteBytes -= n.size
		c.unlock()
		c.serveNotification(n.t, n.method)
		c.lock()
		s.in.notesOut++
	}
}

// empty reports whether nothing of the peer's is in hand.
func (in *inbox) empty() bool {
	return in.idle() && in.barrier == nil && in.held.len() == 0 && !in.noting && in.batches == 0
}

// queued reports whether anything of the peer's waits to run.
func (in *inbox) queued() bool {
	return in.waiting.len() > 0 || in.held.len() > 0 || in.notes.len() > 0 || in.barrier != nil && !in.barrier.started
}

// dropAll discards what waits: the Conn closed. The handlers running go
// on (their contexts have ended) and are counted until they return.
func (in *inbox) dropAll() {
	for in.waiting.len() > 0 {
		in.waiting.pop().discard()
	}
	for in.held.len() > 0 {
		in.held.pop().discard()
	}
	if b := in.barrier; b != nil && !b.started {
		b.discard()
		in.barrier = nil
	}
	for in.notes.len() > 0 {
		in.notes.pop().t.release()
	}
	in.bytes, in.noteBytes = 0, 0
	in.byID.clear()
}

// violation returns the invariant the inbox breaks, or "".
func (in *inbox) violation() string {
	switch {
	case in.active < 0 || in.active > in.slots:
		return fmt.Sprintf("%d handler slots in use of %d", in.active, in.slots)
	case in.lent < 0 || in.lent > in.slots || in.stuck < 0 || in.stuck > in.active:
		return fmt.Sprintf("%d handlers lent their slots and %d of %d are stuck", in.lent, in.stuck, in.active)
	case in.barrier != nil && in.barrier.started && (in.waiting.len() > 0 || in.active != 1 && in.lent+in.active != 1):
		return "an exclusive request runs beside others"
	case in.waiting.len() > 0 && in.active < in.slots:
		return "a request waits for a slot that is free"
	case in.barrier != nil && !in.barrier.started && in.idle():
		return "an exclusive request waits for nothing"
	case in.barrier == nil && in.held.len() > 0:
		return "requests held without a barrier"
	case in.bytes < 0 || in.noteBytes < 0:
		return "negative waiting bytes"
	case in.batches < 0 || in.noteCalls < 0:
		return "negative count of batches or of notification calls"
	}
	return ""
}

// note is a notification waiting for the runner: its handler bound to its
// decoded params, its method, and the length of its line.
type note struct {
	t      task
	method string
	size   int
}

// fifo is a queue that reuses its storage.
type fifo[T comparable] struct {
	items []T
	head  int
}

func (q *fifo[T]) len() int { return len(q.items) - q.head }

func (q *fifo[T]) push(v T) {
	if q.head > 0 && len(q.items) == cap(q.items) {
		// Full, with room at the front: move what waits there rather than
		// grow, so that a queue never holds more than twice its length.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, v)
}

func (q *fifo[T]) pop() T {
	var zero T
	v := q.items[q.head]
	q.items[q.head] = zero
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return v
}

// remove takes v out of the queue, and reports whether it was there.
func (q *fifo[T]) remove(v T) bool {
	var zero T
	for i := q.head; i < len(q.items); i++ {
		if q.items[i] == v {
			copy(q.items[i:], q.items[i+1:])
			q.items[len(q.items)-1] = zero
			q.items = q.items[:len(q.items)-1]
			if q.head == len(q.items) {
				q.items, q.head = q.items[:0], 0
			}
			return true
		}
	}
	return false
}

// idIndex indexes the requests in hand by the match key of their ids,
// for a preempter that names them by id (a cancel notification). A nil
// *idIndex, as a Conn without a preempter has, indexes nothing.
type idIndex struct {
	m map[wire.IDKey]*job // chained through job.sameID when a peer reuses an id
}

func (x *idIndex) add(r *job) {
	if x == nil {
		return
	}
	r.sameID = x.m[r.key]
	x.m[r.key] = r
}

func (x *idIndex) remove(r *job) {
	if x == nil {
		return
	}
	head := x.m[r.key]
	switch {
	case head == r:
		if r.sameID == nil {
			delete(x.m, r.key)
		} else {
			x.m[r.key] = r.sameID
		}
	case head != nil:
		for p := head; p.sameID != nil; p = p.sameID {
			if p.sameID == r {
				p.sameID = r.sameID
				break
			}
		}
	}
	r.sameID = nil
}

func (x *idIndex) clear() {
	if x != nil {
		clear(x.m)
	}
}
