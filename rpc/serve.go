package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Serving a request or a notification of the peer's is one path, run by
// a worker of the Conn once its turn has come (line.go): serve calls the
// handler, through the serving interceptors when there are any, and
// recovers a panic anywhere in them or in the encoding of the result; then
// a request is answered with what it returned, and the line learns that
// the handler returned.

// task is a handler bound to the params it was decoded with: what the
// reader hands, in a job, to the worker that runs it. Tasks of typed
// handlers are pooled per method.
type task interface {
	// call runs the handler. For a request (id not nil) it returns the
	// response frame with the handler's result, or the handler's error;
	// for a notification, nothing.
	call(ctx context.Context, c *Conn, id []byte) (*frame, error)
	// invoke runs the handler for the serving interceptors: it returns the
	// result as a value (nil for a notification).
	invoke(ctx context.Context) (any, error)
	// params returns the decoded params for the serving interceptors (nil
	// when the method takes none, or they were absent).
	params() any
	// release gives the task back once it has run, or will never run.
	release()
}

// run runs the handler of j, whose turn has come, answers it, and records
// that it returned. It returns with the lock held, so that the worker
// looks for its next work in the same change: what the handler's return
// let start is the worker's own to run, without waking another.
func (c *Conn) run(j *job) {
	if j.kind == notificationJob {
		c.serve(j, &j.req, j.t)
		j.t.release()
		j.t = nil
		c.lock()
		c.finish(&c.st, j)
		return
	}
	f, err := c.serve(j, &j.req, j.t)
	j.t.release()
	j.t = nil
	j.end(context.Canceled) // the handler returned
	if j.retired.Load() {
		f, err = c.preempt.answer(f, err)
	}
	if err != nil {
		putFrame(f)
		f = c.errorFrame(j.req.ID, j.req.Method, wireError(err))
	}
	c.answer(j, f)
}

// answer queues f, the response to j (nil: none), and records that j's
// handler returned, in one change: the response waits for room in the
// write queue with the handler counted alive (the backpressure on the
// peer's requests), and the worker writes the queue itself when nobody
// does. It returns with the lock held.
func (c *Conn) answer(j *job, f *frame) {
	if j.batch != nil {
		// The array is written when the batch's last answer is in.
		array, last := j.batch.answered(c, j.req.ID, f)
		c.sendBatch(array, last, fromHandler)
		f = nil
	}
	c.lock()
	s := &c.st
	if f == nil {
		c.finish(s, j)
		return
	}
	if s.lender == j && s.reading == readLent && !s.out.writing && len(s.out.frames) < maxDeferred &&
		s.out.fits(len(f.b)-f.off) && c.framer.buffered() {
		// It ran on the worker that read it, which reads on at once: the
		// answer waits for the next answers, and the worker writes them
		// together before it waits for input (writeDeferred).
		s.out.push(f)
		c.finish(s, j)
		return
	}
	_, write, err := c.enqueue(s, f, fromHandler, nil, func(s *state) error {
		c.finish(s, j)
		return nil
	})
	if err != nil {
		c.finish(s, j) // the Conn closed
		c.unlock()
		c.replyFailed(f, err)
		c.lock()
		return
	}
	if write {
		c.flushLocked(false) // it unlocks
		c.lock()
	}
}

// answerNow answers the request j, which will not run, with e (nil: not
// at all), under the lock, without waiting for room (fromPolicy): the
// line's own answers (CodeOverloaded at the cap), and a cancellation's.
func (c *Conn) answerNow(s *state, j *job, e *Error) {
	j.discard()
	var f *frame
	if e != nil {
		f = c.errorFrame(j.req.ID, j.req.Method, e)
	} else if j.batch == nil {
		return
	}
	if j.batch != nil {
		array, last := j.batch.answered(c, j.req.ID, f)
		if last {
			s.batches--
		}
		if f = array; f == nil {
			return
		}
	}
	c.queueNow(s, f)
}

// serve runs the handler of req, bound to its params in t, with ctx, and
// returns its answer (see task.call). A panic in the handler, in a serving
// interceptor or in the encoding of the result is recovered here, logged,
// and answered CodeInternalError.
func (c *Conn) serve(ctx context.Context, req *Request, t task) (f *frame, err error) {
	defer func() {
		if v := recover(); v != nil {
			putFrame(f)
			f, err = nil, c.panicked(req.Method, v)
		}
	}()
	if c.intercept == nil {
		return t.call(ctx, c, req.ID)
	}
	req.Params, req.t = t.params(), t
	result, err := c.intercept(ctx, req)
	req.t = nil
	if err != nil || req.ID == nil {
		return nil, err
	}
	return responseFrame(c, req.ID, req.Method, result)
}

// serveHandler is the innermost ServeFunc: the request's handler, its
// panic recovered, so that the interceptors around it see it as an error.
func serveHandler(ctx context.Context, req *Request) (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			result, err = nil, req.conn.panicked(req.Method, v)
		}
	}()
	return req.t.invoke(ctx)
}

// panicked logs a handler's panic and returns the error that answers it.
// It is called by the deferred function that recovered v, while the
// panicking frames are still on the stack.
func (c *Conn) panicked(method string, v any) error {
	if c.log != nil {
		stack := panicStack()
		attrs := []slog.Attr{slog.String("method", method), slog.String("panic", fmt.Sprint(v))}
		if len(stack) > 0 {
			attrs = append(attrs, slog.String("at", stack[0]), slog.Any("stack", stack))
		}
		c.log.LogAttrs(c.ctx, slog.LevelError, "rpc: handler panicked", attrs...)
	}
	return panicError
}

// maxPanicFrames bounds the frames a panic's log record lists.
const maxPanicFrames = 32

