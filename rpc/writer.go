package rpc

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// writer sends frames to the Conn's stream, whole frames only: a frame is
// never split across Writes, and frames that queue up while a Write is in
// progress go out together in the next one, so that under load many frames
// cost one system call.
//
// The queue is bounded in bytes (Options.MaxWriteQueue). A frame that does
// not fit waits for room; one larger than the whole bound waits until the
// queue is empty and then goes alone. Waiting for room is how the peer's
// reading paces this side: a caller waits with its context; a handler's
// reply waits while its handler slot stays taken; the read loop, which
// writes only the replies that need no handler (method not found, invalid
// params, overloaded), waits before it reads on, so that a peer that sends
// requests and never reads their answers is read no further until it does.
//
// Writes happen on goroutines of the Conn only, never on a caller's: a
// goroutine that queues a frame when no Write is in progress gives the
// writer's role, which lasts until the queue is empty, to the writer's own
// goroutine (see loop) — or takes it, when it is a handler's goroutine
// queueing its reply. So a caller's wait always ends with its context, and
// a frame that no Write has taken yet can be withdrawn.
//
// Errors are sticky, as with bufio.Writer: a failed or short Write ends the
// connection (see Conn.failOutput), and every frame queued then or later
// fails with the same error.
type writer struct {
	w        io.Writer
	maxQueue int // bytes
	timeout  time.Duration
	deadline writeDeadliner // nil when w cannot be interrupted

	mu      sync.Mutex
	queue   []*frame      // waiting for a Write, in order
	queued  int           // bytes in queue
	writing bool          // a goroutine holds the writer's role
	room    chan struct{} // closed when bytes leave the queue; waiters for room wait on it
	idle    chan struct{} // closed when the queue is empty and no Write is in progress
	err     error         // sticky: the write error, or ErrClosed
	stopped chan struct{} // closed when err is set
	batch   []byte        // the buffer in which queued frames are joined, reused
	inWrite bool          // a Write is in progress (for close)
	seq     uint64        // counts the frames queued, to tell them apart (see withdraw)

	// The writer's goroutine: loopAlive says it runs, and wake, buffered,
	// gives it the writer's role. Both change under mu, so that a role
	// given as it decides to exit is never lost.
	loopAlive bool
	wake      chan struct{}
}

// writeDeadliner is implemented by streams whose blocked writes can be
// interrupted (net.Conn, pipes from os.Pipe).
type writeDeadliner interface {
	SetWriteDeadline(t time.Time) error
}

// maxRetainedBatch bounds the batch buffer kept between bursts.
const maxRetainedBatch = 256 << 10

func (w *writer) init(out io.Writer, maxQueue int, timeout time.Duration) {
	w.w, w.maxQueue, w.timeout = out, maxQueue, timeout
	w.stopped = make(chan struct{})
	w.wake = make(chan struct{}, 1)
	if d, ok := out.(writeDeadliner); ok {
		w.deadline = d
	}
}

// enqueue queues f, waiting for room as long as ctx allows (a nil ctx
// waits until the connection closes). It returns once f is queued, with
// the number that withdraw takes: f then belongs to the writer. When a
// Write must be started and self is set, the calling goroutine (one of the
// Conn's) writes it; otherwise the writer's goroutine does. On error, f
// still belongs to the caller.
func (w *writer) enqueue(c *Conn, ctx context.Context, f *frame, self bool) (seq uint64, err error) {
	n := len(f.b)
	w.mu.Lock()
	for w.err == nil && w.queued > 0 && w.queued+n > w.maxQueue {
		if w.room == nil {
			w.room = make(chan struct{})
		}
		room := w.room
		w.mu.Unlock()
		var stop <-chan struct{}
		if ctx != nil {
			stop = ctx.Done()
		}
		select {
		case <-room: // bytes left the queue, or the writer was closed
		case <-stop:
			return 0, ctx.Err()
		}
		w.mu.Lock()
	}
	if err := w.err; err != nil {
		w.mu.Unlock()
		return 0, err
	}
	w.seq++
	seq, f.seq = w.seq, w.seq
	w.queue = append(w.queue, f)
	w.queued += n
	start := !w.writing
	w.writing = true
	if start && !self {
		w.handOff(c)
	}
	w.mu.Unlock()
	if start && self {
		w.flush(c)
	}
	return seq, nil
}

// push queues f without waiting for room, for the small frames that must
// not wait (a cancel notification: see Conn.sendCancel). On error, f still
// belongs to the caller.
func (w *writer) push(c *Conn, f *frame) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.seq++
	f.seq = w.seq
	w.queue = append(w.queue, f)
	w.queued += len(f.b)
	if !w.writing {
		w.writing = true
		w.handOff(c)
	}
	return nil
}

// handOff gives the writer's role to the writer's goroutine, starting it if
// it does not run. Called with mu held, by the role's holder.
func (w *writer) handOff(c *Conn) {
	if w.loopAlive {
		w.wake <- struct{}{} // never blocks: only the role's holder sends
		return
	}
	w.loopAlive = true
	c.running.Add(1)
	go w.loop(c)
}

// writeOwn writes a caller's frame on the caller's goroutine, when nothing
// is queued or being written and the stream has a write deadline (so that
// Close can interrupt the Write); it reports false, having done nothing,
// otherwise. Frames that queue up meanwhile go to the writer's goroutine:
// a caller writes nothing but its own frame. It spares a lone call or
// notification two goroutine switches.
func (w *writer) writeOwn(c *Conn, f *frame) (ok bool, err error) {
	w.mu.Lock()
	if w.deadline == nil || w.writing || len(w.queue) > 0 || w.err != nil || len(f.b) > w.maxQueue {
		w.mu.Unlock()
		return false, nil
	}
	w.writing, w.inWrite = true, true
	w.mu.Unlock()

	err = w.write(c, f.b)

	w.mu.Lock()
	w.inWrite = false
	if w.timeout > 0 || w.err == ErrClosed {
		w.deadline.SetWriteDeadline(time.Time{}) // give the stream back as it was
	}
	if err != nil {
		w.fail(err)
	}
	if len(w.queue) > 0 {
		w.handOff(c) // it writes them, or fails them
	} else {
		w.writing = false
		if w.idle != nil {
			close(w.idle)
			w.idle = nil
		}
	}
	w.mu.Unlock()
	if err != nil {
		c.failOutput(err)
	}
	return true, err
}

