package rpc

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// pendingCalls is the table of this side's calls awaiting a response, keyed
// by the request id this side allocated.
//
// Invariant: a call is settled exactly once, by whoever removes it from the
// table (the response, its context, the end of the connection, or a failed
// write); the remover owns it until it signals done.
type pendingCall struct {
	done chan struct{} // buffered: the settler never blocks
	// result is a copy of the raw result, which the caller decodes on its
	// own goroutine: into a value on its stack, and in parallel with other
	// callers rather than on the read loop.
	result    []byte
	hasResult bool // the response had a result member
	err       error

	// canLead says the caller may lead the read loop while it waits (see
	// call); lead is the lead, when it came to the caller with the
	// response (see handleResponse).
	canLead bool
	lead    *reader
	parked  atomic.Bool // the caller has nothing left to do but wait
}

// maxPooledResult bounds the result buffer a pooled call keeps.
const maxPooledResult = 64 << 10

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
func (p *pendingCalls) add(canLead bool) (uint64, *pendingCall, error) {
	pc := pendingPool.Get().(*pendingCall)
	pc.canLead = canLead
	p.mu.Lock()
	if p.ended != nil {
		err := p.ended
		p.mu.Unlock()
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

// waiting reports whether calls are pending.
func (p *pendingCalls) waiting() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls) > 0
}

// settle ends a call taken from the table.
func (pc *pendingCall) settle(err error) {
	pc.err = err
	pc.done <- struct{}{}
}

// isSettled tells a caller that leads the read loop that its call was
// settled, without taking the outcome (call receives it from done).
func (pc *pendingCall) isSettled() bool { return len(pc.done) > 0 }

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

// call sends a request and waits for its outcome. On success it returns
// the settled call, whose raw result the caller decodes before it calls
// release.
func call[P any](ctx context.Context, c *Conn, method string, omitParams bool, params P) (*pendingCall, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// A caller that waits for as long as it takes may wait by reading:
	// when the lead of the read loop lies free, it takes it and reads its
	// response itself, which spares the wake-up of a goroutine that would
	// read it and of the caller. It needs a stream whose reads Close can
	// interrupt, and a context that cannot end, since a read in progress
	// cannot be abandoned.
	canLead := ctx.Done() == nil && c.deadline != nil
	id, pc, err := c.pending.add(canLead)
	if err != nil {
		return nil, err
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
	if canLead {
		if rd := c.takeFreeLead(); rd != nil {
			c.leadFor(rd, pc)
		}
		// Only now may the lead come to the caller with the response: not
		// while it writes, for instance, the frames that queued behind its
		// own, to a peer that stopped reading until they are read.
		pc.parked.Store(true)
	}
	select {
	case <-pc.done:
	case <-ctx.Done():
		return c.abandon(id, pc, ctx.Err())
	}
	if rd := pc.lead; rd != nil {
		pc.lead = nil
		c.leaveLead(rd)
	}
	return settled(pc)
}

// leadFor leads the read loop for a caller until its call is settled.
func (c *Conn) leadFor(rd *reader, pc *pendingCall) {
	if c.lead(rd, pc) == leadSettled {
		c.leaveLead(rd)
		return
	}
	c.running.Done() // the lead passed on, or reading ended
}

// leaveLead gives up the lead a caller holds once its call is settled: to a
// goroutine of the Conn when there is work for the read loop (lines read,
// replies posted, other calls waiting for responses), else by leaving it
// free for the next caller (see releaseLead).
func (c *Conn) leaveLead(rd *reader) {
	if rd.lines.HasLine() || c.out.pending() || c.pending.waiting() {
		c.passLead(rd)
		c.running.Done()
		return
	}
	c.releaseLead(rd)
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

// release returns a call to the pool.
func release(pc *pendingCall) {
	pc.err, pc.hasResult, pc.lead = nil, false, nil
	pc.parked.Store(false)
	if cap(pc.result) > maxPooledResult {
		pc.result = nil
	}
	pc.result = pc.result[:0]
	pendingPool.Put(pc)
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
// member.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	return notify(ctx, c, method, params == nil, params)
}

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
