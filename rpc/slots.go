package rpc

import (
	"time"
)

// The peer's requests run on goroutines of the Conn, at most
// MaxConcurrentRequests at once. A request that finds every slot taken
// waits, in arrival order, in a waiting room bounded by MaxWaitingRequests
// and MaxWaitingBytes; a request that finds the waiting room full too is
// answered at once with CodeOverloaded and never runs. Reading goes on
// either way, so the responses to this side's own calls keep flowing and a
// handler that waits for the peer cannot starve the slot that would answer
// it: at worst the peer is told to try again.
//
// A goroutine that finishes a request takes the next waiting one with the
// same slot; a slot with nothing waiting is given back.
//
// The goroutines that serve requests are kept a while after their work
// (see goRun), as the writer's is: a goroutine's stack grows to what encoding
// and decoding take, and a fresh goroutine would grow it anew for every
// request. An idle goroutine exits after idleTimeout, or at once when
// reading has ended, so an idle Conn holds only its read loop.

// A handler that calls its own Conn's peer and waits would hold its slot
// while the peer may need this side's slots to answer: with both ends doing
// so under load, every slot on both sides ends up waiting for the other.
// Two rules keep that from ever stalling:
//   - such a handler lends its slot while it waits (to a request waiting
//     for one), for as long as at most MaxConcurrentRequests handlers have
//     lent theirs; it takes a slot back when its call returns if one is
//     free, and runs on without one otherwise;
//   - when every handler holding a slot waits for the peer (stuck), no
//     request could start any more: the waiting ones, and those that come,
//     are answered CodeOverloaded instead of waiting.
// So at most 2 × MaxConcurrentRequests handlers run, and a request either
// runs or is answered.

// task is a decoded request, ready to run.
type task interface {
	// run serves it with the request context rc, answers it, and releases
	// the task.
	run(c *Conn, rc *requestContext)
	// discard releases a task that will never run.
	discard()
}

// waitingTask is a request in the waiting room, with the size that
// counts against MaxWaitingBytes.
type waitingTask struct {
	rc   *requestContext
	size int
}

// taskQueue is a FIFO of waiting requests that reuses its storage.
type taskQueue struct {
	items []waitingTask
	head  int
	bytes int
}

func (q *taskQueue) len() int { return len(q.items) - q.head }

func (q *taskQueue) push(w waitingTask) {
	w.rc.waiting = true
	q.items = append(q.items, w)
	q.bytes += w.size
}

func (q *taskQueue) pop() *requestContext {
	w := q.items[q.head]
	q.items[q.head] = waitingTask{}
	q.head++
	q.bytes -= w.size
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	w.rc.waiting = false
	return w.rc
}

// remove takes rc out of the queue (a request the peer cancelled).
func (q *taskQueue) remove(rc *requestContext) {
	for i := q.head; i < len(q.items); i++ {
		if q.items[i].rc == rc {
			q.bytes -= q.items[i].size
			copy(q.items[i:], q.items[i+1:])
			q.items[len(q.items)-1] = waitingTask{}
			q.items = q.items[:len(q.items)-1]
			if q.head == len(q.items) {
				q.items, q.head = q.items[:0], 0
			}
			rc.waiting = false
			return
		}
	}
}

// takeAll empties the queue and returns what waited.
func (q *taskQueue) takeAll() []waitingTask {
	items := q.items[q.head:]
	for _, w := range items {
		w.rc.waiting = false
	}
	*q = taskQueue{}
	return items
}

// admission is what admit did with a request.
type admission uint8

const (
	started    admission = iota // a goroutine of the Conn runs it
	waiting                     // it waits for a slot
	overloaded                  // every slot is taken and the waiting room is full: answer CodeOverloaded
	refused                     // discarded: the Conn is closed, or Shutdown began before it was read
)

