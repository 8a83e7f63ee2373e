package rpc

import "time"

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

// task is a decoded request or notification, ready to run.
type task interface {
	// run serves it.
	run(c *Conn)
	// discard releases a task that will never run.
	discard()
}

// waitingTask is a request in the waiting room, with the size that counts
// against MaxWaitingBytes.
type waitingTask struct {
	t    task
	size int
}

// taskQueue is a FIFO of waiting requests that reuses its storage.
type taskQueue struct {
	items []waitingTask
	head  int
	bytes int
}

func (q *taskQueue) len() int { return len(q.items) - q.head }

func (q *taskQueue) push(t task, size int) {
	q.items = append(q.items, waitingTask{t, size})
	q.bytes += size
}

func (q *taskQueue) pop() task {
	w := q.items[q.head]
	q.items[q.head] = waitingTask{}
	q.head++
	q.bytes -= w.size
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return w.t
}

// takeAll empties the queue and returns what waited.
func (q *taskQueue) takeAll() []waitingTask {
	items := q.items[q.head:]
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

// admit starts t on a goroutine of the Conn, or lets it wait for a slot, or
// refuses it. size is the length of its line; late says it was read after
// Shutdown began. A task that is not started or waiting is discarded.
func (c *Conn) admit(t task, size int, late bool) admission {
	var a admission
	c.update(func(s *connState) {
		switch {
		case s.closed || late:
			a = refused
		case s.active < s.maxActive:
			s.active++
			a = started
		case s.waiting.len() < c.maxWaiting && (s.waiting.len() == 0 || s.waiting.bytes+size <= c.maxWaitingBytes):
			// A request larger than the byte bound may wait alone.
			s.waiting.push(t, size)
			a = waiting
		default:
			a = overloaded
		}
	})
	switch a {
	case started:
		c.goRun(t)
	case overloaded, refused:
		t.discard()
	}
	return a
}

// idleTimeout is how long a goroutine of the Conn waits for more work
// before it exits.
const idleTimeout = 2 * time.Second

// goRun runs the request t, which holds a handler slot, on an idle
// goroutine of the Conn, or on a new one.
func (c *Conn) goRun(t task) {
	select {
	case c.idleWork <- t:
	default:
		c.running.Add(1)
		go c.work(t)
	}
}

// work is the body of the goroutines that serve requests: it serves t and
// the requests that wait for its slot, then waits, idle, for more.
func (c *Conn) work(t task) {
	defer c.running.Done()
	var idle *time.Timer
	for {
		for t != nil {
			t.run(c)
			t = c.nextTask()
		}
		if idle == nil {
			idle = time.NewTimer(idleTimeout)
		} else {
			idle.Reset(idleTimeout)
		}
		select {
		case t = <-c.idleWork:
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

// nextTask returns the next waiting request for a slot that has just
// finished one, or gives the slot back and returns nil.
func (c *Conn) nextTask() task {
	var t task
	c.update(func(s *connState) {
		if s.waiting.len() > 0 {
			t = s.waiting.pop()
			return
		}
		s.active--
	})
	return t
}

// discardWaiting drops the requests waiting for a slot; Close calls it.
func (c *Conn) discardWaiting() {
	var dropped []waitingTask
	c.update(func(s *connState) { dropped = s.waiting.takeAll() })
	for _, w := range dropped {
		w.t.discard()
	}
}
