package rpc

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/linerpc/linerpc/internal/wire"
)

// This side's calls and notifications. A caller's goroutine encodes its
// frame, queues it, and waits for its outcome; it writes its own frame,
// and reads its own response, only where its wait still ends as a wait
// must (see mayWrite in writer.go and mayRead below): with its context, or
// with Close. So the wait ends with the context whatever the peer does,
// and a frame that no Write has taken yet is withdrawn.
//
// A call ends in exactly one way, by whoever takes it out of the table
// first: its response (the reader, which hands it to the line: the caller
// gets it in its turn), its context (the caller), the end of the
// connection (setPhase), or a frame that could not be queued.

// call is one call awaiting its response.
type call struct {
	id   uint64
	done chan struct{} // buffered: whoever settles the call never blocks
	// result is a copy of the raw result, which the caller decodes on its
	// own goroutine: into a value on its stack, and in parallel with other
	// callers rather than on the reader.
	result    []byte
	hasResult bool // the response had a result member
	err       error
	// handler is the handler that made the call with its context (nil for
	// any other caller): the call is its yield, and the response its turn
	// again (line.go).
	handler *job
	// entry is the response's place in the line while it waits for its
	// turn (under Conn.mu).
	entry *job
	// mayRead: the caller may read its own response (see mayRead).
	mayRead bool
}

// maxPooledResult bounds the result buffer a call kept for reuse holds.
const maxPooledResult = 64 << 10

// newCall returns a call ready to be sent: one the Conn keeps for reuse,
// or a new one. The pool belongs to the Conn rather than to the package,
// so that a call's channel never passes from one Conn to another (a
// channel made inside a testing/synctest bubble must stay in it); and it
// takes no lock of the Conn's.
func (c *Conn) newCall() *call {
	if pc, ok := c.callPool.Get().(*call); ok {
		return pc
	}
	return &call{done: make(chan struct{}, 1)}
}

// release gives a settled call back to its Conn for reuse.
func (c *Conn) release(pc *call) {
	pc.err, pc.hasResult, pc.handler, pc.mayRead = nil, false, nil, false
	if cap(pc.result) > maxPooledResult {
		pc.result = nil
	}
	pc.result = pc.result[:0]
	c.callPool.Put(pc)
}

// fill records the outcome the response env gives the call. docs/wire.md
// §2.7: an error member that is an object or an array rejects the call;
// any other error member is ignored.
func (pc *call) fill(env *wire.Envelope) {
	if k := env.Error.Kind; k == wire.Object || k == wire.Array {
		pc.err = parseErrorObject(env.Error)
	} else if env.Result.Kind != wire.Absent {
		pc.result = append(pc.result[:0], env.Result.Raw...)
		pc.hasResult = true
	}
}

// register records the calls pcs, whose frame is being queued, in the
// table, and yields the handler that makes them with its context: the
// one call-registration rule of Call and Batch. Called under the lock.
func (c *Conn) register(s *state, pcs ...*call) error {
	switch {
	case s.phase == phaseNew:
		return ErrNotStarted
	case s.err != nil:
		return s.err // the input ended: no response can come
	}
	for _, pc := range pcs {
		s.calls[pc.id] = pc
	}
	if h := pcs[0].handler; h != nil {
		c.yield(s, h)
	}
	return nil
}

// mayRead reports whether a caller whose context's Done channel is stop
// may read its own response: only when its context cannot end, so that
// only Close ends its wait, and Close can interrupt a Read of the input.
func (c *Conn) mayRead(stop <-chan struct{}) bool {
	return stop == nil && c.readDeadline != nil
}

