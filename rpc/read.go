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

// readLoop reads the input frame by frame, until it ends or the Conn
// closes. A frame's trip, straight down:
//
//	framer.next          the next frame, or a frame skipped (too long)
//	  reader.parse       validate, classify, find the handler, decode params
//	    settle           a response: the call it answers is settled
//	    preempt          a notification a preempter claims (cancellation)
//	    admitNote        a notification: queued for the notification runner
//	    admit            a request: started, waiting for a slot, held behind
//	                     an exclusive request, or answered CodeOverloaded
//	    reply            a request answered at once (method not found,
//	                     invalid params, overloaded), from the read loop
//	    drop             anything else: reported, never answered
//
// It blocks only on the input, and on room in a bounded queue (the
// notification queue, the write queue for a reply of its own): nothing a
// caller does can stop it, and it never runs a handler.
func (c *Conn) readLoop() {
	rd := &reader{preempt: c.preempt, reg: c.reg, batches: c.batches}
	rd.scanner.LazyParams = true // typed handlers' decoders check params (see parse.go)
	var err error
	for {
		var in inFrame
		in, err = c.framer.next()
		if c.ctx.Err() != nil {
			err = nil // closed: the Conn's error says why
			break
		}
		if err != nil {
			if in.size > 0 {
				c.drop(Drop{Reason: DropUnterminated, Size: in.size})
			}
			break
		}
		if in.skipped {
			c.skipped(in)
			continue
		}
		if in.warning != nil {
			c.framingWarning(in.warning)
		}
		c.dispatch(rd, in.body)
	}
	c.update(func(s *state) {
		s.reading = false
		s.goroutines--
		switch {
		case s.phase == phaseClosed:
			if c.readDeadline != nil {
				c.readDeadline.SetReadDeadline(time.Time{}) // give the stream back as it was
			}
		case errors.Is(err, io.EOF):
			c.setPhase(s, phaseEnded, ErrInputEnded)
		default:
			c.setPhase(s, phaseEnded, fmt.Errorf("rpc: reading input: %w", err))
		}
	})
}

// dispatch does what one frame asks (see readLoop).
func (c *Conn) dispatch(rd *reader, raw []byte) {
	m := rd.parse(raw)
	switch m.kind {
	case msgDrop:
		c.drop(m.dropReport())
	case msgResponse:
		if !c.settle(m.env) {
			c.drop(m.dropAs(DropUnmatchedResponse))
		}
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
		f := c.errorFrame(m.env.ID.Raw, string(m.method), m.reply)
		if rd.batch != nil {
			rd.batch.expect()
			c.batchAnswered(rd.batch, m.env.ID.Raw, f, fromReadLoop)
		} else {
			c.reply(f, fromReadLoop)
		}
	case msgNotification:
		c.queueNote(m)
	case msgRequest:
		c.queueRequest(rd, m)
	case msgBatch:
		c.dispatchBatch(rd, m)
	}
}

// queueRequest admits the request m to the inbox, or answers or drops it.
func (c *Conn) queueRequest(rd *reader, m message) {
	name := m.entry.nameOr(m.method)
	j := newJob(c, m.entry, name, m.env.ID.Raw, m.t, int(m.size))
	if j.batch = rd.batch; j.batch != nil {
		j.batch.expect() // before it may run and answer
	}
	var a admission
	c.update(func(s *state) { a = c.admit(s, j) })
	switch a {
	case overloaded:
		j.discard()
		c.answerJob(j, overloadError, fromReadLoop)
	case late:
		j.discard()
		c.unanswered(j, fromReadLoop)
		c.drop(m.dropAs(DropShutdown))
	case refused:
		j.discard()
		c.unanswered(j, fromReadLoop)
	}
}

// overloadError answers a request that found the handler slots and the
// waiting room full.
var overloadError = &Error{Code: CodeOverloaded, Message: "server overloaded: too many requests in progress"}

// queueNote queues the notification m for the notification runner, waiting
// for room in its queue while the Conn lives (the backpressure rule).
func (c *Conn) queueNote(m message) {
	n := note{t: m.t, method: m.entry.nameOr(m.method), size: int(m.size)}
	c.lock()
	for {
		a, ok := c.admitNote(&c.st, n)
		if !ok {
			changed := c.st.changed.wait()
			c.mu.Unlock() // nothing changed
			<-changed
			c.lock()
			continue
		}
		c.unlock()
		if a != admitted {
			n.t.release()
		}
		if a == late {
			d := m.dropAs(DropShutdown)
			d.Method = n.method
			c.drop(d)
		}
		return
	}
}

// skipped acts on a frame the framer skipped as too long: it is reported,
// and when its first bytes show a response to a call of this side's (peers
// write the id early), that call fails with ErrFrameTooLarge rather than
// wait for a response that will never be read.
func (c *Conn) skipped(in inFrame) {
	if in.malformed != nil {
		c.drop(Drop{Reason: DropBadHeader, Line: in.prefix, Size: in.size, Err: in.malformed})
		return
	}
	c.drop(Drop{Reason: DropOversize, Size: in.size})
	id, ok := wire.ResponseIDInPrefix(in.prefix)
	if !ok {
		return
	}
	if n, ok := wire.IntegerID(id); ok && n > 0 {
		c.failCall(uint64(n), fmt.Errorf("%w: the response was %d bytes, longer than the %d bytes a frame may have (Options.MaxFrameSize)",
			ErrFrameTooLarge, in.size, c.maxFrameSize))
	}
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
