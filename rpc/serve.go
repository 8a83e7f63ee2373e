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
	method  string
	params  P
	id      []byte
	pool    *sync.Pool
}

func (t *requestTask[P, R]) run(c *Conn, ctx context.Context) {
	serveRequest(c, ctx, t.id, t.method, t.handler, t.params)
	t.discard()
}

func (t *requestTask[P, R]) requestID() []byte { return t.id }

func (t *requestTask[P, R]) discard() {
	t.params = *new(P)
	t.handler = nil
	t.pool.Put(t)
}

// serveRequest runs a request handler and answers the request id with its
// result, its error, or CodeInternalError when it panicked.
func serveRequest[P, R any](c *Conn, ctx context.Context, id []byte, method string, h func(context.Context, P) (R, error), p P) {
	r, err, panicked := callHandler(c, ctx, method, h, p)
	switch {
	case panicked:
		c.replyError(id, panicError, true)
	case err != nil:
		c.replyError(id, wireError(err), true)
	default:
		replyResult(c, id, method, r)
	}
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
	id      []byte
}

func (t *unknownTask) run(c *Conn, ctx context.Context) {
	h := func(ctx context.Context, p json.RawMessage) (any, error) { return t.handler(ctx, t.method, p) }
	serveRequest(c, ctx, t.id, t.method, h, t.params)
}

func (t *unknownTask) discard()          {}
func (t *unknownTask) requestID() []byte { return t.id }

// notificationTask is a notification for a handler registered with
// HandleNotification, with its params decoded; it runs on the read loop.
type notificationTask[P any] struct {
	handler func(context.Context, P)
	method  string
	params  P
	pool    *sync.Pool
}

func (t *notificationTask[P]) run(c *Conn, ctx context.Context) {
	func() {
		defer c.recoverNotification(t.method)
		t.handler(ctx, t.params)
	}()
	t.discard()
}

func (t *notificationTask[P]) requestID() []byte { return nil }

func (t *notificationTask[P]) discard() {
	t.params = *new(P)
	t.pool.Put(t)
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
