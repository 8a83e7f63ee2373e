package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/linerpc/linerpc/internal/wire"
)

// Reading is a role: one goroutine at a time reads the input, frame by
// frame (see worker.go). A frame's trip, straight down:
//
//	framer.next          the next frame, or a frame skipped (too long)
//	  reader.parse       validate, classify, find the handler, decode params
//	    settle           a response: its call takes its turn in the line
//	    preempt          a notification a preempter claims (cancellation)
//	    queue            a request or notification: its place in the line
//	    reply            a request answered at once (method not found,
//	                     invalid params, overloaded)
//	    drop             anything else: reported, never answered
//
// A worker that reads blocks only on the input, and on room in a bounded
// queue (the line, for a notification; the write queue, for a reply of
// its own): that is the backpressure on a peer that sends without
// reading. A caller that reads (call.go) handles responses only: any
// other frame it leaves, unread, to a worker, so that a user's goroutine
// never does the peer's work nor waits for room.

// read reads frames and does what each asks, for the goroutine that holds
// the reading role (me: a caller's call; nil for a worker), until that
// goroutine has something else to do. A worker returns the request or
// notification it read whose turn had come, to run it, having lent the
// reading role (see queue); or nil, having lent the role to the lone
// caller whose response it delivered (see settle). A caller returns once
// its own response was read, or when a frame is not a response. Either
// returns when the input ends or the Conn closes. It is called and
// returns without the lock, the reading role lent or released.
func (c *Conn) read(me *call) *job {
	rd := &c.rd
	for {
		in := rd.in
		if rd.pending {
			rd.pending = false
		} else {
			if me == nil && !c.framer.buffered() && !c.writeDeferred() {
				return nil // the role was taken while this worker wrote
			}
			var err error
			in, err = c.framer.next()
			if c.ctx.Err() != nil {
				c.lock()
				c.stopReading(&c.st, me) // closed: the Conn's error says why
				c.unlock()
				return nil
			}
			if err != nil {
				if in.size > 0 {
					c.drop(Drop{Reason: DropUnterminated, Size: in.size})
				}
				c.lock()
				s := &c.st
				s.reading = readOver
				c.admitEnd(s, inputError(err))
				c.stopReading(s, me)
				c.unlock()
				return nil
			}
		}
		if me != nil {
			if stop := c.readAsCaller(rd, in, me); stop {
				return nil
			}
			continue
		}
		if in.skipped {
			c.skipped(in)
			continue
		}
		if in.warning != nil {
			c.framingWarning(in.warning)
		}
		if j, stop := c.dispatch(rd, in.body); stop {
			return j
		}
	}
}

// readAsCaller handles the frame in for the caller whose call is me: a
// response settles its call, any other frame is left to a worker. It
// reports stop, with the reading role released, when me was settled or a
// frame was left.
func (c *Conn) readAsCaller(rd *reader, in inFrame, me *call) (stop bool) {
	if !in.skipped {
		rd.responsesOnly = true
		m := rd.parse(in.body)
		rd.responsesOnly = false
		switch m.kind {
		case msgBlank:
			return false
		case msgResponse:
			if pc, _ := c.settle(m.env, me, false); pc != me {
				if pc == nil {
					c.drop(m.dropAs(DropUnmatchedResponse))
				}
				return false
			}
			return true
		}
	}
	rd.in, rd.pending = in, true
	c.lock()
	s := &c.st
	if s.reading == readHeld && (s.phase == phaseOpen || s.phase == phaseDraining) {
		s.reading = readLeft // for a worker, woken for it
	}
	c.stopReading(s, me)
	c.unlock()
	return true
}

// stopReading releases the reading role, which the goroutine of me (nil:
// a worker) held, unless it was passed on already: a caller lends it, as
// it is likely to call again (lend); once the Conn no longer reads, it is
// over. (A worker stops reading only then, or having passed the role on.)
// Called under the lock.
func (c *Conn) stopReading(s *state, me *call) {
	switch {
	case s.reading != readHeld:
	case s.phase != phaseOpen && s.phase != phaseDraining:
		s.reading = readOver
	default:
		c.lend(s, nil)
	}
	if me == nil {
		s.out.claimWriter() // what this worker queued without writing
	}
	if s.phase == phaseClosed && c.readDeadline != nil {
		c.readDeadline.SetReadDeadline(time.Time{}) // give the stream back as it was
	}
	if me != nil {
		s.goroutines--
	}
}

// inputError is the reason the end of the input, or its failure, gives
// the Conn.
func inputError(err error) error {
	if errors.Is(err, io.EOF) {
		return ErrInputEnded
	}
	return fmt.Errorf("rpc: reading input: %w", err)
}