// doCall sends a request and waits for its outcome. On success it returns
// the settled call, whose raw result the caller decodes before it gives
// the call back (c.release).
func doCall[P any](ctx context.Context, c *Conn, method string, omitParams bool, params P) (*call, error) {
	if c == nil {
		panic(fmt.Sprintf("rpc: call of %q on a nil *Conn", method))
	}
	if method == "" {
		return nil, errEmptyMethod // a zero Method, or Call(ctx, "", …): nothing is sent
	}
	if c.interceptCall != nil {
		return interceptedCall(ctx, c, method, omitParams, params)
	}
	return sendRequest(ctx, c, method, omitParams, params, nil)
}

// sendRequest is call without the calling interceptors; onID, when set,
// learns the request's id before it is sent. When ctx ends before the
// response, the request is withdrawn if no Write has taken it yet, and
// otherwise the preempter (Options.Cancellation) learns that it was
// abandoned.
func sendRequest[P any](ctx context.Context, c *Conn, method string, omitParams bool, params P, onID func(uint64)) (*call, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := c.lastID.Add(1)
	if onID != nil {
		onID(id)
	}
	f := c.newFrame()
	f.request(id, method)
	if !omitParams {
		f.raw(`,"params":`)
		if err := appendValue(f, params); err != nil {
			putFrame(f)
			return nil, fmt.Errorf("rpc: encoding params of %q: %w", method, err)
		}
	}
	c.seal(f)
	if err := c.checkSize(f); err != nil {
		return nil, err
	}
	stop := ctx.Done()
	pc := c.newCall()
	pc.id, pc.handler, pc.mayRead = id, c.handlerOf(ctx), c.mayRead(stop)
	seq, err := c.sendWith(f, fromCaller, stop, func(s *state) error { return c.register(s, pc) })
	if err != nil {
		putFrame(f)
		c.release(pc)
		if err == errStopped {
			err = ctx.Err()
		}
		return nil, err
	}
	return c.awaitOutcome(ctx, pc, f, seq)
}

// awaitOutcome waits for the outcome of the call pc, whose request was queued as
// f, seq. A caller that may read its own response reads it when nobody
// reads (see read).
func (c *Conn) awaitOutcome(ctx context.Context, pc *call, f *frame, seq uint64) (*call, error) {
	stop := ctx.Done()
	for {
		if pc.mayRead {
			select {
			case <-pc.done:
				return c.settled(pc, f, seq)
			default:
			}
			c.lock()
			// Only while pc awaits its response: one read, and settled
			// by a worker that let the role go, would never come.
			if s := &c.st; (s.reading == readFree || s.reading == readLent) && s.calls[pc.id] == pc {
				s.reading, s.lender = readHeld, nil
				s.out.claimWriter() // what the worker that lent it queued
				s.goroutines++      // Wait waits for it as for a worker
				c.unlock()
				c.read(pc)
				continue
			}
			c.mu.Unlock() // nothing changed
		}
		if stop == nil {
			<-pc.done // a context that cannot end: a plain receive, cheaper than a select
			return c.settled(pc, f, seq)
		}
		select {
		case <-pc.done:
			return c.settled(pc, f, seq)
		case <-stop:
			return c.abandon(ctx, pc, f, seq)
		}
	}
}

// abandon ends the call pc, whose context ended before its outcome came:
// its request is withdrawn when no Write has taken it yet, and otherwise
// the preempter learns that it was abandoned. An outcome that came first
// stays.
func (c *Conn) abandon(ctx context.Context, pc *call, f *frame, seq uint64) (*call, error) {
	var written, mine bool
	c.update(func(s *state) {
		written = !s.out.withdraw(f, seq)
		switch {
		case s.calls[pc.id] == pc:
			delete(s.calls, pc.id)
			mine = true
		case pc.entry != nil:
			// Its response came, and waits for its turn: it is dropped.
			c.remove(s, pc.entry)
			pc.entry = nil
			mine = true
		}
	})
	if !written {
		putFrame(f)
	}
	if !mine {
		<-pc.done // delivered first, or failed by the connection's end
		return c.outcome(pc)
	}
	id := pc.id
	c.release(pc)
	if written && c.preempt != nil {
		c.preempt.abandoned(c, id, context.Cause(ctx))
	}
	return nil, ctx.Err()
}

