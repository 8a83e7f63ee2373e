package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
)

// requestTask is a request for a method registered with Handle, with its
// params decoded. Tasks are pooled per method.
type requestTask[P, R any] struct {
	handler func(context.Context, P) (R, error)
	params  P
	omit    bool // P is NoParams
	pool    *sync.Pool
}

func (t *requestTask[P, R]) run(c *Conn, rc *requestContext) {
	if c.serve != nil {
		if !t.omit {
			rc.req.Params = t.params
		}
		rc.req.h, rc.req.conn = t, c
		serveIntercepted(c, rc)
	} else {
		serveRequest(c, rc, t.handler, t.params)
	}
	t.discard()
}

func (t *requestTask[P, R]) invoke(ctx context.Context) (any, error) {
	r, err := t.handler(ctx, t.params)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (t *requestTask[P, R]) discard() {
	t.params = *new(P)
	t.handler = nil
	t.pool.Put(t)
}

// serveRequest runs a request handler and answers the request with its
// result, its error, or CodeInternalError when it panicked (unless a
// cancellation policy settles it: see requestReturned).
func serveRequest[P, R any](c *Conn, rc *requestContext, h func(context.Context, P) (R, error), p P) {
	r, err, panicked := callHandler(c, rc, rc.req.Method, h, p)
	if !c.requestReturned(rc, err == nil && !panicked) {
		return
	}
	switch {
	case panicked:
		c.replyError(rc.req.ID, panicError, true)
	case err != nil:
		c.replyError(rc.req.ID, wireError(err), true)
	default:
		replyResult(c, rc.req.ID, rc.req.Method, r)
	}
}

// serveIntercepted serves a request through the serving interceptors and
// answers it with what the chain returns.
func serveIntercepted(c *Conn, rc *requestContext) {
	r, err := c.intercepted(rc, &rc.req)
	rc.req.h = nil
	if !c.requestReturned(rc, err == nil) {
		return
	}
	if err != nil {
		c.replyError(rc.req.ID, wireError(err), true)
		return
	}
	replyResult(c, rc.req.ID, rc.req.Method, r)
}

// callHandler runs a handler, containing a panic.
func callHandler[P, R any](c *Conn, ctx context.Context, method string, h func(context.Context, P) (R, error), p P) (r R, err error, panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			panicked = true
			c.logPanic(method, v)
		}
	}()
	r, err = h(ctx, p)
	return r, err, false
}

// panicError answers a request whose handler panicked.
var panicError = &Error{Code: CodeInternalError, Message: "internal error: the handler panicked"}

// unknownTask is a request for a method without a handler, served by the
// registry's HandleUnknown handler.
type unknownTask struct {
	handler func(ctx context.Context, method string, params json.RawMessage) (any, error)
	method  string
	params  json.RawMessage
}

func (t *unknownTask) run(c *Conn, rc *requestContext) {
	if c.serve != nil {
		if t.params != nil {
			rc.req.Params = t.params
		}
		rc.req.h, rc.req.conn = t, c
		serveIntercepted(c, rc)
		return
	}
	h := func(ctx context.Context, p json.RawMessage) (any, error) { return t.handler(ctx, t.method, p) }
	serveRequest(c, rc, h, t.params)
}

func (t *unknownTask) invoke(ctx context.Context) (any, error) {
	return t.handler(ctx, t.method, t.params)
}

func (t *unknownTask) discard() {}

// notificationTask is a notification for a handler registered with
// HandleNotification, with its params decoded; it runs on the read loop.
type notificationTask[P any] struct {
	handler func(context.Context, P)
	params  P
	omit    bool // P is NoParams
	pool    *sync.Pool
}

func (t *notificationTask[P]) run(c *Conn, rd *reader, method string) {
	if c.serve != nil {
		var params any
		if !t.omit {
			params = t.params
		}
		c.interceptNotification(method, params, t)
	} else {
		ctx := rd.notificationContext(c, method)
		c.notifying.Store(true)
		func() {
			defer c.recoverNotification(method)
			t.handler(ctx, t.params)
		}()
		c.notifying.Store(false)
	}
	t.discard()
}

