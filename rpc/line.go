package rpc

import (
	"context"
	"fmt"

	"github.com/linerpc/linerpc/internal/wire"
)

// The line is the one rule by which a Conn orders what it reads, the rule
// every JavaScript peer follows (see "Order" in the package docs):
//
// Every message the peer sends takes its place in one line, in the order
// it was read: requests, notifications, responses to this side's calls,
// and the end of the input. An entry starts once the entries before it
// have yielded. A handler yields when it returns, when it calls its peer
// with its own context, and when it calls Yield (or, registered Async, as
// it starts). A notification and an exclusive request run alone: nothing
// behind them starts until they yield (they are solo). Requests next to
// requests share the turn (they are shared), up to MaxConcurrentRequests
// running at once; a response, or the end of the input, starts once the
// solo entries before it have yielded. A response to a handler's call is
// that handler's again: it starts as the handler's kind, and the handler,
// resumed, holds what is behind it until it yields again; the responses to
// its other calls are inside that turn, and are delivered at once.
//
// So at any time the line is: the shared entries running, the requests
// that wait for a slot (slotQ, in order), the earliest solo entry that has
// not yielded (head: waiting for the entries before it, or running), and
// everything read after head (held, in order). When head yields, what is
// held is lifted, in order, up to the next solo entry, which becomes head.
//
// Bounds and the one cap:
//   - requests and notifications waiting in slotQ and held take room,
//     MaxWaiting entries and MaxWaitingBytes of their lines (a waiting
//     head takes none: one solo entry may always wait); a request that
//     finds no room is answered CodeOverloaded, a notification holds the
//     reading back until there is room;
//   - a handler that has yielded holds no slot; handlers alive (started,
//     not returned) are capped at 2 × MaxConcurrentRequests: a request
//     whose turn comes at the cap is answered CodeOverloaded (two ends
//     calling each other back under load end so, rather than wait for
//     each other), and a notification handler's yield past it is refused
//     (it goes on holding the line; so is an Async notification's, as it
//     starts).
//
// Everything here runs under the Conn's lock.
type line struct {
	slots     int // MaxConcurrentRequests
	room      int // MaxWaiting (0: none may wait)
	roomBytes int // MaxWaitingBytes

	head    *job       // the earliest solo entry not yielded: waiting or running
	slotQ   fifo[*job] // requests before head waiting for a slot, in arrival order
	held    fifo[*job] // the entries read after head, in arrival order
	running int        // shared entries running: started or resumed, not yielded
	alive   int        // handlers started and not returned
	waiting int        // requests and notifications in slotQ and held
	bytes   int        // their lines
	ready   fifo[*job] // entries started whose handler no goroutine runs yet
	byID    map[wire.IDKey]*job
}

// jobKind is what an entry of the line is.
type jobKind uint8

const (
	requestJob      jobKind = iota // a request of the peer's
	notificationJob                // a notification of the peer's
	responseJob                    // a response to a call of this side's, waiting for its turn
	endJob                         // the end of the input
)

// jobState is where an entry is in the line.
type jobState uint8

const (
	queued   jobState = iota // waiting for its turn
	running                  // started (or resumed), not yielded
	yielded                  // started, yielded, not returned
	finished                 // returned, or never to run
)

// admission is what became of an entry the reader admitted.
type admission uint8

const (
	admitted   admission = iota // started, or waiting for its turn
	overloaded                  // a request answered CodeOverloaded: it will not run
	full                        // a notification that finds no room: admit it again later
	late                        // read after Shutdown began: dropped (DropShutdown)
	refused                     // the Conn is closed: dropped silently
)

// capAlive is the cap on the handlers alive (see line).
func (l *line) capAlive() int { return 2 * l.slots }

// mayStart reports whether the entry j may start now, were it next.
func (l *line) mayStart(j *job) bool { return l.mayStartAs(j.kind, j.solo) }

