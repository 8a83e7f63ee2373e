package rpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// pendingCalls is the table of this side's calls awaiting a response, keyed
// by the request id this side allocated.
//
// Invariant: a call is settled exactly once, by whoever removes it from the
// table (the response, its context, the end of the connection, or a frame
// that could not be sent); the remover owns it until it signals done.
type pendingCalls struct {
	mu     sync.Mutex
	calls  map[uint64]*pendingCall
	nextID uint64
	// started says Start was called: before it, no response could be
	// read, and a call fails at once with ErrNotStarted.
	started bool
	ended   error // set when the connection ended: no call is added after it
	// free keeps released calls for reuse. It belongs to the Conn rather
	// than to a package-wide pool, so that a call's channel never passes
	// from one Conn to another (a channel made inside a testing/synctest
	// bubble must stay in it).
	free []*pendingCall
	// count mirrors len(calls), set under mu, so that a caller can ask
	// whether its call is alone (see lone) without taking mu again.
	count atomic.Int64
}

type pendingCall struct {
	owner *pendingCalls
	done  chan struct{} // buffered: the settler never blocks
	// result is a copy of the raw result, which the caller decodes on its
	// own goroutine: into a value on its stack, and in parallel with other
	// callers rather than on the read loop.
	result    []byte
	hasResult bool // the response had a result member
	err       error
}

// maxPooledResult bounds the result buffer a pooled call keeps, and
// maxFreeCalls the calls a Conn keeps for reuse.
const (
	maxPooledResult = 64 << 10
	maxFreeCalls    = 64
)

func (p *pendingCalls) init() { p.calls = make(map[uint64]*pendingCall) }

// add registers a call and returns its id.
func (p *pendingCalls) add() (uint64, *pendingCall, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended != nil || !p.started {
		err := p.ended
		if err == nil {
			err = ErrNotStarted
		}
		return 0, nil, err
	}
	pc := p.get()
	p.nextID++
	id := p.nextID
	p.calls[id] = pc
	p.count.Store(int64(len(p.calls)))
	return id, pc, nil
}

// get returns a free call, or a new one. Called with mu held.
func (p *pendingCalls) get() *pendingCall {
	if n := len(p.free); n > 0 {
		pc := p.free[n-1]
		p.free = p.free[:n-1]
		return pc
	}
	return &pendingCall{owner: p, done: make(chan struct{}, 1)}
}

// take removes the call with the given id and returns it, or nil when no
// such call is pending.
func (p *pendingCalls) take(id uint64) *pendingCall {
	p.mu.Lock()
	pc := p.calls[id]
	if pc != nil {
		delete(p.calls, id)
		p.count.Store(int64(len(p.calls)))
	}
	p.mu.Unlock()
	return pc
}

// lone reports whether at most one call is pending: a lone call writes its
// own request (see Conn.send), where the requests of concurrent calls are
// left to queue up and go out together.
func (p *pendingCalls) lone() bool { return p.count.Load() <= 1 }

// start lets calls be added.
func (p *pendingCalls) start() {
	p.mu.Lock()
	p.started = true
	p.mu.Unlock()
}

// settle ends a call taken from the table.
func (pc *pendingCall) settle(err error) {
	pc.err = err
	pc.done <- struct{}{}
}

// failAll ends every pending call with err and refuses new ones.
func (p *pendingCalls) failAll(err error) {
	p.mu.Lock()
	calls := p.calls
	p.calls = make(map[uint64]*pendingCall)
	p.count.Store(0)
	p.ended = err
	p.mu.Unlock()
	for _, pc := range calls {
		pc.settle(err)
	}
}

// ErrNotStarted is returned by a call on a Conn whose Start was never
// called: nothing would ever read its response.
var ErrNotStarted = errors.New("rpc: call on a Conn that was not started (call Start first)")

// ErrFrameTooLarge is returned when a frame to send is longer than
// Options.MaxFrameSize: the peer would drop it unread. Nothing is sent.
var ErrFrameTooLarge = errors.New("rpc: frame larger than the maximum frame size")

// call sends a request and waits for its outcome. On success it returns
// the settled call, whose raw result the caller decodes before it calls
// release.
//
// The caller's goroutine only encodes and queues its frame, and waits: the
// frame is written, and the response read, by goroutines of the Conn. So
// the wait ends with ctx whatever the peer does, and a frame that no Write
// has taken yet is withdrawn.
func call[P any](ctx context.Context, c *Conn, method string, omitParams bool, params P) (*pendingCall, error) {
	if c == nil {
		panic(fmt.Sprintf("rpc: call of %q on a nil *Conn", method))
	}
	if c.callChain != nil {
		return interceptedCall(ctx, c, method, omitParams, params)
	}
	return sendRequest(ctx, c, method, omitParams, params, nil)
}

// ErrCallInNotificationHandler is returned by a call made by a
// notification handler, on its own goroutine, to its own Conn: the
// handler runs on the read loop, which would have to read the response,
// so the call could never end. Such a call has to be made on another
// goroutine.
var ErrCallInNotificationHandler = errors.New("rpc: call from a notification handler to its own Conn, which would wait for ever: notification handlers run on the read loop; make the call on another goroutine")

