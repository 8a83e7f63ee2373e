package rpc

import (
	"context"
	"fmt"
	"sync"
)

// pendingCalls is the table of this side's calls awaiting a response, keyed
// by the request id this side allocated.
//
// Invariant: a call is settled exactly once, by whoever removes it from the
// table (the response, its context, the end of the connection, or a failed
// write); the remover owns it until it signals done.
type pendingCall struct {
	done   chan struct{} // buffered: the settler never blocks
	result any           // pointer to the caller's result value
	err    error
}

type pendingCalls struct {
	mu     sync.Mutex
	calls  map[uint64]*pendingCall
	nextID uint64
	ended  error // set when the connection ended: no call is added after it
}

var pendingPool = sync.Pool{New: func() any {
	return &pendingCall{done: make(chan struct{}, 1)}
}}

func (p *pendingCalls) init() { p.calls = make(map[uint64]*pendingCall) }

// add registers a call and returns its id.
func (p *pendingCalls) add(result any) (uint64, *pendingCall, error) {
	pc := pendingPool.Get().(*pendingCall)
	pc.result = result
	p.mu.Lock()
	if p.ended != nil {
		err := p.ended
		p.mu.Unlock()
		pc.result = nil
		pendingPool.Put(pc)
		return 0, nil, err
	}
	p.nextID++
	id := p.nextID
	p.calls[id] = pc
	p.mu.Unlock()
	return id, pc, nil
}

// take removes the call with the given id and returns it, or nil when no
// such call is pending.
func (p *pendingCalls) take(id uint64) *pendingCall {
	p.mu.Lock()
	pc := p.calls[id]
	if pc != nil {
		delete(p.calls, id)
	}
	p.mu.Unlock()
	return pc
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
	p.ended = err
	p.mu.Unlock()
	for _, pc := range calls {
		pc.settle(err)
	}
}

// call sends a request and waits for its outcome; result points to the
// value the result is decoded into.
func call[P any](ctx context.Context, c *Conn, method string, omitParams bool, params P, result any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	id, pc, err := c.pending.add(result)
	if err != nil {
		return err
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
	err = c.write(f.b)
	putFrame(f)
	if err != nil {
		return c.abandon(id, pc, err)
	}
	select {
	case <-pc.done:
	case <-ctx.Done():
		return c.abandon(id, pc, ctx.Err())
	}
	return release(pc)
}

// abandon ends the call with err unless another settler took it first, in
// which case that outcome wins.
func (c *Conn) abandon(id uint64, pc *pendingCall, err error) error {
	if c.pending.take(id) != nil {
		pc.result = nil
		pendingPool.Put(pc)
		return err
	}
	<-pc.done
	return release(pc)
}

// release returns a settled call to the pool and returns its error.
func release(pc *pendingCall) error {
	err := pc.err
	pc.err, pc.result = nil, nil
	pendingPool.Put(pc)
	return err
}

// Call sends a request for method with params and decodes the result into
// result, for methods known only at run time; prefer Method.Call. A nil
// params omits the params member; a nil result discards the result. The
// outcomes are those of Method.Call.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	if result == nil {
		result = &discard{}
	}
	return call(ctx, c, method, params == nil, params, result)
}

// Notify sends the notification method with params, for methods known only
// at run time; prefer Notification.Notify. A nil params omits the params
// member.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	return notify(ctx, c, method, params == nil, params)
}

// discard is a result type that accepts any JSON value.
type discard struct{}

func (*discard) UnmarshalJSON([]byte) error { return nil }

func notify[P any](ctx context.Context, c *Conn, method string, omitParams bool, params P) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f := getFrame()
	defer putFrame(f)
	f.notification(method)
	if !omitParams {
		f.raw(`,"params":`)
		if err := appendValue(f, params); err != nil {
			return fmt.Errorf("rpc: encoding params of %q: %w", method, err)
		}
	}
	f.end()
	return c.write(f.b)
}
