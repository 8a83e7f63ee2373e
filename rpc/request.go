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
	r, _ := ctx.Value(requestKey).(*Request)
	return r
}

// ctxKey keys the values a Conn puts in contexts.
type ctxKey uint8

const (
	connKey    ctxKey = iota // the *Conn (ConnFromContext)
	requestKey               // the *Request of a handler's context
	jobKey                   // the *job of a handler's context
)

// job is an entry of the line (line.go): a request or a notification of
// the peer's from the moment it was read until its handler has returned,
// a response to a call of this side's waiting for its turn, or the end of
// the input. A request's or notification's job is its handler's context.
//
// The cancellable part of a request's context is made when first needed
// (Done, Err after the end, Value of a key not its own, context.Cause, a
// context derived from it): a handler that never looks at its context
// costs no context of its own. Until then, end records why the request
// ended, and the cancellable context, when it is made, starts cancelled
// with that cause; made from the Conn's context, it is cancelled by Close
// too. A notification's context is the Conn's, with its Request.
type job struct {
	conn *Conn
	req  Request
	t    task // its handler and decoded params, until it runs
	size int  // its line's length, counted against MaxWaitingBytes while it waits
	kind jobKind
	// solo: it runs alone (a notification, an exclusive request, or the
	// response to such a handler's call); async: it yields as it starts.
	solo, async bool
	// batch is the peer's batch it came in, answered in one array
	// (batch.go); nil for a lone request.
	batch *inBatch
	// call is the call a response entry settles; ended, the reason the
	// end of the input gives the Conn.
	call  *call
	ended error
	// idBuf holds short ids, so that an id takes no allocation of its
	// own (a handler may keep its context after it returned, so the id
	// cannot live in a pooled object).
	idBuf [40]byte

	mu     sync.Mutex
	inner  context.Context // the cancellable context, once made
	cancel context.CancelCauseFunc
	done   error // why the request ended, while inner is not made

	// Under Conn.mu (line.go): its place in the line, and the next request
	// in hand whose id has the same match key (with a cancellation
	// policy, which names requests by key).
	state  jobState
	key    wire.IDKey
	sameID *job
	// retired: the peer cancelled the request; read by its handler's
	// goroutine when it answers (cancel.go).
	retired atomic.Bool
}

// newJob returns the job of a request (id not nil) or notification read
// from a line of size bytes.
func newJob(c *Conn, e *entry, name string, id []byte, t task, size int) *job {
	j := &job{conn: c, t: t, size: size, kind: requestJob}
	j.req.Method, j.req.conn = name, c
	if e != nil {
		j.solo, j.async = e.exclusive, e.async
	}
	switch {
	case id == nil:
		j.kind, j.solo = notificationJob, true
	case len(id) <= len(j.idBuf):
		j.req.ID = append(j.idBuf[:0:len(j.idBuf)], id...)
	default:
		j.req.ID = append(json.RawMessage(nil), id...)
	}
	if c.preempt != nil && id != nil {
		j.key = wire.KeyOfID(wire.Value{Raw: j.req.ID, Kind: wire.KindOf(j.req.ID)})
	}
	return j
}

// resumes reports whether the handler of j, having yielded, takes its
// turn again when the response to one of its calls is delivered (an Async
// handler never does).
func (j *job) resumes() bool { return j.state == yielded && !j.async }

// discard releases the task of a request that will never run.
func (j *job) discard() {
	if j.t != nil {
		j.t.release()
		j.t = nil
	}
}

// context returns the cancellable context, making it if need be; a
// notification's is the Conn's.
func (j *job) context() context.Context {
	if j.kind == notificationJob {
		return j.conn.ctx
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.inner == nil {
		j.inner, j.cancel = context.WithCancelCause(j.conn.ctx)
		if j.done != nil {
			j.cancel(j.done)
		}
	}
	return j.inner
}

// end ends the context with cause (the first cause stays).
func (j *job) end(cause error) {
	j.mu.Lock()
	cancel := j.cancel
	if cancel == nil && j.done == nil {
		j.done = cause
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
	if j.kind == notificationJob {
		return j.conn.ctx.Err()
	}
	j.mu.Lock()
	inner, done := j.inner, j.done
	j.mu.Unlock()
	switch {
	case inner != nil:
		return inner.Err()
	case done != nil:
		return context.Canceled
	}
	return j.conn.ctx.Err()
}

func (j *job) Value(key any) any {
	switch key {
	case requestKey:
		return &j.req
	case jobKey:
		return j
	case connKey:
		return j.conn
	}
	return j.context().Value(key)
}

// handlerOf returns the job whose handler's context ctx is (or derives
// from), when it is one of c's.
func (c *Conn) handlerOf(ctx context.Context) *job {
	if j, ok := ctx.Value(jobKey).(*job); ok && j.conn == c {
		return j
	}
	return nil
}
