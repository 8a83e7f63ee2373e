package rpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/linerpc/linerpc/internal/wire"
)

// JSON-RPC 2.0 batches (Options.Batches), both ways. A batch the peer
// sends is served element by element, each as a lone frame would be (the
// same bounds, policies and drops), and the responses to its requests go
// back together, in one array, once the last is ready. A Batch sends this
// side's calls and notifications in one frame and matches the responses by
// id, in whatever order they come.

// inBatch collects the responses to the requests of one batch of the
// peer's, to write them in one frame.
//
// pending counts the answers still to come, plus one that the reader
// holds while it dispatches the elements, so that the array is not
// written before every request of the batch is known. Whoever brings
// pending to zero has the array queued. mu guards the fields; it is taken
// under the Conn's lock at times (answerNow), and around nothing that
// blocks. The state counts the batch (state.batches) from its reading
// until its array is queued, so that a Conn shut down meanwhile writes it
// before it closes.
type inBatch struct {
	mu      sync.Mutex
	pending int
	out     *frame // the array so far: '[' and each response followed by a comma
	held    int    // the bytes of out counted in Conn.batchHeld
	omitted int    // responses left out: they did not fit the bound
}

// The bounds of a batch: the arrays of the peer's batches being collected
// hold MaxFrameSize bytes in all (Conn.batchHeld), brackets and commas
// included, so that no array is longer than a frame may be. A response
// that would pass the bound is replaced by errBatchTooLarge, which keeps
// its id, when that fits, and is left out (logged) when not.
var errBatchTooLarge = &Error{Code: CodeInternalError, Message: "internal error: the batch's responses are larger than the maximum frame size"}

// errEmptyBatch answers an empty array, as JSON-RPC 2.0 requires (with a
// null id).
var errEmptyBatch = &Error{Code: CodeInvalidRequest, Message: "invalid request: empty batch"}

// dispatchBatch serves the batch array, read from one frame: each element
// as a lone frame, the answers to its requests collected in one array.
// A batch inside a batch is not one: it is dropped (DropNotObject).
func (c *Conn) dispatchBatch(rd *reader, m message) {
	line := m.line
	if !rd.batches {
		c.settleBatch(rd, m)
		return
	}
	n := 0
	b := &inBatch{pending: 1}
	c.update(func(s *state) { s.batches++ })
	rd.batch, rd.inArray = b, true
	wire.Elements(line, func(elem []byte) bool {
		n++
		c.dispatch(rd, elem)
		return true
	})
	rd.batch, rd.inArray = nil, false
	if n == 0 {
		c.update(func(s *state) { s.batches-- })
		c.reply(c.errorFrame([]byte("null"), "", errEmptyBatch), fromReadLoop)
		return
	}
	array, last := b.answered(c, nil, nil)
	c.sendBatch(array, last, fromReadLoop)
}

// settleBatch reads an array with batches off: when every element is a
// response, they settle this side's calls (they answer a Batch of this
// side's); any other array is dropped whole (DropNotObject), unanswered.
func (c *Conn) settleBatch(rd *reader, m message) {
	responses := true
	var env wire.Envelope
	wire.Elements(m.line, func(elem []byte) bool {
		top, _, err := rd.scanner.Scan(elem, &env)
		responses = err == nil && top == wire.Object && rd.classify(&env) == wire.Response
		return responses
	})
	if n := wire.CountElements(m.line); !responses || n == 0 {
		e := errBatchesOff
		if n == 0 {
			e = errEmptyBatch
		}
		c.refuse(m.dropAs(DropNotObject), e)
		return
	}
	rd.inArray = true
	wire.Elements(m.line, func(elem []byte) bool {
		c.dispatch(rd, elem)
		return true
	})
	rd.inArray = false
}

// expect records that an answer to a request of b is to come.
func (b *inBatch) expect() {
	b.mu.Lock()
	b.pending++
	b.mu.Unlock()
}

// answered adds f, the answer to the request id of the batch b, or
// records that the request will not be answered (f nil), or, with id nil
// too, that the reader has dispatched every element. When that was the
// last answer b waited for, it reports last, with the batch's array
// (nil when there is nothing to answer: notifications only), sealed, for
// the caller to queue (sendBatch), which ends the batch.
func (b *inBatch) answered(c *Conn, id []byte, f *frame) (array *frame, last bool) {
	b.mu.Lock()
	if f != nil {
		c.collect(b, id, f)
	}
	b.pending--
	last = b.pending == 0
	out, held, omitted := b.out, b.held, b.omitted
	if last {
		b.out = nil
	}
	b.mu.Unlock()
	if !last {
		return nil, false
	}
	if omitted > 0 && c.log != nil {
		c.log.Error("rpc: a batch's responses passed the maximum frame size: some were left out", slog.Int("omitted", omitted))
	}
	if out == nil {
		return nil, true
	}
	out.b = out.b[:len(out.b)-1] // the last comma, which ']' replaces
	c.sealWith(out, ']')
	c.batchHeld.Add(-int64(held)) // now the write queue's to bound
	return out, true
}