// mayStartAs reports whether an entry of kind, solo or not, may start now,
// were it next.
func (l *line) mayStartAs(kind jobKind, solo bool) bool {
	switch {
	case l.head != nil:
		return false // a solo entry before it has not yielded
	case solo:
		return l.running == 0 && l.slotQ.len() == 0
	case kind == requestJob:
		return l.slotQ.len() == 0 && l.running < l.slots
	}
	return true // a shared response, or the end of the input
}

// roomFor reports whether j may wait: the room has a place, and room for
// its line.
func (l *line) roomFor(j *job) bool {
	return l.waiting < l.room && l.bytes+j.size <= l.roomBytes
}

// admit takes j, a request or notification just read, into the line. A
// request not admitted is the reader's to answer or drop.
func (c *Conn) admit(s *state, j *job) admission {
	l := &s.line
	switch {
	case s.phase == phaseClosed:
		return refused
	case s.phase >= phaseDraining:
		return late
	case l.mayStart(j):
		l.index(j)
		c.start(s, j)
		return admitted
	case !l.roomFor(j) && (l.head != nil || !j.solo):
		if j.kind == requestJob {
			return overloaded
		}
		return full
	}
	l.index(j)
	switch {
	case l.head == nil && j.solo:
		l.head = j // it waits outside the room
	case l.head == nil:
		l.slotQ.push(j)
		l.take(j)
	default:
		l.held.push(j)
		l.take(j)
	}
	return admitted
}

// take and give count j in and out of the room.
func (l *line) take(j *job) { l.waiting++; l.bytes += j.size }
func (l *line) give(j *job) { l.waiting--; l.bytes -= j.size }

// admitEnd places the end of the input in the line, with err, the reason
// the Conn ends with.
func (c *Conn) admitEnd(s *state, err error) {
	j := &job{kind: endJob, ended: err}
	c.place(s, j)
}

// admitResponse places the response that settles pc in the line. It
// reports now when pc's turn has come: its caller's handler, if any, has
// resumed, and the caller is the reader's to wake once pc holds the
// outcome. Otherwise pc waits in the line (pc.entry), and must hold its
// outcome before the lock is let go: it is delivered when its turn comes.
func (c *Conn) admitResponse(s *state, pc *call) (now bool) {
	l := &s.line
	h := pc.handler
	if h != nil && h.state == running {
		// Its caller holds its turn (resumed by the response to another
		// of its calls, or its yield refused at the cap): the response is
		// inside that turn.
		return true
	}
	solo := h != nil && h.solo && h.resumes()
	if l.mayStartAs(responseJob, solo) {
		c.resume(s, pc)
		return true
	}
	j := &job{kind: responseJob, call: pc, solo: solo} // made only to wait
	pc.entry = j
	c.place(s, j)
	return false
}

// place puts j, a response or the end of the input, in the line: started
// when it may start, else behind what it waits for, outside the room.
func (c *Conn) place(s *state, j *job) {
	l := &s.line
	switch {
	case l.mayStart(j):
		c.start(s, j)
	case l.head == nil:
		l.head = j // solo: it waits for the shared entries before it
	default:
		l.held.push(j)
	}
}

// start starts j, whose turn has come. A request or notification goes to
// ready, for a goroutine of the Conn to run it (the goroutine that
// admitted it may take it); a request at the cap of handlers alive is
// answered CodeOverloaded instead.
func (c *Conn) start(s *state, j *job) {
	l := &s.line
	switch j.kind {
	case responseJob:
		pc := j.call
		pc.entry = nil
		c.deliver(s, pc)
		return
	case endJob:
		c.setPhase(s, phaseEnded, j.ended)
		return
	case requestJob:
		if l.alive >= l.capAlive() {
			j.state = finished
			l.unindex(j)
			c.answerNow(s, j, overloadError)
			return
		}
	}
	l.alive++
	l.ready.push(j)
	switch {
	case j.async && (j.kind == requestJob || l.alive <= l.capAlive()):
		j.state = yielded // past the cap, an Async notification's yield is refused too
	case j.solo:
		j.state = running
		l.head = j
	default:
		j.state = running
		l.running++
	}
}