func (t *notificationTask[P]) invoke(ctx context.Context) (any, error) {
	t.handler(ctx, t.params)
	return nil, nil
}

func (t *notificationTask[P]) discard() {
	t.params = *new(P)
	t.pool.Put(t)
}

// unknownNotification is a notification for the registry's
// HandleUnknownNotification handler, on its way through the serving
// interceptors.
type unknownNotification struct {
	handler func(ctx context.Context, method string, params json.RawMessage)
	method  string
	params  json.RawMessage
}

func (u *unknownNotification) invoke(ctx context.Context) (any, error) {
	u.handler(ctx, u.method, u.params)
	return nil, nil
}

// runUnknownNotification runs the registry's HandleUnknownNotification
// handler on the read loop.
func (c *Conn) runUnknownNotification(rd *reader, h func(context.Context, string, json.RawMessage), method string, params json.RawMessage) {
	if c.serve != nil {
		var p any
		if params != nil {
			p = params
		}
		c.interceptNotification(method, p, &unknownNotification{h, method, params})
		return
	}
	ctx := rd.notificationContext(c, method)
	c.notifying.Store(true)
	func() {
		defer c.recoverNotification(method)
		h(ctx, method, params)
	}()
	c.notifying.Store(false)
}

// interceptNotification serves a notification through the serving
// interceptors, on the read loop.
func (c *Conn) interceptNotification(method string, params any, h invoker) {
	nc := &notificationContext{Context: c.ctx, req: Request{Method: method, Params: params, h: h, conn: c}}
	c.notifying.Store(true)
	c.intercepted(nc, &nc.req)
	c.notifying.Store(false)
	nc.req.h = nil
}

// wireError returns the error object that answers a handler's error.
func wireError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}

// errTooLargeReply answers a request whose result encodes to a frame longer
// than MaxFrameSize, which the peer would drop.
var errTooLargeReply = &Error{Code: CodeInternalError, Message: "internal error: the result is larger than the maximum frame size"}

// replyResult answers the request id with the handler's result, on the
// handler's goroutine.
func replyResult[R any](c *Conn, id []byte, method string, result R) {
	f := getFrame()
	f.response(id)
	f.raw(`,"result":`)
	err := appendValue(f, result)
	if err == nil {
		f.end()
		if len(f.b)-1 <= c.maxFrameSize {
			c.reply(f, true)
			return
		}
		err = fmt.Errorf("%w (%d bytes)", ErrFrameTooLarge, len(f.b)-1)
	}
	putFrame(f)
	c.logError("encoding the result failed", method, err)
	e := &Error{Code: CodeInternalError, Message: "internal error: the result could not be encoded"}
	if errors.Is(err, ErrFrameTooLarge) {
		e = errTooLargeReply
	}
	c.replyError(id, e, true)
}

// replyError answers the request id with the error object e; handler says
// that the goroutine is a handler's, which writes the reply itself (the
// read loop has a Write started on another goroutine).
func (c *Conn) replyError(id []byte, e *Error, handler bool) {
	f := getFrame()
	f.response(id)
	f.errorObject(e)
	f.end()
	c.reply(f, handler)
}

// reply queues a response frame, waiting for room as long as the
// connection lives (see writer). The peer learns nothing of a failure; it
// is logged.
func (c *Conn) reply(f *frame, handler bool) {
	if _, err := c.out.enqueue(c, nil, f, handler); err != nil {
		putFrame(f)
		c.logWriteError(err)
	}
}

func (c *Conn) recoverNotification(method string) {
	if v := recover(); v != nil {
		c.logPanic(method, v)
	}
}

func (c *Conn) logPanic(method string, v any) {
	if c.log != nil {
		c.log.Error("rpc: handler panicked", slog.String("method", method),
			slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
	}
}

func (c *Conn) logError(msg, method string, err error) {
	if c.log != nil {
		c.log.Error("rpc: "+msg, slog.String("method", method), slog.Any("error", err))
	}
}

func (c *Conn) logWriteError(err error) {
	if c.log != nil && !errors.Is(err, ErrClosed) {
		c.log.Error("rpc: writing a response failed", slog.String("error", err.Error()))
	}
}
