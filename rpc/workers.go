package rpc

import "time"

// The goroutines of a Conn are its read loop and its workers. A worker
// does one kind of work at a time: run requests (runRequests), run the
// notifications (runNotes), or write the queue (flush). When it runs out,
// it waits, idle, for more, and exits after a second or two without any
// (see idleTimeout), or when the Conn closes. Keeping it a while is what makes a worker worth having over a
// fresh goroutine: its stack has grown to what decoding, encoding and
// writing take, where a fresh goroutine would grow one anew (copying it
// several times) for every request. An idle Conn holds only its read loop.
//
// Every goroutine is counted in the state (goroutines) under the lock
// before it starts, and uncounted under the lock as it exits, so Wait,
// which waits for the count to reach zero once the Conn is closed, never
// races a start: nothing starts once the Conn is closed.

// work is what a worker is given to do.
type work struct {
	kind workKind
	j    *job // the request, for runRequest
}

type workKind uint8

const (
	runRequest workKind = iota // run the request j, then those that wait for its slot
	runNotes                   // run the queued notifications
	writeQueue                 // hold the writing role until the queue is empty
)

// idleTimeout is the period at which an idle worker looks whether it has
// done anything since it last looked: a worker exits after one to two
// periods without work. (A timer reset after every piece of work would
// cost more than the work of a small request.)
const idleTimeout = time.Second

// goWork has w done by an idle worker, or by a new one. Called under the
// lock, while the Conn is not closed.
func (c *Conn) goWork(s *state, w work) {
	select {
	case c.idle <- w: // a worker waits in its select: it takes w at once
	default:
		s.goroutines++
		go c.worker(w)
	}
}

// worker does w, then what it is given while it waits idle.
func (c *Conn) worker(w work) {
	idle := time.NewTimer(idleTimeout)
	defer idle.Stop()
	for {
		switch w.kind {
		case runRequest:
			c.runRequests(w.j)
		case runNotes:
			c.runNotes()
		case writeQueue:
			c.flush(roleWorker)
		}
		if !c.awaitWork(&w, idle) {
			c.update(func(s *state) { s.goroutines-- })
			return
		}
	}
}

// awaitWork waits for the next work into *w, and reports false when the
// worker is to exit instead: it was idle for a whole period of idle, or
// the Conn closed.
func (c *Conn) awaitWork(w *work, idle *time.Timer) bool {
	for worked := true; ; worked = false {
		select {
		case *w = <-c.idle:
			return true
		case <-idle.C:
			if !worked {
				return false
			}
			idle.Reset(idleTimeout)
		case <-c.ctx.Done():
			return false
		}
	}
}