// deliver ends the wait of the caller of pc, whose outcome is in pc and
// whose turn has come.
func (c *Conn) deliver(s *state, pc *call) {
	c.resume(s, pc)
	pc.done <- struct{}{}
}

// resume gives the turn back to the handler that called with its context
// the call pc, whose outcome is delivered: it holds what is behind it
// until it yields again.
func (c *Conn) resume(s *state, pc *call) {
	h := pc.handler
	if h == nil || !h.resumes() {
		return
	}
	l := &s.line
	h.state = running
	if h.solo {
		l.head = h
	} else {
		l.running++
	}
	// The responses to its other calls that wait behind it are inside its
	// turn now: they are delivered (a handler that made two calls, or a
	// Batch, would wait for them for ever).
	for i := l.held.head; i < len(l.held.items); {
		e := l.held.items[i]
		if e.kind != responseJob || e.call.handler != h {
			i++
			continue
		}
		l.held.remove(e)
		e.call.entry = nil
		e.call.done <- struct{}{}
	}
}

// yield records that the handler j has yielded: what is behind it may
// start. It reports false when the yield was refused: j is a
// notification handler and the cap of handlers alive is passed.
func (c *Conn) yield(s *state, j *job) bool {
	l := &s.line
	if j.state != running {
		return true
	}
	if j.kind == notificationJob && l.alive > l.capAlive() {
		return false
	}
	c.stepAside(s, j, yielded)
	return true
}

// finish records that the handler of j has returned and its answer is
// queued.
func (c *Conn) finish(s *state, j *job) {
	if j.state == finished {
		return
	}
	s.line.alive--
	s.line.unindex(j)
	c.stepAside(s, j, finished)
}

// stepAside moves j, which has yielded or returned, out of the way of what
// is behind it, and starts what may start now.
func (c *Conn) stepAside(s *state, j *job, to jobState) {
	l := &s.line
	if j.state == running {
		if j == l.head {
			l.head = nil
		} else {
			l.running--
		}
	}
	j.state = to
	if to == yielded && s.lender == j && s.reading == readLent {
		// It ran on the worker that lent the reading role, and waits
		// now: a follower takes the role at once.
		s.reading, s.lender = readFree, nil
		s.out.claimWriter()
	}
	c.advance(s)
}

// advance starts what may start now: waiting requests while slots are
// free, head once nothing runs before it, and, with no head, what was
// held, in order, up to the next solo entry.
func (c *Conn) advance(s *state) {
	l := &s.line
	for {
		for l.slotQ.len() > 0 && l.running < l.slots {
			j := l.slotQ.pop()
			l.give(j)
			c.start(s, j)
		}
		if h := l.head; h != nil {
			if h.state == running || l.running > 0 || l.slotQ.len() > 0 {
				return
			}
			l.head = nil
			c.start(s, h) // it may become head again, running
			continue
		}
		if l.held.len() == 0 {
			return
		}
		j := l.held.pop()
		switch {
		case j.kind > notificationJob:
			c.place(s, j)
		case j.solo:
			l.give(j)
			l.head = j // it waits outside the room
		default:
			l.slotQ.push(j) // it stays in the room
		}
	}
}

// remove takes j, waiting for its turn, out of the line, and reports
// whether it was there.
func (c *Conn) remove(s *state, j *job) bool {
	l := &s.line
	switch {
	case j.state != queued:
		return false
	case l.head == j:
		l.head = nil
	case l.slotQ.remove(j), l.held.remove(j):
		if j.kind <= notificationJob {
			l.give(j)
		}
	default:
		return false
	}
	j.state = finished
	l.unindex(j)
	c.advance(s)
	return true
}

// empty reports whether nothing of the peer's is in hand: no handler
// alive, nothing waiting for its turn or for a goroutine.
func (l *line) empty() bool {
	return l.alive == 0 && l.head == nil && l.slotQ.len() == 0 && l.held.len() == 0 && l.ready.len() == 0
}

