package rpc

import (
	"io"
	"sync"
)

// writer writes whole frames to the Conn's stream, never splitting one
// across writes. Frames that arrive while a Write is in progress queue up
// and go out together in the next Write, so that under load many frames
// cost one system call; frames of one goroutine keep their order.
//
// The goroutine that leads the read loop posts its replies instead of
// writing them: they join the queue and go out when it flushes, before it
// next waits for input, so that a burst of requests is answered with one
// Write.
//
// Errors are sticky, as with bufio.Writer: after a Write fails, no more
// bytes are written, and every frame queued with or after the failed one
// fails with the same error.
type writer struct {
	w io.Writer

	mu       sync.Mutex
	writing  bool          // a goroutine is writing; it also writes what queues meanwhile
	next     []byte        // frames waiting for the next Write
	nextDone chan struct{} // closed once the frames in next are written (or failed)
	spare    []byte        // the buffer of the previous batch, for reuse
	nextGen  uint64        // generation of the frames in next
	closed   bool          // Close was called: nothing more is written
	err      error         // the sticky error: a failed Write, or ErrClosed for frames dropped by Close
	errGen   uint64        // generation the sticky error arose with
	idle     sync.Cond     // signalled when writing ends
}

// maxRetainedBatch bounds the queue buffer kept between bursts.
const maxRetainedBatch = 1 << 20

func (w *writer) init(out io.Writer) {
	w.w = out
	w.nextGen = 1
	w.idle.L = &w.mu
}

// write writes frame, alone or with other queued frames, and returns once
// it has been written.
func (w *writer) write(frame []byte) error {
	w.mu.Lock()
	if err := w.refuse(); err != nil {
		w.mu.Unlock()
		return err
	}
	if w.writing {
		// Queue behind the Write in progress; its writer flushes us. Each
		// batch has a channel of its own, so that a flush wakes only the
		// goroutines whose frames it carried.
		w.next = append(w.next, frame...)
		if w.nextDone == nil {
			w.nextDone = make(chan struct{})
		}
		done, gen := w.nextDone, w.nextGen
		w.mu.Unlock()
		<-done
		w.mu.Lock()
		err := w.outcome(gen)
		w.mu.Unlock()
		return err
	}
	gen := w.nextGen
	if len(w.next) > 0 {
		w.next = append(w.next, frame...) // posted frames go first
	} else {
		// The common case: nothing queued, so write the frame as it is.
		w.nextGen++
		w.writing = true
		w.mu.Unlock()
		_, err := w.w.Write(frame)
		w.mu.Lock()
		w.finish(gen, err, nil)
	}
	w.flushLocked()
	err := w.outcome(gen)
	w.mu.Unlock()
	return err
}

// post queues frame for the next flush and returns at once.
func (w *writer) post(frame []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.refuse(); err != nil {
		return err
	}
	w.next = append(w.next, frame...)
	return nil
}

// pending reports whether frames are queued.
func (w *writer) pending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.next) > 0
}

// kick writes the queued frames unless a Write is in progress, whose writer
// writes them next. The goroutine leading the read loop kicks before it
// waits for input: waiting instead for another writer (blocked, perhaps,
// on a peer that is itself writing) would stop both ends from reading.
func (w *writer) kick() {
	w.mu.Lock()
	if !w.writing {
		w.flushLocked()
	}
	w.mu.Unlock()
}

// flush returns once the frames posted or written so far are out (or have
// failed): it waits for a Write in progress, which may carry some of them,
// and for its writer to write what queued behind it, and writes what is
// left.
func (w *writer) flush() {
	w.mu.Lock()
	for w.writing {
		w.idle.Wait()
	}
	if len(w.next) > 0 {
		w.flushLocked()
	}
	w.mu.Unlock()
}

// flushLocked writes what is queued, batch after batch, until nothing is.
// Called with mu held and writing unset; it unlocks mu around each Write.
func (w *writer) flushLocked() {
	w.writing = true
	for len(w.next) > 0 && w.err == nil && !w.closed {
		batch, gen, done := w.next, w.nextGen, w.nextDone
		w.next, w.spare, w.nextDone = w.spare[:0], nil, nil
		w.nextGen++
		w.mu.Unlock()
		_, err := w.w.Write(batch)
		w.mu.Lock()
		if cap(batch) <= maxRetainedBatch {
			w.spare = batch
		}
		w.finish(gen, err, done)
	}
	if len(w.next) > 0 { // closed or failed: the frames still queued fail
		gen, done := w.nextGen, w.nextDone
		w.next, w.nextDone = w.next[:0], nil
		w.nextGen++
		w.finish(gen, w.refuse(), done)
	}
	w.writing = false
	w.idle.Broadcast()
}

// finish records that generation gen was written, with err, and wakes its
// waiters by closing done. Called with mu held.
func (w *writer) finish(gen uint64, err error, done chan struct{}) {
	if err != nil && w.err == nil {
		w.err, w.errGen = err, gen
	}
	if done != nil {
		close(done)
	}
}

// outcome is the result of the frames of generation gen. Called with mu
// held, after gen is done: the sticky error is theirs if it arose with
// them or before.
func (w *writer) outcome(gen uint64) error {
	if w.err != nil && w.errGen <= gen {
		return w.err
	}
	return nil
}

// refuse returns why no new frame may be written, if any. Called with mu
// held.
func (w *writer) refuse() error {
	if w.closed {
		return ErrClosed
	}
	return w.err
}

// close makes every later write fail with ErrClosed. A Write in progress is
// not waited for: a stalled peer could block it forever.
func (w *writer) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
}
