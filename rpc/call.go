package rpc

import (
	"context"
	"fmt"

	"github.com/linerpc/linerpc/internal/wire"
)

// This side's calls and notifications. A caller's goroutine only encodes
// its frame, queues it and waits: the frame is written, and the response
// read, by goroutines of the Conn (but for the lone write of sender's
// fromCaller). So the wait ends with the context whatever the peer does,
// and a frame that no Write has taken yet is withdrawn.
//
// A call ends in exactly one way, by whoever takes it out of the table
// first: its response (the read loop), its context (the caller), the end
// of the connection (setPhase), or a frame that could not be queued.

// call is one call awaiting its response.
type call struct {
	done chan struct{} // buffered: whoever settles the call never blocks
	// result is a copy of the raw result, which the caller decodes on its
	// own goroutine: into a value on its stack, and in parallel with other
	// callers rather than on the read loop.
	result    []byte
	hasResult bool // the response had a result member
	err       error
	// notesAhead, when not zero, is the count of the peer's notifications
	// admitted before the response was read (inbox.notesIn), some not yet
	// handled then: the call returns once they have been (awaitNotes).
	notesAhead uint64
}

// callTable is the calls awaiting their responses, by the id of their
// request. It is part of the state.
type callTable struct {
	byID map[uint64]*call
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
	pc.err, pc.hasResult, pc.notesAhead = nil, false, 0
	if cap(pc.result) > maxPooledResult {
		pc.result = nil
	}
	pc.result = pc.result[:0]
	c.callPool.Put(pc)
}

// take removes the call with id from the table and returns it, or nil.
func (t *callTable) take(id uint64) *call {
	pc := t.byID[id]
	if pc != nil {
		delete(t.byID, id)
	}
	return pc
}

// lone reports whether at most one call is pending: a lone call may write
// its own request (see fromCaller), where the requests of concurrent calls
// are left to queue up and go out together.
func (t *callTable) lone() bool { return len(t.byID) <= 1 }

// failAll settles every call with err, after the notifications admitted
// so far (see call.notesAhead).
func (t *callTable) failAll(err error, notesAhead uint64) {
	for id, pc := range t.byID {
		delete(t.byID, id)
		pc.err, pc.notesAhead = err, notesAhead
		pc.done <- struct{}{}
	}
}