// dropAll discards what waits: the Conn closed with err. Handlers alive go
// on (their contexts have ended) and are counted until they return; calls
// whose response waits for its turn fail with err.
func (l *line) dropAll(err error) {
	drop := func(j *job) {
		switch j.kind {
		case responseJob:
			pc := j.call
			pc.entry = nil
			pc.err = err
			pc.done <- struct{}{}
		case requestJob, notificationJob:
			j.state = finished
			j.discard()
		}
	}
	if h := l.head; h != nil && h.state == queued {
		drop(h)
		l.head = nil
	}
	for l.slotQ.len() > 0 {
		drop(l.slotQ.pop())
	}
	for l.held.len() > 0 {
		drop(l.held.pop())
	}
	for l.ready.len() > 0 {
		j := l.ready.pop()
		switch {
		case j == l.head:
			l.head = nil
		case j.state == running:
			l.running--
		}
		l.alive--
		drop(j)
	}
	l.waiting, l.bytes = 0, 0
	clear(l.byID)
}

// violation returns the invariant the line breaks, or "".
func (l *line) violation() string {
	switch {
	case l.running < 0 || l.alive < 0:
		return fmt.Sprintf("%d shared entries running, %d handlers alive", l.running, l.alive)
	case l.waiting < 0 || l.bytes < 0 || onViolation != nil && l.waiting != l.slotQ.len()+l.heldWaiting():
		return fmt.Sprintf("%d entries counted waiting, %d in slotQ and %d held", l.waiting, l.slotQ.len(), l.held.len())
	case l.head != nil && l.head.state != queued && l.head.state != running:
		return "head has yielded"
	case l.head == nil && l.held.len() > 0:
		return "entries held without a solo entry before them"
	case l.slotQ.len() > 0 && l.running < l.slots:
		return "a request waits for a slot that is free"
	case l.head != nil && l.head.state == queued && l.running == 0 && l.slotQ.len() == 0:
		return "a solo entry waits for nothing"
	}
	return ""
}

// heldWaiting counts the requests and notifications held.
func (l *line) heldWaiting() int {
	n := 0
	for i := l.held.head; i < len(l.held.items); i++ {
		if l.held.items[i].kind <= notificationJob {
			n++
		}
	}
	return n
}

// index and unindex keep the line's requests by id, for a cancellation
// policy that names them (nil without one).
func (l *line) index(j *job) {
	if l.byID == nil || j.kind != requestJob {
		return
	}
	j.sameID = l.byID[j.key]
	l.byID[j.key] = j
}

func (l *line) unindex(j *job) {
	if l.byID == nil || j.kind != requestJob {
		return
	}
	head := l.byID[j.key]
	switch {
	case head == j:
		if j.sameID == nil {
			delete(l.byID, j.key)
		} else {
			l.byID[j.key] = j.sameID
		}
	case head != nil:
		for p := head; p.sameID != nil; p = p.sameID {
			if p.sameID == j {
				p.sameID = j.sameID
				break
			}
		}
	}
	j.sameID = nil
}

// Yield tells the Conn that the handler whose context ctx is (or derives
// from) has read what it needs of the state the messages before it left:
// the messages behind it may start, as they would once it returned. It is
// how a handler that goes on working, or waits for something the Conn
// cannot see (a timer, a lock, another goroutine, a call made with
// another context), lets the rest of the line go on, as a JavaScript
// handler does at an await. A handler yields on its own when it returns
// and when it calls its peer with its context; a method registered with
// Async yields as it starts.
//
// Yield does nothing for a context that is no handler's, for a handler
// that returned or has yielded already, and for a notification handler
// while more than 2 × MaxConcurrentRequests handlers are alive (past the
// cap): that one goes on holding what is behind it until it returns.
func Yield(ctx context.Context) {
	j, _ := ctx.Value(jobKey).(*job)
	if j == nil {
		return
	}
	c := j.conn
	c.lock()
	c.yield(&c.st, j)
	c.unlock()
}

// queued reports whether anything of the peer's waits for its turn or for
// a goroutine.
func (l *line) queued() bool {
	return l.slotQ.len() > 0 || l.held.len() > 0 || l.ready.len() > 0 || l.head != nil && l.head.state == queued
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