// sendRequest is call without the calling interceptors; onID, when set,
// learns the request's id before it is sent. When ctx ends before the
// response, the request is withdrawn if no Write has taken it yet, and
// otherwise, under a cancellation policy, the peer is sent the policy's
// cancel notification.
func sendRequest[P any](ctx context.Context, c *Conn, method string, omitParams bool, params P, onID func(uint64)) (*pendingCall, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.onReadLoop() {
		return nil, ErrCallInNotificationHandler
	}
	id, pc, err := c.pending.add()
	if err != nil {
		return nil, err
	}
	if onID != nil {
		onID(id)
	}
	if rc := c.handlerCall(ctx); rc != nil {
		c.callStarted(rc) // a handler waits for its own peer: see slots.go
		defer c.callEnded(rc)
	}
	f := getFrame()
	f.request(id, method)
	if !omitParams {
		f.raw(`,"params":`)
		if err := appendValue(f, params); err != nil {
			putFrame(f)
			return c.abandon(id, pc, fmt.Errorf("rpc: encoding params of %q: %w", method, err))
		}
	}
	f.end()
	seq, err := c.send(ctx, f)
	if err != nil {
		return c.abandon(id, pc, err)
	}
	select {
	case <-pc.done:
		return settled(pc)
	case <-ctx.Done():
		written := !c.out.withdraw(f, seq)
		if !written {
			putFrame(f)
		}
		if c.pending.take(id) == nil {
			<-pc.done // settled first, by the response or the connection's end
			return settled(pc)
		}
		release(pc)
		if written && c.cancellation != nil {
			c.sendCancel(id, context.Cause(ctx))
		}
		return nil, ctx.Err()
	}
}

// send writes a frame of a caller's (see call and notify), once it has
// checked its size: it queues it, or, when the caller's context cannot end
// and no other call is pending, may write it on the caller's goroutine
// (see writer.writeOwn). It returns
// the frame's queue number, 0 when the frame is no longer queued; on
// error, or when it wrote the frame itself, it has given the frame back
// to the pool.
func (c *Conn) send(ctx context.Context, f *frame) (seq uint64, err error) {
	if len(f.b)-1 > c.maxFrameSize {
		putFrame(f)
		return 0, fmt.Errorf("%w (%d bytes, at most %d)", ErrFrameTooLarge, len(f.b)-1, c.maxFrameSize)
	}
	if ctx.Done() == nil && c.pending.lone() {
		if ok, err := c.out.writeOwn(c, f); ok {
			putFrame(f)
			return 0, err
		}
	}
	seq, err = c.out.enqueue(c, ctx, f, false)
	if err != nil {
		putFrame(f)
	}
	return seq, err
}

// abandon ends the call with err unless another settler took it first, in
// which case that outcome wins.
func (c *Conn) abandon(id uint64, pc *pendingCall, err error) (*pendingCall, error) {
	if c.pending.take(id) != nil {
		release(pc)
		return nil, err
	}
	<-pc.done
	return settled(pc)
}

// settled returns a call that ended with its response, or releases it and
// returns its error.
func settled(pc *pendingCall) (*pendingCall, error) {
	if err := pc.err; err != nil {
		release(pc)
		return nil, err
	}
	return pc, nil
}

// decodeResult decodes the call's result into *r (an absent result leaves
// it as it is) and releases the call.
func decodeResult[R any](pc *pendingCall, r *R) error {
	defer release(pc)
	if !pc.hasResult {
		return nil
	}
	if err := decode(pc.result, r); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidResult, err)
	}
	return nil
}

// release gives a settled call back to its Conn for reuse.
func release(pc *pendingCall) {
	pc.err, pc.hasResult = nil, false
	if cap(pc.result) > maxPooledResult {
		pc.result = nil
	}
	pc.result = pc.result[:0]
	p := pc.owner
	p.mu.Lock()
	if len(p.free) < maxFreeCalls {
		p.free = append(p.free, pc)
	}
	p.mu.Unlock()
}

// Call sends a request for method with params and decodes the result into
// result, for methods known only at run time; prefer Method.Call. A nil
// params omits the params member; a nil result discards the result. The
// outcomes are those of Method.Call.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	pc, err := call(ctx, c, method, params == nil, params)
	if err != nil {
		return err
	}
	defer release(pc)
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
	if c.callChain != nil {
		return interceptedNotify(ctx, c, method, omitParams, params)
	}
	return notifyDirect(ctx, c, method, omitParams, params)
}

// notifyDirect is notify without the calling interceptors.
func notifyDirect[P any](ctx context.Context, c *Conn, method string, omitParams bool, params P) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f := getFrame()
	f.notification(method)
	if !omitParams {
		f.raw(`,"params":`)
		if err := appendValue(f, params); err != nil {
			putFrame(f)
			return fmt.Errorf("rpc: encoding params of %q: %w", method, err)
		}
	}
	f.end()
	_, err := c.send(ctx, f)
	return err
}
