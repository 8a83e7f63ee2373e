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

func (t *requestTask[P, R]) run(c *Conn, leading bool) {
	serveRequest(c, leading, t.id, t.method, t.handler, t.params)
	t.discard()
}

func (t *requestTask[P, R]) discard() {
	t.params = *new(P)
	t.handler = nil
	t.pool.Put(t)
}

// serveRequest runs a request handler and answers the request id with its
// result, its error, or CodeInternalError when it panicked. leading says
// that the goroutine leads the read loop (see Conn.reply).
func serveRequest[P, R any](c *Conn, leading bool, id []byte, method string, h func(context.Context, P) (R, error), p P) {
	r, err, panicked := callHandler(c, method, h, p)
	switch {
	case panicked:
		c.writeError(leading, id, panicError)
	case err != nil:
		c.writeError(leading, id, wireError(err))
	default:
		writeResult(c, leading, id, method, r)
	}
}

// callHandler runs a handler, containing a panic.
func callHandler[P, R any](c *Conn, method string, h func(context.Context, P) (R, error), p P) (r R, err error, panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			panicked = true
			c.logPanic(method, v)
		}
	}()
	r, err = h(c.ctx, p)
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

func (t *unknownTask) run(c *Conn, leading bool) {
	h := func(ctx context.Context, p json.RawMessage) (any, error) { return t.handler(ctx, t.method, p) }
	serveRequest(c, leading, t.id, t.method, h, t.params)
}

func (t *unknownTask) discard() {}

// wireError returns the error object that answers a handler's error.
func wireError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}

// writeResult answers the request id with the handler's result.
func writeResult[R any](c *Conn, leading bool, id []byte, method string, result R) {
	f := getFrame()
	defer putFrame(f)
	f.response(id)
	f.raw(`,"result":`)
	if err := appendValue(f, result); err != nil {
		f.b = f.b[:0]
		c.logError("encoding the result failed", method, err)
		f.response(id)
		f.errorObject(&Error{Code: CodeInternalError, Message: "internal error: the result could not be encoded"})
	}
	f.end()
	c.reply(leading, f.b)
}

// writeError answers the request id with the error object e.
func (c *Conn) writeError(leading bool, id []byte, e *Error) {
	f := getFrame()
	defer putFrame(f)
	f.response(id)
	f.errorObject(e)
	f.end()
	c.reply(leading, f.b)
}

// reply sends a response frame. The goroutine leading the read loop posts
// it, to go out with the others of a burst when it next flushes (before it
// waits for input); any other goroutine writes it at once. The peer learns
// nothing of a failure; it is logged.
func (c *Conn) reply(leading bool, frame []byte) {
	var err error
	if leading {
		err = c.out.post(frame)
	} else {
		err = c.out.write(frame)
	}
	if err != nil {
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
		c.log.Error("rpc: writing a response failed", slog.Any("error", err))
	}
}
