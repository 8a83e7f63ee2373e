package rpc

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linerpc/linerpc/internal/wire"
)

// Every request of the peer's is served with a context of its own, derived
// from the Conn's. It ends:
//   - when the peer cancels the request (with Options.Cancellation set):
//     context.Cause is ErrPeerCancelled, wrapped with the peer's reason;
//   - when the connection closes (Close, a failed write): no answer could
//     be written any more; the cause is ErrClosed or the write error;
//   - when the handler returns.
//
// The end of the input does not end it: a peer that has written its last
// request and closed its end, as a shell pipe does, still reads the
// answers, and the TypeScript transport writes its handlers' answers after
// its input ended too (docs/wire.md §2.10). A program that wants its
// handlers stopped when the input ends calls Close once Done is closed.
//
// A notification handler's context is the Conn's, with the notification's
// Request: Close ends it.

// Request describes a request or a notification being served: the
// handler's context carries it (see RequestFromContext), and a serving
// interceptor receives it (see Options.Intercept). Its fields must not be
// modified.
type Request struct {
	// Method is the method's name.
	Method string
	// ID is the request's id as the peer wrote it, byte for byte: a JSON
	// string or number. It is nil for a notification.
	ID json.RawMessage
	// Params are the params as decoded for the handler: a value of its
	// params type, or the raw json.RawMessage for HandleUnknown and
	// HandleUnknownNotification handlers (nil when absent). They are set
	// only for interceptors (Options.Intercept), and nil otherwise.
	Params any

	// For serveHandler, the innermost ServeFunc: what runs the handler.
	t    task
	conn *Conn
}

// IsNotification reports whether r is a notification, which has no id
// and is not answered.
func (r *Request) IsNotification() bool { return r.ID == nil }

// RequestFromContext returns the request or notification whose handler
// received ctx (or a context derived from it), or nil when ctx is no
// handler's. A handler uses it to learn its method and its id, for logs
// or for replies of its own.
func RequestFromContext(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

type (
	requestKey struct{} // the *Request of a handler's context
	jobKey     struct{} // the *job of a request handler's context
)

// job is a request of the peer's from the moment the read loop admits it
// until its handler has returned: what it is, what serves it, its place in
// the inbox, and its handler's context (a job is that context).
//
// The cancellable part of the context is made when first needed (Done,
// Err after the end, Value of a key not its own, context.Cause, a context
// derived from it): a handler that never looks at its context costs no
// context of its own. Until then, end records why the request ended, and
// the cancellable context, when it is made, starts cancelled with that
// cause; made from the Conn's context, it is cancelled by Close too.
type job struct {
	conn *Conn
	req  Request
	t    task // its handler and decoded params, until it runs
	size int  // its line's length, counted against MaxWaitingBytes while it waits
	// exclusive: registered with HandleExclusive (inbox.go).
	exclusive bool
	// notesAhead, when not zero, is the count of the peer's notifications
	// admitted before it was read, some not handled yet then (under
	// Conn.mu): its handler starts once they have been (serveRequest).
	notesAhead uint64
	// batch is the peer's batch it came in, answered in one array
	// (batch.go); nil for a lone request.
	batch *inBatch
	// idBuf holds short ids, so that an id takes no allocation of its
	// own (a handler may keep its context after it returned, so the id
	// cannot live in a pooled object).
	idBuf [40]byte

	mu     sync.Mutex
	inner  context.Context // the cancellable context, once made
	cancel context.CancelCauseFunc
	ended  error // why it ended, while inner is not made

	// Under Conn.mu (inbox.go):
	started  bool // it was given a slot (an exclusive request waits without one)
	holds    bool // it holds a slot now (it lends it while it calls its peer)
	calls    int  // calls on its Conn in progress from its context
	finished bool // its handler returned

	// With a preempter (preempt.go): the match key of its id and the next
	// request in hand with the same key (under Conn.mu), and how it was
	// retired (read by its handler's goroutine when it answers).
	key     wire.IDKey
	sameID  *job
	retired atomic.Pointer[retirement]
}

// newJob returns the job of a request with the id given (raw JSON), read
// from a line of size bytes.
func newJob(c *Conn, e *entry, name string, id []byte, t task, size int) *job {
	j := &job{conn: c, t: t, size: size}
	j.req.Method, j.req.conn = name, c
	if e != nil {
		j.exclusive = e.exclusive
	}
	if len(id) <= len(j.idBuf) {
		j.req.ID = append(j.idBuf[:0:len(j.idBuf)], id...)
	} else {
		j.req.ID = append(json.RawMessage(nil), id...)
	}
	if c.preempt != nil {
		j.key = wire.KeyOfID(wire.Value{Raw: j.req.ID, Kind: wire.KindOf(j.req.ID)})
	}
	return j
}

// discard releases a request that will never run.
func (j *job) discard() {
	if j.t != nil {
		j.t.release()
		j.t = nil
	}
}

// context returns the cancellable context, making it if need be.
func (j *job) context() context.Context {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.inner == nil {
		j.inner, j.cancel = context.WithCancelCause(j.conn.ctx)
		if j.ended != nil {
			j.cancel(j.ended)
		}
	}
	return j.inner
}

// end ends the context with cause (the first cause stays).
func (j *job) end(cause error) {
	j.mu.Lock()
	cancel := j.cancel
	if cancel == nil && j.ended == nil {
		j.ended = cause
	}
	j.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// Deadline reports none: neither the Conn's context nor the request has
// one.
func (j *job) Deadline() (time.Time, bool) { return time.Time{}, false }

func (j *job) Done() <-chan struct{} { return j.context().Done() }

func (j *job) Err() error {
	j.mu.Lock()
	inner, ended := j.inner, j.ended
	j.mu.Unlock()
	switch {
	case inner != nil:
		return inner.Err()
	case ended != nil:
		return context.Canceled
	}
	return j.conn.ctx.Err()
}

func (j *job) Value(key any) any {
	switch key {
	case requestKey{}:
		return &j.req
	case jobKey{}:
		return j
	case connKey{}:
		return j.conn
	}
	return j.context().Value(key)
}

// jobOf returns the request whose handler's context ctx is (or derives
// from), when it is one of c's: a call with it is a handler waiting for
// its own peer.
func (c *Conn) jobOf(ctx context.Context) *job {
	if j, ok := ctx.Value(jobKey{}).(*job); ok && j.conn == c {
		return j
	}
	return nil
}

// noteContext is the context of a notification handler: the Conn's, with
// the notification's Request. It never changes once made, so that the
// notification runner may give the same one to a run of notifications of
// one method (see Conn.noteContext).
type noteContext struct {
	context.Context
	req Request
}

func (nc *noteContext) Value(key any) any {
	if key == (requestKey{}) {
		return &nc.req
	}
	return nc.Context.Value(key)
}

// noteContext returns the context for a notification of method: the last
// one made, when it was for the same method, so that a stream of
// notifications costs no allocation. Only the notification runner calls
// it, and one runs at a time.
func (c *Conn) noteContext(method string) *noteContext {
	if nc := c.lastNote; nc != nil && nc.req.Method == method {
		return nc
	}
	c.lastNote = &noteContext{Context: c.ctx, req: Request{Method: method, conn: c}}
	return c.lastNote
}