// loop is the writer's goroutine: it flushes whenever it is given the
// writer's role, and exits once it has been idle for idleTimeout, or when
// reading has ended or writing has stopped (a later frame starts it again).
// It is kept between flushes so that its stack, grown for the Write, is not
// grown anew for every frame.
func (w *writer) loop(c *Conn) {
	defer c.running.Done()
	idle := time.NewTimer(idleTimeout)
	defer idle.Stop()
	for {
		w.flush(c) // the role came with the start or the wake
		idle.Reset(idleTimeout)
		select {
		case <-w.wake:
			continue
		case <-idle.C:
		case <-c.readDone:
		case <-w.stopped:
		}
		w.mu.Lock()
		select {
		case <-w.wake: // given the role as it was about to exit
			w.mu.Unlock()
			continue
		default:
		}
		w.loopAlive = false
		w.mu.Unlock()
		return
	}
}

// withdraw removes the frame f queued as seq, if no Write has taken it
// yet, and reports whether it did; f then belongs to the caller again. The
// number tells f from the same pooled frame queued again by someone else
// after it was written.
func (w *writer) withdraw(f *frame, seq uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, q := range w.queue {
		if q == f && q.seq == seq {
			copy(w.queue[i:], w.queue[i+1:])
			w.queue[len(w.queue)-1] = nil
			w.queue = w.queue[:len(w.queue)-1]
			w.queued -= len(f.b)
			w.freeRoom()
			return true
		}
	}
	return false
}

// flush writes what is queued, batch after batch, until the queue is empty
// or writing has failed; the caller holds the writer's role, and gives it
// up here.
func (w *writer) flush(c *Conn) {
	w.mu.Lock()
	for len(w.queue) > 0 && w.err == nil {
		frames := w.queue
		var out []byte
		if len(frames) == 1 {
			out = frames[0].b
		} else {
			out = w.batch[:0]
			for _, f := range frames {
				out = append(out, f.b...)
			}
		}
		w.queue = w.queue[len(w.queue):] // keeps the storage: frames stays intact for below
		w.inWrite = true
		w.mu.Unlock()

		err := w.write(c, out)

		w.mu.Lock()
		w.inWrite = false
		if w.deadline != nil && (w.timeout > 0 || w.err == ErrClosed) {
			w.deadline.SetWriteDeadline(time.Time{}) // give the stream back as it was
		}
		if len(frames) > 1 && cap(out) <= maxRetainedBatch {
			w.batch = out
		}
		w.queued -= len(out)
		if err != nil {
			w.fail(err)
		}
		for i, f := range frames {
			putFrame(f)
			frames[i] = nil
		}
		if len(w.queue) == 0 {
			w.queue = frames[:0]
		}
		w.freeRoom()
		if err != nil {
			w.mu.Unlock()
			c.failOutput(err)
			w.mu.Lock()
		}
	}
	// Closed or failed: what is still queued fails with the same error.
	for _, f := range w.queue {
		w.queued -= len(f.b)
		putFrame(f)
	}
	clear(w.queue)
	w.queue = w.queue[:0]
	w.writing = false
	if w.idle != nil {
		close(w.idle)
		w.idle = nil
	}
	w.freeRoom()
	w.mu.Unlock()
}

// write makes one Write of b. Under a write timeout, a stream with a write
// deadline has it set; on any other, the connection is ended when the
// timeout passes (the Write itself goes on until it returns). A short
// write is an error, as it is for bufio.Writer.
func (w *writer) write(c *Conn, b []byte) error {
	if w.timeout > 0 {
		if w.deadline != nil {
			w.deadline.SetWriteDeadline(time.Now().Add(w.timeout))
		} else {
			t := time.AfterFunc(w.timeout, func() { c.failOutput(ErrWriteTimeout) })
			defer t.Stop()
		}
	}
	n, err := w.w.Write(b)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	if err != nil && w.timeout > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		err = ErrWriteTimeout
	}
	return err
}

// fail makes err the sticky error, unless there is one. Called with mu
// held.
func (w *writer) fail(err error) {
	if w.err == nil {
		w.err = err
		close(w.stopped)
	}
	w.freeRoom()
}

// freeRoom wakes the goroutines waiting for room. Called with mu held.
func (w *writer) freeRoom() {
	if w.room != nil {
		close(w.room)
		w.room = nil
	}
}

// drain returns a channel closed once nothing is queued or being written
// (or writing has failed).
func (w *writer) drain() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.writing && len(w.queue) == 0 {
		return closedChan
	}
	if w.idle == nil {
		w.idle = make(chan struct{})
	}
	return w.idle
}

// close fails every frame queued from now on with ErrClosed, and
// interrupts a Write in progress when the stream can be interrupted. A
// Write that cannot be is not waited for: a stalled peer could block it
// forever.
func (w *writer) close() {
	w.mu.Lock()
	w.fail(ErrClosed)
	if w.inWrite && w.deadline != nil {
		// Under mu, so that flush, which resets the deadline once the
		// Write returns, does so after this.
		w.deadline.SetWriteDeadline(time.Now())
	}
	w.freeRoom()
	w.mu.Unlock()
}

var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()
