package rpc

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
// same slot; a slot with nothing waiting is given back, and its goroutine
// exits. No goroutine of the Conn idles: an idle Conn holds only its read
// loop.

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
		c.running.Add(1)
		go c.serve(t)
	case overloaded, refused:
		t.discard()
	}
	return a
}

// serve runs t and then the requests that wait for its slot, until none
// does.
func (c *Conn) serve(t task) {
	defer c.running.Done()
	for t != nil {
		t.run(c)
		t = c.nextTask()
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
