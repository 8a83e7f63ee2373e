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
// The roles pass from goroutine to goroutine as leaders and followers do:
// the worker that reads a request or notification whose turn has come runs
// it itself and lends the reading role, rather than hand the message over:
// it takes the role back when the handler returns. A caller may hold the reading role too, to read its own
// response (call.go), and lends it when it has. A lent role wakes nobody:
// the lender, or the next caller, takes it back, and so a lone call costs
// no goroutine hand-off and no thread woken on either side. What bounds
// the time the input is left unread is the watchdog (lend): a role lent
// for a whole period (lendPeriod) goes to a worker, woken for it, and so
// does at once the role of a handler that yields (it calls its peer,
// calls Yield, or is Async and under the cap of handlers alive), which is
// a handler that waits.
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

// lendPeriod is the watchdog's period: a reading role that stays lent
// for a whole period, one to two periods after it was lent, goes to a
// worker. Each tick may wake a thread: at 100 µs, the ticks during a run
// of lone calls cost a lone call over two processes a fifth of its time;
// at 500 µs, next to nothing. (In a process with nothing else to do, the
// Go runtime's timers fire about a millisecond late: the bound is then
// one such tick.)
const lendPeriod = 500 * time.Microsecond

// lend lends the reading role, which the calling goroutine held: nobody
// reads, and nobody is woken to, but the watchdog watches. lender is the
// handler the goroutine is about to run, if any. Called under the lock.
func (c *Conn) lend(s *state, lender *job) {
	s.reading = readLent
	s.lender = lender
	s.lends++
	if lender == nil {
		s.out.claimWriter() // the role leaves the worker: what it deferred is written
	}
	if s.watching {
		return // it ticks already
	}
	s.watching = true
	s.watched = s.lends
	s.goroutines++ // the watchdog's callback: counted until it ends (or is stopped)
	if c.watchdog == nil {
		c.watchdog = time.AfterFunc(lendPeriod, c.tick)
	} else {
		c.watchdog.Reset(lendPeriod)
	}
}

// tick is the watchdog: when the reading role is lent, and was lent
// already at the last tick with no lend since, it goes to a worker;
// otherwise the watchdog ticks again while the role is lent. Answers the
// worker that reads deferred are written at each tick, so that a stream of
// input never holds them longer than a period.
func (c *Conn) tick() {
	c.lock()
	s := &c.st
	s.out.claimWriter() // answers deferred for a whole period are written (see answer)
	switch {
	case s.reading != readLent || s.phase == phaseClosed:
	case s.lends == s.watched:
		s.reading, s.lender = readFree, nil // staff wakes a worker for it
		s.out.claimWriter()
	default:
		s.watched = s.lends
		c.watchdog.Reset(lendPeriod)
		c.unlock()
		return
	}
	s.watching = false
	s.goroutines--
	c.unlock()
}

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
			for {
				j := c.read(nil) // it returns without the lock
				if j == nil {
					c.lock()
					break
				}
				c.run(j) // it returns with the lock held
				if s.reading != readLent || s.lender != j {
					break // the role was taken meanwhile
				}
				s.reading, s.lender = readHeld, nil // taken back: read on
				c.unlock()
			}
			worked = true
		case s.out.wanted:
			s.out.wanted = false
			c.flushLocked(false) // it unlocks
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
