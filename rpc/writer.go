package rpc

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"
)

// The writer sends frames to the Conn's output, whole frames only: a frame
// is never split across Writes, and frames that queue up while a Write is
// in progress go out together in the next one, so that under load many
// frames cost one system call.
//
// The queue is bounded in bytes (Options.MaxWriteQueue). A frame that does
// not fit waits for room; one larger than the whole bound waits until the
// queue is empty and then goes alone. Waiting for room is how the peer's
// reading paces this side; who waits, and who writes, depends on who sends
// (see sender).
//
// One goroutine at a time holds the writing role: it writes batch after
// batch until the queue is empty, then gives the role up. A goroutine that
// queues a frame when nobody holds the role takes it if it may block in a
// Write; otherwise the role is wanted, and a worker takes it (staff). So a
// caller's wait always ends with its context, and a frame that no Write
// has taken yet can be withdrawn.
//
// A failed or short Write ends the connection (phaseClosed, with the write
// error); the frames queued then or later are dropped.
type outbox struct {
	max     int      // MaxWriteQueue
	frames  []*frame // waiting for a Write, in order
	writes  []*frame // the frames of the Write in progress; frames' twin storage, so that neither grows again once warm
	bytes   int      // in frames
	seq     uint64   // counts the frames queued, to tell them apart (see withdraw)
	writing bool     // the writing role is held, or wanted
	wanted  bool     // the role is a worker's to take (staff)
	room    signal   // broadcast when bytes leave the queue, or it closes
	batch   []byte   // where queued frames are joined; the role holder's
}

// sender says who sends a frame: how it waits for room in the queue, and
// whether its goroutine may block in a Write.
type sender uint8

const (
	// fromCaller: a call or a notification of a user's goroutine. It waits
	// for room with its context and never writes, but for one case: a
	// lone call or notification, when nothing is queued or being written,
	// whose context cannot end, on a stream that Close can interrupt
	// (SetWriteDeadline), writes its own frame: that spares it a goroutine
	// hand-off and it can still only end by Close.
	fromCaller sender = iota
	// fromHandler: a reply, from the goroutine that ran its handler. It
	// waits for room while the Conn lives, its handler counted alive (that
	// is the backpressure on the peer's requests), and writes the queue
	// itself when nobody does.
	fromHandler
	// fromReadLoop: a reply the reader makes on its own (method not
	// found, invalid params, overloaded). It waits for room while the Conn
	// lives, and reads on only then: a peer that sends requests without
	// reading the replies is read no further until it reads. It never
	// writes: a reader blocked in a Write could not read the input that
	// the peer's own blocked Write is waiting to deliver.
	fromReadLoop
	// fromPolicy: a frame that must not wait, such as the cancel
	// notification of a call whose context has ended, or an answer the
	// line gives on its own. It may pass the bound by its size.
	fromPolicy
)

func (o *outbox) empty() bool { return len(o.frames) == 0 && !o.writing }

// fits reports whether a frame of n bytes fits the queue now.
func (o *outbox) fits(n int) bool { return o.bytes == 0 || o.bytes+n <= o.max }

// push queues f and returns its number.
func (o *outbox) push(f *frame) uint64 {
	o.seq++
	f.seq = o.seq
	o.frames = append(o.frames, f)
	o.bytes += len(f.b) - f.off
	return f.seq
}

// dropAll drops the queued frames: the Conn closed.
func (o *outbox) dropAll() {
	for i, f := range o.frames {
		putFrame(f)
		o.frames[i] = nil
	}
	o.frames = o.frames[:0]
	o.bytes = 0
	o.wanted = false
	o.room.broadcast()
}

// send queues the sealed frame f, as way says (see sender), and sees it
// written. stop is a caller's context's Done channel. It returns f's
// number for withdraw, once f is queued (f then belongs to the writer), or
// why it was not: the Conn's error once it is closed, or errStopped when
// stop was closed first (f is then still the caller's).
func (c *Conn) send(f *frame, way sender, stop <-chan struct{}) (uint64, error) {
	return c.sendWith(f, way, stop, nil)
}

// errStopped says a frame's sender stopped waiting for room.
var errStopped = errors.New("rpc: stopped waiting for room in the write queue")

// sendWith is send, with before (when set) applied to the state under the
// same lock as the frame is queued; an error from it is returned as is,
// and nothing is queued.
func (c *Conn) sendWith(f *frame, way sender, stop <-chan struct{}, before func(s *state) error) (uint64, error) {
	c.lock()
	seq, write, err := c.enqueue(&c.st, f, way, stop, before)
	if write {
		c.flushLocked(way == fromCaller) // it unlocks
	} else {
		c.unlock()
	}
	return seq, err
}