// sendBatch queues a batch's array, once its last answer is in (last),
// as way says, and ends the batch.
func (c *Conn) sendBatch(array *frame, last bool, way sender) {
	switch {
	case !last:
	case array == nil:
		c.update(func(s *state) { s.batches-- })
	default:
		if _, err := c.sendWith(array, way, nil, func(s *state) error { s.batches--; return nil }); err != nil {
			c.update(func(s *state) { s.batches-- })
			c.replyFailed(array, err)
		}
	}
}

// collect adds the response f, to the request id, to the array of b, or
// its replacement when it does not fit the bound (see errBatchTooLarge).
// Called with b.mu held.
func (c *Conn) collect(b *inBatch, id []byte, f *frame) {
	defer func() { putFrame(f) }() // f, or its replacement
	room := func(n int) bool {
		if int(c.batchHeld.Add(int64(n))) <= c.maxFrameSize {
			b.held += n
			return true
		}
		c.batchHeld.Add(-int64(n))
		return false
	}
	// The array is opened with the first answer that fits, so that a
	// batch none of whose answers fit has no array: nothing is written.
	open := 0
	if b.out == nil {
		open = 1 // '['
	}
	body := f.body()
	if !room(open + len(body) + 1) {
		putFrame(f)
		f = c.errorFrame(id, "", errBatchTooLarge)
		if body = f.body(); !room(open + len(body) + 1) {
			b.omitted++
			return
		}
	}
	if b.out == nil {
		b.out = c.newFrame()
		b.out.raw("[")
	}
	b.out.b = append(append(b.out.b, body...), ',')
}

// answerJob answers the request j, which will not run, with the error e,
// in its batch if it came in one.
func (c *Conn) answerJob(j *job, e *Error, way sender) {
	f := c.errorFrame(j.req.ID, j.req.Method, e)
	if j.batch == nil {
		c.reply(f, way)
		return
	}
	array, last := j.batch.answered(c, j.req.ID, f)
	c.sendBatch(array, last, way)
}

// unanswered records that the request j will not be answered.
func (c *Conn) unanswered(j *job, way sender) {
	if j.batch != nil {
		array, last := j.batch.answered(c, j.req.ID, nil)
		c.sendBatch(array, last, way)
	}
}

// Batch is a set of calls and notifications of this side's, sent together
// in one frame as a JSON-RPC 2.0 batch (see Options.Batches): Method.InBatch
// and Notification.InBatch add to it, Send sends it and waits for the
// responses, which are matched by id, whatever their order. The peer must
// accept batches. A Batch is sent once; it is not safe for concurrent use.
// The calling interceptors (Options.InterceptCall) do not see a batch.
type Batch struct {
	conn *Conn
	f    *frame // the array, as far as it was encoded
	// calls are the batch's calls, in order: each holds its outcome once
	// the batch was sent (a call whose params did not encode holds its
	// error from the start, and is not sent). They are not pooled: a
	// Pending may be read at any time after Send.
	calls []*call
	err   error // the first encoding failure
	sent  bool
	// registered: the calls were sent, and each has its outcome once Send
	// returned.
	registered bool
}

// NewBatch returns an empty batch of calls and notifications to c.
func NewBatch(c *Conn) *Batch {
	if c == nil {
		panic("rpc: NewBatch with a nil *Conn")
	}
	return &Batch{conn: c}
}

// Pending is the outcome of a call in a Batch, known once the Batch was
// sent.
type Pending[R any] struct {
	b *Batch
	i int // its index in b.calls
}

// Result returns the call's result, decoded, or its error: the peer's
// error (*Error), the error of the Batch's Send, or ErrInvalidResult. It
// panics before Send.
func (p *Pending[R]) Result() (R, error) {
	var r R
	if !p.b.sent {
		panic("rpc: Pending.Result before Batch.Send")
	}
	pc := p.b.calls[p.i]
	if pc.err != nil {
		return r, pc.err
	}
	if !pc.hasResult {
		return r, nil
	}
	if err := decode(pc.result, &r); err != nil {
		return r, fmt.Errorf("%w: %w", ErrInvalidResult, err)
	}
	return r, nil
}

