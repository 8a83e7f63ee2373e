package rpc

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Every request of the peer's is served with a context of its own,
// derived from the Conn's. It ends:
//   - when the peer cancels the request (with Options.Cancellation set):
//     context.Cause is ErrPeerCancelled, wrapped with the peer's reason;
//   - when the connection ends by Close (ErrClosed) or by a failed write
//     (the write error), since no answer could be written any more;
//   - when the handler returns.
//
// The end of the input does not end it: a peer that has written its last
// request and closed its end, as a shell pipe does, still reads the
// answers, and the TypeScript transport writes its handlers' answers after
// its input ended too (docs/wire.md §2.10). A program that wants its
// handlers stopped when the input ends calls Close once Done is closed.

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

	// For the serving interceptors' chain (see serveHandler):
	h    invoker
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
	switch v := ctx.Value(requestKey{}).(type) {
	case *requestContext:
		return &v.req
	case *notificationContext:
		return &v.req
	}
	return nil
}

type requestKey struct{}

// requestContext is the context of a request handler (see the rules at
// the top of this file). It is made on the read loop, as the request is
// admitted; it also marks a call that the handler makes on its own Conn
// as one (see Conn.handlerCall and slots.go).
//
// Its cancellable part is made when first needed (Done, Err after the end,
// Value of a key not its own, context.Cause, a context derived from it):
// a handler that never looks at its context costs no context of its own.
// Until then, end records why the request ended, and the cancellable
// context, when it is made, starts cancelled with that cause; made from
// the Conn's context, it is cancelled by Close too.
type requestContext struct {
	conn *Conn
	t    task // what serves it
	req  Request
	// idBuf holds short ids, so that a request's id takes no allocation
	// of its own (a handler may keep its context after it returned, so
	// the id cannot live in a pooled task).
	idBuf [40]byte

	mu     sync.Mutex
	inner  context.Context // the cancellable context, once made
	cancel context.CancelCauseFunc
	ended  error // why it ended, while inner is not made

	// Under Conn.mu, for the lending of slots (slots.go):
	holds bool // the handler holds a slot (it lends it while it calls)
	calls int  // calls on conn in progress from this context
	done  bool // the handler returned

	// Under Conn.mu, with a cancellation policy only (cancel.go):
	key       idKey           // the id's match key (keyOf)
	next      *requestContext // another request of the peer's with the same key
	waiting   bool            // in the waiting room
	cancelled error           // the cause, once the peer cancelled it
}

func newRequestContext(c *Conn, method string, id []byte) *requestContext {
	rc := &requestContext{conn: c, holds: true}
	rc.req.Method = method
	if len(id) <= len(rc.idBuf) {
		rc.req.ID = append(rc.idBuf[:0:len(rc.idBuf)], id...)
	} else {
		rc.req.ID = append(json.RawMessage(nil), id...)
	}
	return rc
}

// context returns the cancellable context, making it if need be.
func (rc *requestContext) context() context.Context {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.inner == nil {
		rc.inner, rc.cancel = context.WithCancelCause(rc.conn.ctx)
		if rc.ended != nil {
			rc.cancel(rc.ended)
		}
	}
	return rc.inner
}

// end ends the context with cause (the first cause stays).
func (rc *requestContext) end(cause error) {
	rc.mu.Lock()
	cancel := rc.cancel
	if cancel == nil && rc.ended == nil {
		rc.ended = cause
	}
	rc.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// Deadline reports none: neither the Conn's context nor the request has
// one.
func (rc *requestContext) Deadline() (time.Time, bool) { return time.Time{}, false }

func (rc *requestContext) Done() <-chan struct{} { return rc.context().Done() }

func (rc *requestContext) Err() error {
	rc.mu.Lock()
	inner, ended := rc.inner, rc.ended
	rc.mu.Unlock()
	switch {
	case inner != nil:
		return inner.Err()
	case ended != nil:
		return context.Canceled
	}
	return rc.conn.ctx.Err()
}

func (rc *requestContext) Value(key any) any {
	switch key {
	case requestKey{}:
		return rc
	case connKey{}:
		return rc.conn
	}
	return rc.context().Value(key)
}

// requestReturned ends rc's context, as its handler returned, and says
// whether its outcome is to be answered: under a cancellation policy, a
// request the peer cancelled is answered as the policy says (see
// CancelPolicy.Reply), here, and false is returned. result says the
// handler returned a result rather than an error.
func (c *Conn) requestReturned(rc *requestContext, result bool) (answer bool) {
	rc.end(context.Canceled)
	p := c.cancellation
	if p == nil {
		return true
	}
	var cause error
	c.update(func(s *connState) {
		s.forget(rc)
		cause = rc.cancelled
	})
	switch {
	case cause == nil:
		return true
	case p.Reply == nil:
		return false // not answered at all, its result neither
	case result:
		return true
	}
	c.replyError(rc.req.ID, p.Reply, true)
	return false
}

// handlerCall returns the request context of ctx when ctx is a handler's
// of c: a call with it is a handler waiting for its own peer.
func (c *Conn) handlerCall(ctx context.Context) *requestContext {
	if rc, ok := ctx.Value(requestKey{}).(*requestContext); ok && rc.conn == c {
		return rc
	}
	return nil
}

// notificationContext is the context of a notification handler: the
// Conn's, with the notification's Request. It never changes once made, so
// that the read loop may give the same one to a run of notifications of
// one method (see reader.notificationContext).
type notificationContext struct {
	context.Context
	req Request
}

func (nc *notificationContext) Value(key any) any {
	if key == (requestKey{}) {
		return nc
	}
	return nc.Context.Value(key)
}

// notificationContext returns the context for a notification of method:
// the last one made, when it was for the same method, so that a stream of
// notifications costs no allocation.
func (rd *reader) notificationContext(c *Conn, method string) context.Context {
	if nc := rd.noteCtx; nc != nil && nc.req.Method == method {
		return nc
	}
	rd.noteCtx = &notificationContext{Context: c.ctx, req: Request{Method: method}}
	return rd.noteCtx
}

// A notification handler runs on the read loop, so a call that it makes
// on its own Conn and waits for could never be answered: the read loop
// would have to read the response. Such a call fails at once with
// ErrCallInNotificationHandler. The Conn knows it by the goroutine: while
// a notification handler runs (Conn.notifying), a call made on the read
// loop's goroutine is that handler's. A goroutine the handler starts may
// call freely, with any context.

// goroutineID returns the id of the calling goroutine, as the first line
// of its stack trace gives it ("goroutine 42 [running]:"). Go exposes no
// other way; it is used only to tell the read loop's goroutine from
// others while a notification handler runs, as net/http's HTTP/2 code
// does for its checks.
func goroutineID() uint64 {
	var buf [32]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) {
		return 0
	}
	b = b[len(prefix):]
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	id, _ := strconv.ParseUint(string(b[:i]), 10, 64)
	return id
}

// onReadLoop reports whether the calling goroutine is c's read loop while
// it runs a notification handler.
func (c *Conn) onReadLoop() bool {
	return c.notifying.Load() && goroutineID() == c.readLoopID.Load()
}

// readLoopMark is what the read loop records for onReadLoop.
type readLoopMark struct {
	notifying  atomic.Bool   // a notification handler runs on the read loop
	readLoopID atomic.Uint64 // the read loop's goroutine
}