// enqueue queues the sealed frame f, as way says, under the lock: it waits
// for the framing to be chosen (DetectFraming) and for room, with stop,
// letting the lock go while it waits; before, when set, is applied to the
// state as f is queued. It returns f's number, and write when the calling
// goroutine took the writing role, to write the queue now.
func (c *Conn) enqueue(s *state, f *frame, way sender, stop <-chan struct{}, before func(s *state) error) (seq uint64, write bool, err error) {
	if f.unsealed {
		// The framing is not chosen yet: wait for the peer's first bytes,
		// as for room. A call (the only sender with before) cannot be
		// sent before Start: it would wait for a choice that only reading
		// can make.
		if s.phase == phaseNew && before != nil {
			return 0, false, ErrNotStarted
		}
		if !c.await(&s.changed, stop, func(s *state) bool { return s.phase == phaseClosed || c.Framing() != DetectFraming }) {
			return 0, false, errStopped
		}
		if s.phase != phaseClosed {
			f.unsealed = false
			c.framer.seal(f)
		}
	}
	n := len(f.b) - f.off
	if way != fromPolicy && !c.await(&s.out.room, stop, func(s *state) bool { return s.phase == phaseClosed || s.out.fits(n) }) {
		return 0, false, errStopped
	}
	if s.phase == phaseClosed {
		return 0, false, s.err
	}
	if before != nil {
		if err := before(s); err != nil {
			return 0, false, err
		}
	}
	seq = s.out.push(f)
	if s.out.writing {
		return seq, false, nil
	}
	s.out.writing = true
	switch {
	case way == fromHandler:
		return seq, true, nil
	case way == fromCaller && stop == nil && c.writeDeadline != nil && len(s.out.frames) == 1 && len(s.calls) <= 1:
		s.goroutines++ // Wait waits for the caller's Write as for a worker's (flushLocked)
		return seq, true, nil
	}
	s.out.wanted = true
	return seq, false, nil
}

// queueNow queues f under the lock for a sender that must not wait
// (fromPolicy), and leaves the writing to a worker.
func (c *Conn) queueNow(s *state, f *frame) {
	if s.phase == phaseClosed {
		putFrame(f)
		return
	}
	s.out.push(f)
	if !s.out.writing {
		s.out.writing, s.out.wanted = true, true
	}
}

// A worker that reads, and runs handlers in turn as it reads them, queues
// their answers without writing while more input is buffered (see
// answer): frames wait in the queue with no writer, at most maxDeferred
// of them. Every way out of that state has them written: the worker
// writes them itself before it waits for input (writeDeferred); whoever
// takes the role from it (a caller, or a follower the watchdog wakes),
// a watchdog tick, and the worker's own wait for room (await) each have a
// writer woken for them (claimWriter).

// maxDeferred bounds the answers that wait for the worker that reads to
// write them: past it, an answer is written at once.
const maxDeferred = 64

// claimWriter has a worker write the frames queued with no writer, if
// any, and reports whether there were; staff (unlock) wakes it. Called
// under the lock when the reading role leaves the worker that queued them,
// when that worker waits (await), and at each tick of the watchdog.
func (o *outbox) claimWriter() bool {
	if len(o.frames) > 0 && !o.writing {
		o.writing, o.wanted = true, true
		return true
	}
	return false
}

// writeDeferred writes the frames queued with no writer, for the worker
// that reads, before it waits for input. It lends the reading role for as
// long as it writes (a Write can block), and takes it back after, unless
// someone took it meanwhile; it reports whether it still holds the role.
func (c *Conn) writeDeferred() bool {
	c.lock()
	s := &c.st
	if len(s.out.frames) == 0 || s.out.writing {
		c.mu.Unlock() // nothing changed
		return true
	}
	s.out.writing = true
	c.lend(s, nil)
	lend := s.lends
	c.flushLocked(false) // it unlocks
	c.lock()
	held := s.reading == readLent && s.lends == lend
	if held {
		s.reading = readHeld // taken back: read on
	}
	c.unlock()
	return held
}

// reply queues a response of a handler's or of the reader's. The peer
// learns nothing of a failure; it is logged.
func (c *Conn) reply(f *frame, way sender) {
	if _, err := c.send(f, way, nil); err != nil {
		c.replyFailed(f, err)
	}
}