// admit starts the request rc on a goroutine of the Conn,
// or lets it wait for a slot, or refuses it. size is the length of its
// line; late says it was read after Shutdown began. A task that is not
// started or waiting is discarded. Under a cancellation policy, a request
// started or waiting is tracked, for the cancel notifications to find it.
func (c *Conn) admit(rc *requestContext, size int, late bool) admission {
	var a admission
	c.update(func(s *connState) {
		switch {
		case s.closed || late:
			a = refused
		case s.active < s.maxActive:
			s.active++
			a = started
		case s.stuck == s.active:
			a = overloaded // it would wait for ever
		case s.waiting.len() < c.maxWaiting && (s.waiting.len() == 0 || s.waiting.bytes+size <= c.maxWaitingBytes):
			// A request larger than the byte bound may wait alone.
			s.waiting.push(waitingTask{rc, size})
			a = waiting
		default:
			a = overloaded
		}
		if c.cancellation != nil && (a == started || a == waiting) {
			s.track(rc)
		}
	})
	switch a {
	case started:
		c.goRun(rc)
	case overloaded, refused:
		rc.t.discard()
	}
	return a
}

// idleTimeout is how long a goroutine of the Conn waits for more work
// before it exits.
const idleTimeout = 2 * time.Second

// goRun runs the request rc, which holds a handler slot, on an idle
// goroutine of the Conn, or on a new one.
func (c *Conn) goRun(rc *requestContext) {
	select {
	case c.idleWork <- rc:
	default:
		c.running.Add(1)
		go c.work(rc)
	}
}

// work is the body of the goroutines that serve requests: it serves rc and
// the requests that wait for its slot, then waits, idle, for more.
func (c *Conn) work(rc *requestContext) {
	defer c.running.Done()
	var idle *time.Timer
	for {
		for rc != nil {
			rc.t.run(c, rc)
			rc = c.handlerEnded(rc)
		}
		if idle == nil {
			idle = time.NewTimer(idleTimeout)
		} else {
			idle.Reset(idleTimeout)
		}
		select {
		case rc = <-c.idleWork:
			idle.Stop()
		case <-idle.C:
			return
		case <-c.readDone:
			// No request can come any more; a later flush gets a goroutine
			// of its own.
			idle.Stop()
			return
		}
	}
}

// handlerEnded records that the handler of rc returned. When it held a
// slot, it returns the next waiting request, to be served with that slot,
// or gives the slot back.
func (c *Conn) handlerEnded(rc *requestContext) *requestContext {
	var t *requestContext
	c.update(func(s *connState) {
		rc.done = true
		switch {
		case !rc.holds:
			s.lent--
		case rc.calls > 0:
			s.stuck--
			fallthrough
		default:
			if s.waiting.len() > 0 {
				t = s.waiting.pop()
			} else {
				s.active--
			}
		}
	})
	return t
}

// callStarted records that the handler of rc calls its Conn's peer (see
// the rules above). It returns a request to start with the slot the
// handler lends, or the requests to answer CodeOverloaded since every
// slot is stuck.
func (c *Conn) callStarted(rc *requestContext) {
	var start *requestContext
	var overload []waitingTask
	c.update(func(s *connState) {
		if rc.done {
			return // a goroutine of the handler's, after it returned
		}
		if rc.calls++; rc.calls > 1 {
			return
		}
		if s.lent < s.maxActive {
			rc.holds = false
			s.lent++
			if s.waiting.len() > 0 {
				start = s.waiting.pop() // the slot goes to it
			} else {
				s.active--
			}
			return
		}
		s.stuck++
		if s.stuck == s.active {
			overload = s.waiting.takeAll()
			for _, w := range overload {
				s.forget(w.rc)
			}
		}
	})
	if start != nil {
		c.goRun(start)
	}
	for _, w := range overload {
		c.replyError(w.rc.req.ID, overloadError, true)
		w.rc.t.discard()
	}
}

// callEnded records that the call of callStarted returned.
func (c *Conn) callEnded(rc *requestContext) {
	c.update(func(s *connState) {
		if rc.done {
			return
		}
		if rc.calls--; rc.calls > 0 {
			return
		}
		switch {
		case rc.holds:
			s.stuck--
		case s.active < s.maxActive:
			// A free slot: take it back (none waits for it, or it would
			// not be free).
			rc.holds = true
			s.lent--
			s.active++
		}
	})
}