// doCall sends a request and waits for its outcome. On success it returns
// the settled call, whose raw result the caller decodes before it gives
// the call back (c.release).
func doCall[P any](ctx context.Context, c *Conn, method string, omitParams bool, params P) (*call, error) {
	if c == nil {
		panic(fmt.Sprintf("rpc: call of %q on a nil *Conn", method))
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
	// A handler calling its own peer lends its slot meanwhile (inbox.go);
	// a notification handler lets the requests behind it start.
	j, note := c.jobOf(ctx), c.inNote(ctx)
	pc := c.newCall()
	var overload []*job
	seq, err := c.sendWith(f, fromCaller, ctx.Done(), func(s *state) error {
		if s.phase == phaseNew {
			return ErrNotStarted
		}
		if s.err != nil {
			return s.err // the input ended: no response can come
		}
		s.calls.byID[id] = pc
		if j != nil {
			overload = c.callStarted(s, j)
		}
		if note {
			s.in.noteCalls++
		}
		return nil
	})
	if err != nil {
		putFrame(f)
		c.release(pc)
		if err == errStopped {
			err = ctx.Err()
		}
		return nil, err
	}
	for _, w := range overload {
		c.answerJob(w, overloadError, fromPolicy)
		w.discard()
	}
	if j != nil {
		defer c.update(func(s *state) { c.callEnded(s, j) })
	}
	if note {
		defer c.update(func(s *state) { s.in.noteCalls-- })
	}
	if ctx.Done() == nil {
		<-pc.done // a context that cannot end: a plain receive, cheaper than a select
		return c.settledAfter(ctx, pc, f, seq)
	}
	select {
	case <-pc.done:
		return c.settledAfter(ctx, pc, f, seq)
	case <-ctx.Done():
		var written, mine bool
		c.update(func(s *state) {
			written = !s.out.withdraw(f, seq)
			mine = s.calls.take(id) != nil
		})
		if !written {
			putFrame(f)
		}
		if !mine {
			<-pc.done // settled first, by the response or the connection's end
			return c.settled(pc)
		}
		c.release(pc)
		if written && c.preempt != nil {
			c.preempt.abandoned(c, id, context.Cause(ctx))
		}
		return nil, ctx.Err()
	}
}

// settledAfter returns the outcome of the settled call pc, whose request
// was queued as f, seq: when the connection's end failed it, a request
// still queued is not sent; when its response came behind notifications
// not yet handled, it waits for them (awaitNotes).
func (c *Conn) settledAfter(ctx context.Context, pc *call, f *frame, seq uint64) (*call, error) {
	if pc.err != nil {
		c.update(func(s *state) {
			if s.out.withdraw(f, seq) {
				putFrame(f)
			}
		})
	}
	if pc.notesAhead != 0 {
		c.awaitNotes(ctx, pc.notesAhead)
	}
	return c.settled(pc)
}

// awaitNotes waits until the peer's first n notifications have been
// handled, as the TypeScript transport has them handled before a response
// written after them: a call returns after the notifications the peer
// wrote ahead of its response. A call made from a notification handler,
// with its context, does not wait, as the handler it would wait for is its
// own. The wait ends with ctx, and when the Conn closes.
func (c *Conn) awaitNotes(ctx context.Context, n uint64) {
	if c.inNote(ctx) {
		return
	}
	c.awaitNotesUntil(ctx, func(in *inbox) bool { return in.notesOut >= n })
}

// inNote reports whether ctx is the context of a notification handler of
// c's.
func (c *Conn) inNote(ctx context.Context) bool {
	r := RequestFromContext(ctx)
	return r != nil && r.IsNotification() && r.conn == c
}

// awaitNotesUntil waits until done holds of the inbox, ctx ends, or the
// Conn closes.
func (c *Conn) awaitNotesUntil(ctx context.Context, done func(in *inbox) bool) {
	c.lock()
	for !done(&c.st.in) && c.st.phase != phaseClosed {
		changed := c.st.changed.wait()
		c.mu.Unlock() // nothing changed
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
		c.lock()
	}
	c.mu.Unlock()
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

// settled returns a call that ended with its response, or releases it and
// returns its error.
func (c *Conn) settled(pc *call) (*call, error) {
	if err := pc.err; err != nil {
		c.release(pc)
		return nil, err
	}
	return pc, nil
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

// settle ends the call that the response env answers: the read loop has
// read it. Ids match by JSON type and value (wire.IntegerID): this side
// sends integer ids, so a string id never matches, and a number matches
// when it denotes the same integer (5, 5.0 and 5e0 alike, as JavaScript
// peers compare them). It reports false when no call awaits it.
func (c *Conn) settle(env *wire.Envelope) bool {
	var pc *call
	if n, ok := wire.IntegerID(env.ID); ok && n > 0 {
		c.lock()
		s := &c.st
		if pc = s.calls.take(uint64(n)); pc != nil {
			pc.notesAhead = s.in.notesAhead()
		}
		c.unlock()
	}
	if pc == nil {
		return false
	}
	// docs/wire.md §2.7: an error member that is an object or an array
	// rejects the call; any other error member is ignored.
	if k := env.Error.Kind; k == wire.Object || k == wire.Array {
		pc.err = parseErrorObject(env.Error)
	} else if env.Result.Kind != wire.Absent {
		pc.result = append(pc.result[:0], env.Result.Raw...)
		pc.hasResult = true
	}
	pc.done <- struct{}{}
	return true
}

// failCall ends the call with id, if it still awaits its response, with
// err: the response came, but could not be read (see Conn.skipped).
func (c *Conn) failCall(id uint64, err error) bool {
	c.lock()
	pc := c.st.calls.take(id)
	c.unlock()
	if pc == nil {
		return false
	}
	pc.err = err
	pc.done <- struct{}{}
	return true
}

// Call sends a request for method with params and decodes the result into
// result, for methods known only at run time; prefer Method.Call. A nil
// params omits the params member; a nil result discards the result. The
// outcomes are those of Method.Call.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
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
