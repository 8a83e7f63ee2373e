package rpc

import "time"

// The goroutines of a Conn are its workers, all alike. A worker does one
// thing at a time, whichever is wanted first: run a handler whose turn has
// come (line.go), read the input (the reading role, read.go), or write the
// queued frames (the writing role, writer.go). Between them it looks for
// work; with none, it parks, and exits after a second or two parked (see
// idleTimeout), or when the Conn closes. An idle Conn keeps one worker:
// the one that reads.
//
// The roles pass from worker to worker as leaders and followers do: the
// worker that reads a request or notification whose turn has come runs it
// itself and hands the reading on to a follower, rather than handing the
// message over; when it is done, it takes the reading back if no follower
// has taken it yet. So a lone request costs no goroutine hand-off on its
// way to its handler, only the wake of a follower beside it, which bounds
// what a handler that blocks can hold the reading back by. A caller may
// hold the reading role too, to read its own response (call.go).
//
// Who wakes whom: every change of the state ends in unlock, which calls
// staff; staff compares the work that has no goroutine (demand) with the
// workers already on their way to look for work (state.looking), and
// wakes a parked worker, or starts one, for each missing. Every goroutine
// is counted in the state (goroutines) under the lock before it starts,
// and uncounted under the lock as it exits, so Wait, which waits for the
// count to reach zero once the Conn is closed, never races a start:
// nothing starts once the Conn is closed.

// idleTimeout is the period at which a parked worker looks whether it has
// done anything since it last looked: a worker exits after one to two
// periods without work. (A timer reset after every piece of work would
// cost more than the work of a small request.) Keeping a worker a while
// is what makes it worth having over a fresh goroutine: its stack has
// grown to what decoding, encoding and writing take.
const idleTimeout = time.Second

// demand counts the work that needs a goroutine of the Conn: handlers
// whose turn has come, the reading role when nobody holds it, and the
// writing role when frames wait for a writer.
func (s *state) demand() int {
	n := s.line.ready.len()
	if s.reading == readFree || s.reading == readLeft {
		n++
	}
	if s.out.wanted {
		n++
	}
	return n
}

// staff wakes, or starts, a worker for each piece of work that has no
// goroutine and no worker on its way to it. Called by unlock.
func (c *Conn) staff(s *state) {
	if s.phase == phaseClosed {
		return
	}
	for s.looking < s.demand() {
		s.looking++
		select {
		case c.wake <- struct{}{}: // a parked worker takes it at once
		default:
			s.goroutines++
			go c.worker()
		}
	}
}

// worker is the loop of a worker: it looks for work, does it, and looks
// again.
func (c *Conn) worker() {
	var idle *time.Timer
	worked := true
	c.lock()
	s := &c.st
	s.looking--
	for {
		switch {
		case s.phase == phaseClosed:
			c.exit(idle)
			return
		case s.line.ready.len() > 0:
			j := s.line.ready.pop()
			c.unlock()
			c.run(j) // it returns with the lock held
			worked = true
		case s.reading == readFree || s.reading == readLeft:
			s.reading = readHeld
			c.unlock()
			j, handedOver := c.read(nil)
			if j != nil {
				c.run(j) // it returns with the lock held
			} else {
				c.lock()
			}
			if handedOver {
				s.looking-- // read counted it as looking (see settle)
			}
			worked = true
		case s.out.wanted:
			s.out.wanted = false
			c.flushLocked(roleWorker) // it unlocks
			c.lock()
			worked = true
		default:
			if idle == nil {
				idle = time.NewTimer(idleTimeout)
			}
			c.unlock() // what the work done under this lock changed takes effect
			select {
			case <-c.wake: // the waker counted this worker as looking
				c.lock()
				s.looking--
			case <-idle.C:
				c.lock()
				if !worked {
					c.exit(idle)
					return
				}
				worked = false
				idle.Reset(idleTimeout)
			case <-c.ctx.Done():
				c.lock()
				c.exit(idle)
				return
			}
		}
	}
}

// exit uncounts the worker, which ends; the lock is held, and released.
func (c *Conn) exit(idle *time.Timer) {
	if idle != nil {
		idle.Stop()
	}
	s := &c.st
	s.goroutines--
	if !s.out.writing {
		s.out.batch = nil // a burst's buffer is not kept by an idle Conn
	}
	c.unlock()
}