// dispatch does what the frame raw asks, for a worker that reads. It
// reports stop when the worker is to stop reading, having lent the
// reading role: with j, the handler whose turn came, to run; or having
// lent it to a lone caller (see settle).
func (c *Conn) dispatch(rd *reader, raw []byte) (j *job, stop bool) {
	m := rd.parse(raw)
	switch m.kind {
	case msgDrop:
		c.drop(m.dropReport())
	case msgResponse:
		pc, lent := c.settle(m.env, nil, !rd.inArray)
		if pc == nil {
			c.drop(m.dropAs(DropUnmatchedResponse))
		}
		return nil, lent
	case msgPreempted:
		if reason, err := c.preempt.preempt(c, m.env.Params.Raw); reason != 0 {
			d := m.dropAs(reason)
			d.Method, d.Err = string(m.method), err
			c.drop(d)
		}
	case msgAnswer:
		if m.drop != 0 {
			c.drop(m.dropReport())
		}
		f := c.errorFrame(m.id, string(m.method), m.reply)
		if rd.batch != nil {
			rd.batch.expect()
			array, last := rd.batch.answered(c, m.id, f)
			c.sendBatch(array, last, fromReadLoop)
		} else {
			c.reply(f, fromReadLoop)
		}
	case msgNotification, msgRequest:
		return c.queue(rd, &m)
	case msgBatch:
		c.dispatchBatch(rd, m)
	}
	return nil, false
}

// queue places the request or notification m in the line, or answers or
// drops it. When its turn has come (or another's), the worker that read it
// takes it and lends the reading role (lend): it reports stop, with the
// job to run, and reads on once it has returned; what the peer wrote
// meanwhile waits for it, or, when it runs long, for the follower the
// watchdog wakes. An Async handler is one that waits: the role is freed
// for a follower at once rather than lent (but for an Async notification
// past the cap of handlers alive, whose yield is refused: it holds the
// line, and is lent the role as any handler is). A notification that finds the
// line full waits for room, holding the reading back (the backpressure
// rule).
func (c *Conn) queue(rd *reader, m *message) (*job, bool) {
	var id []byte
	if m.kind == msgRequest {
		id = m.env.ID.Raw
	}
	j := newJob(c, m.entry, m.entry.nameOr(m.method), id, m.t, int(m.size))
	if id != nil && rd.batch != nil {
		j.batch = rd.batch
		j.batch.expect() // before it may run and answer
	}
	c.lock()
	s := &c.st
	a := c.admit(s, j)
	if a == full {
		c.await(&s.changed, nil, func(s *state) bool {
			a = c.admit(s, j)
			return a != full
		})
	}
	if a == admitted {
		if rd.batch == nil && s.line.ready.len() > 0 && s.reading == readHeld {
			next := s.line.ready.pop()
			if next.state == yielded { // Async, under the cap: it waits
				s.reading = readFree // to a follower (staff)
				s.out.claimWriter()
			} else {
				c.lend(s, next)
			}
			c.unlock()
			return next, true
		}
		c.unlock()
		return nil, false
	}
	c.unlock()
	j.discard()
	switch a {
	case overloaded:
		c.answerJob(j, overloadError, fromReadLoop)
	case late:
		c.unanswered(j, fromReadLoop)
		d := m.dropAs(DropShutdown)
		d.Method = j.req.Method
		c.drop(d)
	default: // refused: the Conn is closed
		c.unanswered(j, fromReadLoop)
	}
	return nil, false
}

// overloadError answers a request that found no room in the line, or
// whose turn came with as many handlers alive as the cap lets be.
var overloadError = &Error{Code: CodeOverloaded, Message: "server overloaded: too many requests in progress"}

