package sdkproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/linerpc/linerpc/rpc"
)

// The errors of a Client, besides *ProtocolError (a malformed result or
// event, with the upstream SdkProtocolError texts). Every error a Client
// returns is one of these, a context error of the caller's ctx, or an error
// of the caller's own making (such as params that do not encode).

var (
	// ErrClientClosed is the cause of the *TransportClosedError returned by
	// calls made after Close, and of calls and subscriptions cut off by it.
	ErrClientClosed = errors.New("DeepSeek Harness runtime client is closed")
	// ErrRuntimeClosed is the cause of the *TransportClosedError a
	// subscription returns once the runtime's output has ended (after its
	// queued notifications were read).
	ErrRuntimeClosed = errors.New("DeepSeek Harness runtime closed")
	// ErrSubscriptionClosed is returned by Next after the subscription's
	// own Close (TypeScript: "notification subscription closed").
	ErrSubscriptionClosed = errors.New("notification subscription closed")
)

// ErrUnknownMethod is the runtime's refusal of a method it does not
// serve. A Server answers such a request with -32603 and the text
// "unknown DeepSeek Harness SDK runtime method: <method>", as the upstream
// runtime does; the error its handler returns wraps ErrUnknownMethod. On
// the client side, errors.Is(err, ErrUnknownMethod) holds for the
// *ResponseError of exactly that answer, so a caller can tell a runtime
// of another revision (which lacks a method) from one that failed it.
var ErrUnknownMethod = errors.New("unknown DeepSeek Harness SDK runtime method")

// unknownMethod is the error that answers a request for method.
func unknownMethod(method string) error {
	return fmt.Errorf("%w: %s", ErrUnknownMethod, method)
}

// ResponseError is an error response of the runtime to one request
// (JsonRpcResponseError upstream). It wraps the *rpc.Error it came from, so
// errors.As works with either type.
type ResponseError struct {
	Method string // the request's method
	// Code is the error code; CodeMissing reports that the error object had
	// no integer code (absent, not a number, or fractional).
	Code        rpc.Code
	CodeMissing bool
	// Message is the error message, or "JSON-RPC error" when the object had
	// no string message.
	Message string
	// Data is the raw data member: nil when absent, "null" when null.
	Data json.RawMessage
	Err  *rpc.Error
}

// Error returns "<method>: <message> (code <code>)".
func (e *ResponseError) Error() string {
	if e.CodeMissing {
		return e.Method + ": " + e.Message
	}
	return e.Method + ": " + e.Message + " (code " + strconv.FormatInt(int64(e.Code), 10) + ")"
}

// Unwrap returns the underlying *rpc.Error.
func (e *ResponseError) Unwrap() error { return e.Err }

// Is reports whether target is ErrUnknownMethod and e is the runtime's
// unknown-method answer to e.Method: code -32603 with the message
// unknownMethod gives. The text is the only mark the runtime puts on it,
// so it is matched exactly, method included.
func (e *ResponseError) Is(target error) bool {
	return target == ErrUnknownMethod && !e.CodeMissing && e.Code == rpc.CodeInternalError &&
		e.Message == unknownMethod(e.Method).Error()
}

// TimeoutError reports that a request got no response within the Client's
// per-request timeout. The request is abandoned (no cancel frame exists; the
// runtime may still do the work) and a late response is dropped.
type TimeoutError struct {
	Method     string
	Timeout    time.Duration
	StderrTail []string // the runtime's last stderr lines, when the Client owns a process
}

// Error returns the TypeScript client's text, "<method> timed out after
// <ms>ms waiting for the DeepSeek Harness runtime", followed by the stderr
// tail when there is one.
func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("%s timed out after %dms waiting for the DeepSeek Harness runtime", e.Method, e.Timeout.Milliseconds())
	return withTail(msg, e.StderrTail)
}

// Unwrap returns context.DeadlineExceeded, so that errors.Is treats a
// request timeout like any other deadline.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// TransportClosedError reports that the runtime can no longer be talked to:
// its output ended, the process exited, a write failed, or the Client was
// closed. Cause says which (ErrClientClosed, rpc.ErrInputEnded, a write or
// read error, ...); errors.Is sees through to it.
type TransportClosedError struct {
	Cause error
	// Exited reports that the runtime process has exited; ExitCode is its
	// exit status (-1 when a signal ended it) and Signal the signal's name.
	Exited   bool
	ExitCode int
	Signal   string
	// StderrTail holds the runtime's last stderr lines (a Client that owns
	// a process only).
	StderrTail []string
}

// Error joins with LF, as the TypeScript client does: the cause, then
// "exit code: <n>" (or "signal: <name>"), then "stderr tail:" and the lines.
func (e *TransportClosedError) Error() string {
	msg := "DeepSeek Harness runtime closed"
	if e.Cause != nil {
		msg = e.Cause.Error()
	}
	if e.Exited {
		if e.Signal != "" {
			msg += "\nsignal: " + e.Signal
		} else {
			msg += "\nexit code: " + strconv.Itoa(e.ExitCode)
		}
	}
	return withTail(msg, e.StderrTail)
}

// Unwrap returns the cause.
func (e *TransportClosedError) Unwrap() error { return e.Cause }

func withTail(msg string, tail []string) string {
	if len(tail) == 0 {
		return msg
	}
	return msg + "\nstderr tail:\n" + strings.Join(tail, "\n")
}

// responseError converts an error response of the rpc layer.
func responseError(method string, e *rpc.Error) *ResponseError {
	return &ResponseError{Method: method, Code: e.Code, CodeMissing: e.CodeMissing,
		Message: e.Message, Data: e.Data, Err: e}
}
