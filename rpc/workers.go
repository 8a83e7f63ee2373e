package rpc

import (
	"sync"
	"time"
)

// The goroutines of a Conn take turns at leading the read loop, which
// serves requests where they are read (see Conn.lead). When a handler or a
// flush holds the leading goroutine up, the lead passes to an idle
// goroutine, or a new one; the one held up finishes its request, serves the
// requests queued for its handler slot, and then waits, idle, for the lead
// to come back to it. A goroutine idle for idleTimeout exits. All of them
// exit once the connection has ended and their handlers have returned (see
// Conn.Wait).

// idleTimeout is how long a goroutine of the Conn waits for work before it
// exits. Keeping goroutines (and their grown stacks) across bursts of
// requests is what makes a burst cheap; letting them go after a quiet
// spell is what keeps an idle connection small.
const idleTimeout = 2 * time.Second

// task is a decoded request, waiting for or holding a handler slot.
type task interface {
	// run serves the request; leading says that the goroutine leads the
	// read loop (it posts its reply rather than writing it).
	run(c *Conn, leading bool)
	discard() // releases a task that will never run
}

// workers bounds the number of requests served at once. Requests beyond
// the bound queue in arrival order; a goroutine that finishes a request
// takes the next queued one with the same slot.
type workers struct {
	leads chan *reader // unbuffered: a send succeeds only into an idle goroutine

	mu      sync.Mutex
	max     int // handler slots
	active  int // slots in use
	queue   []task
	head    int
	dropped bool // Close was called: queued and new requests are discarded
	// draining is set by Shutdown. The lines the Conn had received by
	// then are still handled; requests in later input are refused.
	// drained is closed once the read loop waits for input (or reading
	// has ended) and no slot is in use.
	draining bool
	drained  chan struct{}
	// waiting says the read loop has handled every line it received and
	// waits for input, or that reading has ended.
	waiting bool
}

func (w *workers) init(max int) {
	w.max = max
	w.leads = make(chan *reader)
}

// admission is what acquire did with a task.
type admission uint8

const (
	admitted admission = iota // it holds a handler slot: run it
	queued                    // it waits for a slot
	refused                   // discarded: Close or Shutdown came first
)

// acquire takes a handler slot for t, or queues t, or discards it after
// Close, or when it came in input received after Shutdown began (late).
func (w *workers) acquire(t task, late bool) admission {
	w.mu.Lock()
	if w.dropped || late {
		w.mu.Unlock()
		t.discard()
		return refused
	}
	if w.active >= w.max {
		w.queue = append(w.queue, t)
		w.mu.Unlock()
		return queued
	}
	w.active++
	w.mu.Unlock()
	return admitted
}

// next returns the next queued task for a slot that just finished one, or
// releases the slot and returns nil.
func (w *workers) next() task {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.head == len(w.queue) || w.dropped {
		w.active--
		w.checkDrained()
		return nil
	}
	t := w.queue[w.head]
	w.queue[w.head] = nil
	w.head++
	if w.head == len(w.queue) {
		w.queue, w.head = w.queue[:0], 0
	}
	return t
}

// drain stops taking new requests and returns a channel closed once the
// requests already taken (running or queued) are done.
func (w *workers) drain() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.draining = true
	if w.drained == nil {
		w.drained = make(chan struct{})
	}
	done := w.drained
	w.checkDrained()
	return done
}

// checkDrained closes drained when Shutdown has nothing more to wait for.
// Called with mu held.
func (w *workers) checkDrained() {
	if w.draining && w.drained != nil && w.waiting && w.active == 0 {
		close(w.drained)
		w.drained = nil
	}
}

// waitInput records that the read loop is about to wait for input (true)
// or has received some (false), and reports whether input received from
// now on is late: Shutdown has begun.
func (w *workers) waitInput(waiting bool) (late bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waiting = waiting
	w.checkDrained()
	return w.draining
}

// drop discards the queued tasks and every task queued later.
func (w *workers) drop() {
	w.mu.Lock()
	queued := w.queue[w.head:]
	w.queue, w.head, w.dropped = nil, 0, true
	w.mu.Unlock()
	for _, t := range queued {
		t.discard()
	}
}

// passLead gives the lead of the read loop to an idle goroutine of the
// Conn, or to a new one.
func (c *Conn) passLead(rd *reader) {
	select {
	case c.workers.leads <- rd:
	default:
		c.running.Add(1) // the lead's holder is a counted goroutine: see Wait
		go c.work(rd)
	}
}

// work is the body of every goroutine of the Conn: it leads the read loop,
// and when the lead passes on, waits for it to come back.
func (c *Conn) work(rd *reader) {
	defer c.running.Done()
	var idle *time.Timer // made on first use: a goroutine that leads until the end needs none
	for {
		if c.lead(rd, nil) == leadEnded {
			return
		}
		if idle == nil {
			idle = time.NewTimer(idleTimeout)
		}
		var ok bool
		if rd, ok = c.awaitLead(idle); !ok {
			return
		}
	}
}

// awaitLead waits, idle, for the lead to come back; it reports false when
// the goroutine should exit instead: it waited idleTimeout, or the
// connection has ended.
func (c *Conn) awaitLead(idle *time.Timer) (*reader, bool) {
	idle.Reset(idleTimeout)
	defer idle.Stop()
	select {
	case rd := <-c.workers.leads:
		return rd, true
	case <-c.done:
	case <-idle.C:
	}
	return nil, false
}
