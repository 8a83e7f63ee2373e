package rpc

import (
	"sync"
	"time"
)

// The goroutines of a Conn take turns at two jobs: leading the read loop,
// and serving requests. One goroutine leads at a time; when it reads a
// request and nothing else is buffered, it hands the lead to another
// goroutine and serves the request itself, so that a request reaches its
// handler on the goroutine that read it, with its stack already grown. A
// goroutine with nothing to do waits, idle, for the next job, and exits
// after idleTimeout without one. All of them exit once the connection has
// ended and their handlers have returned (see Conn.Wait).

// idleTimeout is how long a goroutine of the Conn waits for work before it
// exits. Keeping goroutines (and their grown stacks) across bursts of
// requests is what makes a burst cheap; letting them go after a quiet
// spell is what keeps an idle connection small.
const idleTimeout = 2 * time.Second

// job is what a goroutine of the Conn is asked to do: lead the read loop
// (reader set) or serve a request (task set).
type job struct {
	reader *reader
	task   task
}

// task is a decoded request, waiting for or holding a handler slot.
type task interface {
	run(c *Conn)
	discard() // releases a task that will never run
}

// workers bounds the number of requests served at once. Requests beyond
// the bound queue in arrival order; a goroutine that finishes a request
// takes the next queued one with the same slot.
type workers struct {
	jobs chan job // unbuffered: a send succeeds only into an idle goroutine

	mu      sync.Mutex
	max     int // handler slots
	active  int // slots in use
	queue   []task
	head    int
	dropped bool // Close was called: queued and new requests are discarded
	// draining is set by Shutdown: requests read from then on are not
	// served; drained is closed when the last slot is released.
	draining bool
	drained  chan struct{}
}

func (w *workers) init(max int) {
	w.max = max
	w.jobs = make(chan job)
}

// admission is what acquire did with a task.
type admission uint8

const (
	admitted     admission = iota // it holds a handler slot: run it
	admittedIdle                  // the same, and no other handler was running
	queued                        // it waits for a slot
	refused                       // discarded: Close or Shutdown came first
)

// acquire takes a handler slot for t, or queues t, or discards it after
// Close or Shutdown.
func (w *workers) acquire(t task) admission {
	w.mu.Lock()
	if w.dropped || w.draining {
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
	idle := w.active == 1
	w.mu.Unlock()
	if idle {
		return admittedIdle
	}
	return admitted
}

// next returns the next queued task for a slot that just finished one, or
// releases the slot and returns nil.
func (w *workers) next() task {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.head == len(w.queue) || w.dropped {
		w.active--
		if w.active == 0 && w.drained != nil {
			close(w.drained)
			w.drained = nil
		}
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
	if w.active == 0 {
		done := make(chan struct{})
		close(done)
		return done
	}
	if w.drained == nil {
		w.drained = make(chan struct{})
	}
	return w.drained
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

// handOff gives j to an idle goroutine of the Conn, or to a new one.
func (c *Conn) handOff(j job) {
	select {
	case c.workers.jobs <- j:
	default:
		c.running.Add(1) // the caller is a counted goroutine: see Wait
		go c.work(j)
	}
}

// work is the body of every goroutine of the Conn.
func (c *Conn) work(j job) {
	defer c.running.Done()
	var idle *time.Timer // made on first use: a goroutine that leads until the end needs none
	for {
		t := j.task
		if j.reader != nil {
			if t = c.lead(j.reader); t == nil {
				return // reading has ended
			}
		}
		for t != nil {
			t.run(c)
			t = c.workers.next()
		}
		if idle == nil {
			idle = time.NewTimer(idleTimeout)
		}
		var ok bool
		if j, ok = c.awaitJob(idle); !ok {
			return
		}
	}
}

// awaitJob waits, idle, for the next job; it reports false when the
// goroutine should exit instead: enough others are idle, or the connection
// has ended, after which no job is handed off.
func (c *Conn) awaitJob(idle *time.Timer) (job, bool) {
	idle.Reset(idleTimeout)
	defer idle.Stop()
	select {
	case j := <-c.workers.jobs:
		return j, true
	case <-c.done:
	case <-idle.C:
	}
	return job{}, false
}