// InBatch adds a call of m with params to the batch b, and returns where
// its outcome will be once b is sent.
func (m Method[P, R]) InBatch(b *Batch, params P) *Pending[R] {
	b.checkOpen()
	id := b.conn.lastID.Add(1)
	f := b.start()
	at := len(f.b)
	f.request(id, m.name)
	if !isNoParams[P]() {
		f.raw(`,"params":`)
		if err := appendValue(f, params); err != nil {
			f.b = f.b[:at]
			err = fmt.Errorf("rpc: encoding params of %q: %w", m.name, err)
			b.err = firstErr(b.err, err)
			b.calls = append(b.calls, &call{err: err})
			return &Pending[R]{b: b, i: len(b.calls) - 1}
		}
	}
	f.raw("}")
	b.calls = append(b.calls, &call{id: id, done: make(chan struct{}, 1)})
	return &Pending[R]{b: b, i: len(b.calls) - 1}
}

// InBatch adds the notification n with params to the batch b.
func (n Notification[P]) InBatch(b *Batch, params P) {
	b.checkOpen()
	f := b.start()
	at := len(f.b)
	f.notification(n.name)
	if !isNoParams[P]() {
		f.raw(`,"params":`)
		if err := appendValue(f, params); err != nil {
			f.b = f.b[:at]
			b.err = firstErr(b.err, fmt.Errorf("rpc: encoding params of %q: %w", n.name, err))
			return
		}
	}
	f.raw("}")
}

func firstErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

func (b *Batch) checkOpen() {
	if b.sent {
		panic("rpc: adding to a Batch already sent")
	}
}

// start begins the next element of the array.
func (b *Batch) start() *frame {
	if b.f == nil {
		b.f = b.conn.newFrame()
		b.f.raw("[")
	} else if b.f.b[len(b.f.b)-1] == '}' {
		b.f.raw(",")
	}
	return b.f
}

// Send sends the batch in one frame and waits for the response of every
// call in it; then each Pending has its outcome. It returns an error when
// the batch was not sent, or not answered in whole: the first failure to
// encode params (nothing is sent), ErrFrameTooLarge, the Conn's error,
// ctx's error (the calls still waiting are abandoned: with
// Options.Cancellation the peer is told, as for a lone call), or an error
// for an empty batch. It panics when called twice.
func (b *Batch) Send(ctx context.Context) error {
	if b.sent {
		panic("rpc: Batch.Send called twice")
	}
	b.sent = true
	err := b.send(ctx)
	if err != nil && !b.registered {
		for _, pc := range b.calls {
			if pc.err == nil {
				pc.err = err // not sent
			}
		}
	}
	return err
}

func (b *Batch) send(ctx context.Context) error {
	c, f := b.conn, b.f
	b.f = nil
	switch {
	case b.err != nil:
		putFrame(f)
		return b.err
	case f == nil || len(f.b) == f.off+1:
		putFrame(f)
		return errors.New("rpc: sending an empty batch")
	}
	if err := ctx.Err(); err != nil {
		putFrame(f)
		return err
	}
	c.sealWith(f, ']')
	if err := c.checkSize(f); err != nil {
		return err
	}
	var calls []*call // the calls to send
	h := c.handlerOf(ctx)
	for _, pc := range b.calls {
		if pc.err == nil {
			pc.handler = h
			calls = append(calls, pc)
		}
	}
	var register func(s *state) error // only for calls: notifications alone go as Notify's do
	if len(calls) > 0 {
		register = func(s *state) error { return c.register(s, calls...) }
	}
	seq, err := c.sendWith(f, fromCaller, ctx.Done(), register)
	if err != nil {
		putFrame(f)
		if err == errStopped {
			err = ctx.Err()
		}
		return err
	}
	b.registered = true
	for i, pc := range calls {
		select {
		case <-pc.done:
		case <-ctx.Done():
			b.abandon(ctx, f, seq, calls[i:])
			return ctx.Err()
		}
	}
	return nil
}

// abandon ends the calls still waiting when ctx ended: the frame is
// withdrawn if no Write took it yet; the calls settled meanwhile keep
// their outcome; the others fail with ctx's error, and the preempter
// learns of those that were written.
func (b *Batch) abandon(ctx context.Context, f *frame, seq uint64, calls []*call) {
	c := b.conn
	var written bool
	mine := make([]bool, len(calls))
	c.update(func(s *state) {
		written = !s.out.withdraw(f, seq)
		for i, pc := range calls {
			switch {
			case s.calls[pc.id] == pc:
				delete(s.calls, pc.id)
				mine[i] = true
			case pc.entry != nil:
				c.remove(s, pc.entry) // its response waits for its turn: dropped
				pc.entry = nil
				mine[i] = true
			}
		}
	})
	if !written {
		putFrame(f)
	}
	for i, pc := range calls {
		if !mine[i] {
			<-pc.done // settled first, by its response or the connection's end
			continue
		}
		pc.err = ctx.Err()
		if written && c.preempt != nil {
			c.preempt.abandoned(c, pc.id, context.Cause(ctx))
		}
	}
}