// settled returns the outcome of the call pc, delivered, whose request was
// queued as f, seq: when the connection's end failed it, a request still
// queued is not sent.
func (c *Conn) settled(pc *call, f *frame, seq uint64) (*call, error) {
	if pc.err != nil {
		c.update(func(s *state) {
			if s.out.withdraw(f, seq) {
				putFrame(f)
			}
		})
	}
	return c.outcome(pc)
}

// outcome returns a call that ended with its response, or releases it
// and returns its error.
func (c *Conn) outcome(pc *call) (*call, error) {
	if err := pc.err; err != nil {
		c.release(pc)
		return nil, err
	}
	return pc, nil
}

// checkSize refuses a frame longer than MaxFrameSize, which the peer would
// drop unread, and releases it.
func (c *Conn) checkSize(f *frame) error {
	if f.size() <= c.maxFrameSize {
		return nil
	}
	err := fmt.Errorf("%w (%d bytes, at most %d)", ErrFrameTooLarge, f.size(), c.maxFrameSize)
	putFrame(f)
	return err
}

// decodeResult decodes the call's result into *r (an absent result leaves
// it as it is) and releases the call.
func decodeResult[R any](c *Conn, pc *call, r *R) error {
	defer c.release(pc)
	if !pc.hasResult {
		return nil
	}
	if err := decode(pc.result, r); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidResult, err)
	}
	return nil
}

// Call sends a request for method with params and decodes the result into
// result, for methods known only at run time; prefer Method.Call. A nil
// params omits the params member; a nil result discards the result. The
// outcomes are those of Method.Call; a result that is not a non-nil
// pointer is refused before anything is sent.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	if result != nil {
		if v := reflect.ValueOf(result); v.Kind() != reflect.Pointer || v.IsNil() {
			return fmt.Errorf("rpc: Call %q: the result must be a non-nil pointer, not %T", method, result)
		}
	}
	pc, err := doCall(ctx, c, method, params == nil, params)
	if err != nil {
		return err
	}
	defer c.release(pc)
	if result == nil || !pc.hasResult {
		return nil
	}
	if err := decodeAny(pc.result, result); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidResult, err)
	}
	return nil
}

// Notify sends the notification method with params, for methods known only
// at run time; prefer Notification.Notify. A nil params omits the params
// member. It returns as Notification.Notify does.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	return notify(ctx, c, method, params == nil, params)
}

// notify sends a notification: it returns once the frame is queued (see
// Notification.Notify).
func notify[P any](ctx context.Context, c *Conn, method string, omitParams bool, params P) error {
	if c == nil {
		panic(fmt.Sprintf("rpc: notification %q on a nil *Conn (is the context a handler's? see ConnFromContext)", method))
	}
	if method == "" {
		return errEmptyMethod
	}
	if c.interceptCall != nil {
		return interceptedNotify(ctx, c, method, omitParams, params)
	}
	return sendNotification(ctx, c, method, omitParams, params)
}

// sendNotification is notify without the calling interceptors.
func sendNotification[P any](ctx context.Context, c *Conn, method string, omitParams bool, params P) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f := c.newFrame()
	f.notification(method)
	if !omitParams {
		f.raw(`,"params":`)
		if err := appendValue(f, params); err != nil {
			putFrame(f)
			return fmt.Errorf("rpc: encoding params of %q: %w", method, err)
		}
	}
	c.seal(f)
	if err := c.checkSize(f); err != nil {
		return err
	}
	_, err := c.send(f, fromCaller, ctx.Done())
	if err != nil {
		putFrame(f)
		if err == errStopped {
			err = ctx.Err()
		}
	}
	return err
}

// errEmptyMethod refuses a call or a notification without a method name,
// before anything is sent.
var errEmptyMethod = errors.New("rpc: the method name is empty (a zero Method or Notification, or an empty name)")