// replyFailed releases a response that could not be queued, and logs why.
func (c *Conn) replyFailed(f *frame, err error) {
	putFrame(f)
	if c.log != nil && !errors.Is(err, ErrClosed) {
		c.log.Error("rpc: writing a response failed", slog.String("error", err.Error()))
	}
}

// maxRetainedFrames bounds the storage of the Write in progress kept
// between bursts. The buffer that joins queued frames (outbox.batch) is
// kept up to the queue's bound, so that a stream of frames joins them in
// place burst after burst, and let go when the Conn is idle (see exit).
const maxRetainedFrames = 1024

// flushLocked writes what is queued, batch after batch, until the queue
// is empty or the Conn closed, for the goroutine that holds the writing
// role, and then gives the role up; a caller writes one batch only (its
// own frame), and leaves the rest to a worker. Called with the lock held;
// it releases it.
func (c *Conn) flushLocked(caller bool) {
	s := &c.st
	o := &s.out
	for batches := 0; ; batches++ {
		if len(o.frames) == 0 || s.phase == phaseClosed {
			o.writing = false
			if s.phase == phaseClosed && c.writeDeadline != nil {
				c.writeDeadline.SetWriteDeadline(time.Time{}) // Close may have set one
			}
			break
		}
		if caller && batches == 1 {
			// Frames came while the caller wrote: a worker takes the
			// role over, since a caller writes nothing but its own frame.
			o.wanted = true
			break
		}
		// The two storages trade places: frames queued during the Write go
		// to the other one, and neither is allocated again once warm (but a
		// burst's, see maxRetainedFrames).
		frames := o.frames
		o.frames, o.writes = o.writes[:0], frames
		var out []byte
		if len(frames) == 1 {
			out = frames[0].b[frames[0].off:]
		} else {
			out = o.batch[:0]
			for _, f := range frames {
				out = append(out, f.b[f.off:]...)
			}
		}
		if c.writeTimeout > 0 && c.writeDeadline != nil {
			// Under the lock, as Close sets its own (now) under it: this one
			// cannot come after it and undo it.
			c.writeDeadline.SetWriteDeadline(time.Now().Add(c.writeTimeout))
		}
		c.unlock()

		err := c.write(out)

		c.lock()
		if c.writeDeadline != nil && (c.writeTimeout > 0 || s.phase == phaseClosed) {
			c.writeDeadline.SetWriteDeadline(time.Time{}) // give the stream back as it was
		}
		if len(frames) > 1 && cap(out) <= max(o.max, 64<<10) {
			o.batch = out
		}
		if s.phase != phaseClosed {
			o.bytes -= len(out)
		}
		for i, f := range frames {
			putFrame(f)
			frames[i] = nil
		}
		if cap(frames) > maxRetainedFrames {
			o.writes = nil // a burst's storage is not kept
		}
		o.room.broadcast()
		if err != nil {
			c.setPhase(s, phaseClosed, writeError(err))
		}
	}
	if caller {
		s.goroutines--
	}
	c.unlock()
}

// writeError is the reason a failed Write gives the connection.
func writeError(err error) error {
	if err == ErrWriteTimeout {
		return err
	}
	return fmt.Errorf("rpc: writing output: %w", err)
}

// write makes one Write of b. Under a write timeout, a stream with a write
// deadline has it set already (see flushLocked); on any other, the
// connection is closed when the timeout passes (the Write itself goes on
// until it returns). A short write is an error, as it is for bufio.Writer.
func (c *Conn) write(b []byte) error {
	if c.writeTimeout > 0 && c.writeDeadline == nil {
		t := time.AfterFunc(c.writeTimeout, func() {
			c.update(func(s *state) { c.setPhase(s, phaseClosed, ErrWriteTimeout) })
		})
		defer t.Stop()
	}
	n, err := c.w.Write(b)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	if err != nil && c.writeTimeout > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		err = ErrWriteTimeout
	}
	return err
}

// withdraw removes the frame f queued as seq, if no Write has taken it
// yet, and reports whether it did; f then belongs to the caller again. The
// number tells f from the same pooled frame queued again by someone else
// after it was written. Called under the lock.
func (o *outbox) withdraw(f *frame, seq uint64) bool {
	for i, q := range o.frames {
		if q == f && q.seq == seq {
			copy(o.frames[i:], o.frames[i+1:])
			o.frames[len(o.frames)-1] = nil
			o.frames = o.frames[:len(o.frames)-1]
			o.bytes -= len(f.b) - f.off
			o.room.broadcast()
			return true
		}
	}
	return false
}
