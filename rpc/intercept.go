package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
)

// Interceptors wrap what a Conn does for each frame, for logging, metrics,
// tracing and authorisation, one on each side: Options.Intercept wraps the
// serving of the peer's requests and notifications, Options.InterceptCall
// the sending of this side's calls and notifications. Each is a function
// that takes the next step and returns the step to use instead, as
// net/http middleware does; without one, the Conn calls nothing and
// allocates nothing for it.

// ServeFunc serves one request or notification of the peer's; it is what
// a serving interceptor (Options.Intercept) wraps. ctx is the handler's
// context (see RequestFromContext), and req the request, its params
// decoded. A wrapper may pass next a context derived from ctx (with a
// span, say), which the handler then receives.
//
// next returns the handler's result (nil for a notification) or its
// error; a panic in the handler comes back as an *Error with
// CodeInternalError. What the outermost ServeFunc returns is what the
// peer gets: the result, or the error, answered as a handler's error is
// (an *Error as it is, any other as CodeInternalError with its text). A
// wrapper that refuses a request returns an *Error without calling next;
// for a notification, what it returns is not sent anywhere. Under a
// cancellation policy, a request the peer cancelled is answered as the
// policy says, whatever the wrapper returns.
//
// A ServeFunc runs where the handler does: on a goroutine of the Conn,
// in the handler's turn (see serve.go).
type ServeFunc func(ctx context.Context, req *Request) (result any, err error)

// Call is a call or a notification this side sends, as a calling
// interceptor (Options.InterceptCall) sees it. Method, Params and
// Notification say what is sent; changing them changes nothing on the
// wire.
type Call struct {
	// Method is the method's name.
	Method string
	// Params are the params as given to the call, nil when the params
	// member is omitted (NoParams, or nil params to Conn.Call).
	Params any
	// Notification reports whether this is a notification, which has no
	// id and no response.
	Notification bool
	// ID is the id of the request, set by next once it has been queued
	// for writing (nil for a notification, and for a call not sent).
	ID json.RawMessage
	// Result is the raw result of the response, set by next when the call
	// succeeded (nil when the response had no result member). It is valid
	// until the outermost CallFunc returns; the caller decodes it then.
	Result json.RawMessage

	op callSender
}

// CallFunc sends one call or notification and, for a call, waits for its
// response; it is what a calling interceptor (Options.InterceptCall)
// wraps. next returns nil once the response came with a result (or, for a
// notification, once its frame is queued), or the error the call or the
// notification returns without an interceptor; what the outermost
// CallFunc returns is what the caller gets. A wrapper that refuses a call
// returns an error without calling next: nothing is sent. A wrapper must
// call next at most once, and must not return nil without calling it.
type CallFunc func(ctx context.Context, call *Call) error

// callSender sends a Call (see callOp).
type callSender interface {
	send(ctx context.Context) error
}

// sendCall is the innermost CallFunc.
func sendCall(ctx context.Context, call *Call) error { return call.op.send(ctx) }

// errNotSent is returned when a calling interceptor returned nil without
// sending its call.
var errNotSent = errors.New("rpc: a call interceptor returned nil without calling next")

// callOp is a call or notification on its way through the calling
// interceptors, with the typed params the innermost step sends.
type callOp[P any] struct {
	Call
	c      *Conn
	params P
	omit   bool
	pc     *call // the settled call, once next succeeded
	sent   bool
	idBuf  [20]byte
}

func (op *callOp[P]) send(ctx context.Context) error {
	if op.sent {
		return errors.New("rpc: a call interceptor called next twice")
	}
	op.sent = true
	if op.Notification {
		return sendNotification(ctx, op.c, op.Method, op.omit, op.params)
	}
	pc, err := sendRequest(ctx, op.c, op.Method, op.omit, op.params, func(id uint64) {
		op.ID = strconv.AppendUint(op.idBuf[:0], id, 10)
	})
	if err != nil {
		return err
	}
	op.pc = pc
	if pc.hasResult {
		op.Result = pc.result
	}
	return nil
}

// interceptedCall sends a call through the calling interceptors, and
// returns its settled call as sendRequest does.
func interceptedCall[P any](ctx context.Context, c *Conn, method string, omit bool, params P) (*call, error) {
	op := &callOp[P]{c: c, params: params, omit: omit}
	op.Call = Call{Method: method, op: op}
	if !omit {
		op.Params = params
	}
	err := c.interceptCall(ctx, &op.Call)
	switch {
	case err != nil:
		if op.pc != nil {
			c.release(op.pc)
		}
		return nil, err
	case op.pc == nil:
		return nil, errNotSent
	}
	return op.pc, nil
}

// interceptedNotify sends a notification through the calling
// interceptors.
func interceptedNotify[P any](ctx context.Context, c *Conn, method string, omit bool, params P) error {
	op := &callOp[P]{c: c, params: params, omit: omit}
	op.Call = Call{Method: method, Notification: true, op: op}
	if !omit {
		op.Params = params
	}
	err := c.interceptCall(ctx, &op.Call)
	if err == nil && !op.sent {
		return errNotSent
	}
	return err
}