// settle hands the response env to the call it answers, which takes its
// turn in the line: delivered at once, or once the entries before it have
// yielded. It returns the call, or nil when none awaits the response. Ids
// match by JSON type and value (wire.IntegerID): this side sends integer
// ids, so a string id never matches, and a number matches when it denotes
// the same integer (5, 5.0 and 5e0 alike, as JavaScript peers compare
// them).
//
// A worker that delivers the response of a lone call, whose caller may
// read, lends it the reading role (lend; mayHandOver: not inside an
// array), and reports lent: the caller, back for its next call, reads its
// own response then, with no hand-off, and the watchdog gives the role to
// a worker if it does not come back.
func (c *Conn) settle(env *wire.Envelope, me *call, mayHandOver bool) (pc *call, lent bool) {
	n, ok := wire.IntegerID(env.ID)
	if !ok || n <= 0 {
		return nil, false
	}
	c.lock()
	s := &c.st
	if pc = s.calls[uint64(n)]; pc == nil {
		c.mu.Unlock() // nothing changed
		return nil, false
	}
	delete(s.calls, uint64(n))
	now := c.admitResponse(s, pc)
	release := pc == me
	lent = !release && mayHandOver && now && pc.mayRead && len(s.calls) == 0
	filled := !now || release || lent
	if filled {
		// Before the lock is let go: a response waiting for its turn may
		// be delivered by another goroutine then; and once the reading
		// role is let go, another reader may overwrite env's bytes.
		pc.fill(env)
	}
	switch {
	case release:
		c.stopReading(s, me)
	case lent:
		c.lend(s, nil)
	}
	c.unlock()
	if now {
		if !filled {
			pc.fill(env)
		}
		pc.done <- struct{}{}
	}
	return pc, lent
}

// skipped acts on a frame the framer skipped as too long: it is reported,
// and when its first bytes show a response to a call of this side's (peers
// write the id early), that call fails with ErrFrameTooLarge rather than
// wait for a response that will never be read.
func (c *Conn) skipped(in inFrame) {
	if in.malformed != nil {
		c.refuse(Drop{Reason: DropBadHeader, Line: in.prefix, Size: in.size, Err: in.malformed}, invalidError(DropBadHeader, in.malformed, nil))
		return
	}
	if wire.MethodInPrefix(in.prefix) {
		// A request or a notification: under Options.AnswerInvalid it is
		// answered. Nothing else is, as its first bytes cannot show that
		// it is not a response, which must never be answered.
		c.refuse(Drop{Reason: DropOversize, Size: in.size}, errOversize)
		return
	}
	c.drop(Drop{Reason: DropOversize, Size: in.size})
	id, ok := wire.ResponseIDInPrefix(in.prefix)
	if !ok {
		return
	}
	n, ok := wire.IntegerID(id)
	if !ok || n <= 0 {
		return
	}
	c.lock()
	s := &c.st
	pc := s.calls[uint64(n)]
	if pc == nil {
		c.mu.Unlock() // nothing changed
		return
	}
	delete(s.calls, uint64(n))
	pc.err = fmt.Errorf("%w: the response was %d bytes, longer than the %d bytes a frame may have (Options.MaxFrameSize)",
		ErrFrameTooLarge, in.size, c.maxFrameSize)
	if c.admitResponse(s, pc) {
		pc.done <- struct{}{}
	}
	c.unlock()
}

// framingWarning logs a fault of a frame's framing that did not keep it
// from being read: at warning level the first time, at debug level after
// that, so that a peer that makes it on every frame does not flood the log.
func (c *Conn) framingWarning(err error) {
	if c.log == nil {
		return
	}
	level := slog.LevelDebug
	if c.warned.CompareAndSwap(false, true) {
		level = slog.LevelWarn
	}
	c.log.LogAttrs(c.ctx, level, "rpc: frame read despite its header", slog.Any("error", err))
}

// dropReport is the Drop that reports m.
func (m *message) dropReport() Drop {
	d := m.dropAs(m.drop)
	d.Err = m.err
	if m.kind == msgAnswer {
		d.Reply = m.reply
	}
	if m.drop == DropInvalidParams || m.drop == DropUnhandledNotification {
		d.Method = string(m.method)
	}
	return d
}

// dropAs is the Drop that reports m for reason.
func (m *message) dropAs(reason DropReason) Drop {
	return Drop{Reason: reason, Line: m.line, Size: m.size}
}

// parseErrorObject reads a peer's error object leniently: a code that is not
// an integer is missing, a message that is not a string becomes
// "JSON-RPC error", and data is kept verbatim.
func parseErrorObject(v wire.Value) *Error {
	e := &Error{Message: errorMessageFallback, CodeMissing: true}
	if v.Kind != wire.Object {
		return e
	}
	// A map matches member names exactly, as JSON.parse does; struct
	// decoding would match them case-insensitively. Errors are rare, so the
	// allocation does not matter.
	var members map[string]json.RawMessage
	if err := decodeAny(v.Raw, &members); err != nil {
		return e
	}
	code, message, data := members["code"], members["message"], members["data"]
	if k := wire.KindOf(code); k == wire.Number {
		if n, ok := wire.NumberInt64(code); ok {
			e.Code, e.CodeMissing = Code(n), false
		}
	}
	if wire.KindOf(message) == wire.String {
		var msg string
		if err := decode(message, &msg); err == nil {
			e.Message = msg
		}
	}
	if data != nil {
		e.Data = data
	}
	return e
}