// panicStack returns the stack of the panic being recovered, from the
// frame that panicked outwards, one "function file:line" per frame: as a
// list, which a JSON log keeps as an array and a text log prints on one
// line, rather than debug.Stack's text, whose tabs and newlines a log
// record escapes.
func panicStack() []string {
	pcs := make([]uintptr, maxPanicFrames+16)
	pcs = pcs[:runtime.Callers(3, pcs)] // from panicked's caller, the deferred function
	frames := runtime.CallersFrames(pcs)
	var stack []string
	panicking := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			panicking = true // the frames after it are the panic's
		case panicking && len(stack) < maxPanicFrames &&
			!strings.HasPrefix(f.Function, "runtime."):
			stack = append(stack, f.Function+" "+f.File+":"+strconv.Itoa(f.Line))
		}
		if !more {
			return stack
		}
	}
}

// panicError answers a request whose handler panicked.
var panicError = &Error{Code: CodeInternalError, Message: "internal error: the handler panicked"}

// responseFrame encodes the response to the request id with result. A
// result that cannot be encoded, or makes a frame longer than
// MaxFrameSize, is logged and answered CodeInternalError instead.
func responseFrame[R any](c *Conn, id []byte, method string, result R) (*frame, error) {
	f := c.newFrame()
	f.response(id)
	f.raw(`,"result":`)
	err := appendValue(f, result)
	if err == nil {
		c.seal(f)
		if f.size() <= c.maxFrameSize {
			return f, nil
		}
		err = fmt.Errorf("%w (%d bytes)", ErrFrameTooLarge, f.size())
	}
	putFrame(f)
	c.logError("encoding the result failed", method, err)
	if errors.Is(err, ErrFrameTooLarge) {
		return nil, errTooLargeReply
	}
	return nil, errUnencodableReply
}

var (
	// errTooLargeReply answers a request whose result encodes to a frame
	// longer than MaxFrameSize, which the peer would drop.
	errTooLargeReply = &Error{Code: CodeInternalError, Message: "internal error: the result is larger than the maximum frame size"}
	// errUnencodableReply answers a request whose result cannot be encoded.
	errUnencodableReply = &Error{Code: CodeInternalError, Message: "internal error: the result could not be encoded"}
)

// wireError returns the error object that answers a handler's error.
func wireError(err error) *Error { return answerOf(err, CodeInternalError, "") }

// answerOf returns the error that answers a request refused with err: an
// *Error in err as it is, or code with prefix and err's text. A nil
// *Error, a non-nil error whose Error method cannot be called (the Go
// trap of a typed nil in an interface), is answered with code and says
// so rather than bring the Conn down.
func answerOf(err error, code Code, prefix string) *Error {
	var e *Error
	switch {
	case errors.As(err, &e) && e != nil:
		return e
	case e != nil || errors.As(err, &e):
		return &Error{Code: code, Message: prefix + errNilError.Error()}
	}
	return &Error{Code: code, Message: prefix + err.Error()}
}

// errNilError is the text of a nil *Error returned as an error.
var errNilError = errors.New("a nil *rpc.Error was returned as an error")

// errorFrame returns the response to the request id of method that
// carries the error e. Data that is not valid JSON is left out, and logged
// as an encoding failure.
func (c *Conn) errorFrame(id []byte, method string, e *Error) *frame {
	f := c.newFrame()
	f.response(id)
	if err := f.errorObject(e); err != nil {
		c.logError("encoding the error's data failed (sent without it)", method, err)
	}
	c.seal(f)
	return f
}

func (c *Conn) logError(msg, method string, err error) {
	if c.log != nil {
		c.log.Error("rpc: "+msg, slog.String("method", method), slog.Any("error", err))
	}
}

// handlerTask is a handler bound to the params it was decoded with, as
// the reader makes it: a typed handler's (pooled per method), or, with P
// json.RawMessage and R any, a handler of unknown methods'. A
// notification's handler (note) answers nothing: its R is struct{}, or
// its result nil.
type handlerTask[P, R any] struct {
	h      func(context.Context, P) (R, error)
	p      P
	omit   bool       // no params for the interceptors: P is NoParams, or none came
	note   bool       // a notification's handler
	pool   *sync.Pool // nil: not pooled
	method string
}

func (t *handlerTask[P, R]) call(ctx context.Context, c *Conn, id []byte) (*frame, error) {
	r, err := t.h(ctx, t.p)
	if err != nil || t.note {
		return nil, err
	}
	return responseFrame(c, id, t.method, r)
}

func (t *handlerTask[P, R]) invoke(ctx context.Context) (any, error) {
	r, err := t.h(ctx, t.p)
	if err != nil || t.note {
		return nil, err
	}
	return r, nil
}

func (t *handlerTask[P, R]) params() any {
	if t.omit {
		return nil
	}
	return t.p
}

func (t *handlerTask[P, R]) release() {
	if t.pool != nil {
		t.p = *new(P)
		t.pool.Put(t)
	}
}

// unknownTask returns the task of a request (or, with note, a
// notification) of method, which has no handler of its own, for the
// registry's handler of unknown methods, with the raw params (nil when
// absent).
func unknownTask(v *registryView, method string, params json.RawMessage, note bool) task {
	t := &handlerTask[json.RawMessage, any]{p: params, omit: params == nil, note: note, method: method}
	if note {
		t.h = func(ctx context.Context, p json.RawMessage) (any, error) {
			v.unknownNotification(ctx, method, p)
			return nil, nil
		}
	} else {
		t.h = func(ctx context.Context, p json.RawMessage) (any, error) { return v.unknown(ctx, method, p) }
	}
	return t
}
