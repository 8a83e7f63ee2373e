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

// This file holds the package's exported errors, so that a reader finds
// them in one place: those a Client returns, those a Server answers with,
// and those of decoding. The validation errors (ErrReasoningEffort,
// ErrMaxTokens, *ImageError and its codes, ErrNoAttachmentStore) are
// declared in validate.go, beside the checks whose order and texts they
// follow.

// The errors of a Client and its subscriptions, besides ErrUnknownMethod,
// ErrEchoingPeer, *ResponseError, *TimeoutError, *TransportClosedError,
// *ProtocolError and *RunWaitError below. Every error a Client returns is one of them, a
// context error of the caller's ctx, or an error of the caller's own
// making (such as params that do not encode).
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
	// ErrSubscriptionOverflow fails a subscription that has more unread
	// notifications than ClientOptions.MaxQueued allows.
	ErrSubscriptionOverflow = errors.New("sdkproto: subscription overflow: too many unread notifications")
	// ErrEmptyPrompt is wrapped by the error of Prompt, Run, RunFunc and
	// Stream given no content block; nothing is sent. The contract
	// refuses a session/prompt whose contentBlocks is empty (the runtime
	// would queue it as an empty user message); a block with an empty
	// text, TextBlock(""), is valid and is sent.
	ErrEmptyPrompt = errors.New("sdkproto: a prompt needs at least one content block")
)

// ErrEchoingPeer matches (errors.Is) the error of every request of a
// Client whose peer echoes what the Client writes: a program such as cat
// or tee, or a shell, started where a runtime was expected. The Client
// detects it when the peer sends it one of the Client's own requests
// (initialize, session/prompt or shutdown), which a runtime never sends
// (docs/wire.md §2.6); the request in flight then fails at once, as does
// every later one, Close's shutdown included, with the text "sdkproto:
// the peer echoed our <method> request back: is it a DSH runtime (such as
// dsh --profile sdk)?". Without the detection the echo of the Client's
// own answer to that request would settle the request, as a refusal
// "method not found" the runtime never made.
var ErrEchoingPeer = errors.New("sdkproto: the peer echoes the client's requests back")

// echoError is the error of a Client's requests once its peer echoed one.
type echoError struct{ method string }

func (e *echoError) Error() string {
	return "sdkproto: the peer echoed our " + e.method + " request back: is it a DSH runtime (such as dsh --profile sdk)?"
}

// Is makes errors.Is(err, ErrEchoingPeer) hold.
func (e *echoError) Is(target error) bool { return target == ErrEchoingPeer }

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

// ProtocolError is a malformed-payload error with the exact text the
// upstream SDK clients raise as SdkProtocolError.
type ProtocolError struct{ Message string }

// Error returns the message.
func (e *ProtocolError) Error() string { return e.Message }

// A RunWaitError is how Run ends when session/prompt was answered but
// the interval it owns did not follow: ctx ended, or the runtime went away,
// while Run was waiting for the receipt of the prompt (Receipt false) or,
// after it, for the root session's idle status (Receipt true). Err is the
// cause: errors.Is and errors.As see through to it (context.Canceled,
// context.DeadlineExceeded, a *TransportClosedError, ...).
type RunWaitError struct {
	SessionID string // the root session of the run
	MessageID string // what session/prompt returned
	Receipt   bool   // whether the receipt had arrived
	Err       error
}

// Awaited says what Run was waiting for, in the protocol's terms.
func (e *RunWaitError) Awaited() string {
	if e.Receipt {
		return fmt.Sprintf("session.status idle for session %q (the end of the turn)", e.SessionID)
	}
	return fmt.Sprintf("the receipt of message %s (session.event agent/inbox/spliced inserting it into session %q)", e.MessageID, e.SessionID)
}

// Error says what was answered and what Run was waiting for, then the cause.
func (e *RunWaitError) Error() string {
	return "sdkproto: session/prompt was answered, then waiting for " + e.Awaited() + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *RunWaitError) Unwrap() error { return e.Err }

// A TurnFailedError says that a turn ran and did not complete, as the
// runtime reports it: in the data.reason of the session's turn/end event,
// while the session/prompt request itself succeeded. RunResult.Err and
// Notification.TurnErr return it.
type TurnFailedError struct {
	SessionID string // the session whose turn it was
	MessageID string // the prompt's message id; "" from Notification.TurnErr
	// Kind is data.reason.kind of the turn/end: TurnError, TurnAborted,
	// TurnMaxTokens, TurnBlocked, TurnInterrupted, or a kind a plugin
	// added; "" when no turn/end said how the turn ended (none came
	// before the session went idle, or its kind was not a string).
	Kind TurnEndKind
	// Reason is data.reason as sent, when it decoded: Reason.Error is the
	// model's failure of an error turn, Reason.Reason who aborted an
	// aborted one.
	Reason TurnEndReason
}

// Error says which turn ended how: "sdkproto: the turn of message <id> on
// session "<s>" failed: <the model's failure>", "... was aborted (<who>)",
// "... hit the output cap (max-tokens): its reply may be cut short", or
// "... ended <kind>".
func (e *TurnFailedError) Error() string {
	turn := fmt.Sprintf("the turn on session %q", e.SessionID)
	if e.MessageID != "" {
		turn = fmt.Sprintf("the turn of message %s on session %q", e.MessageID, e.SessionID)
	}
	switch e.Kind {
	case "":
		turn = "its turn"
		if e.MessageID != "" {
			turn = "the turn of message " + e.MessageID
		}
		return fmt.Sprintf("sdkproto: session %q went idle with no turn/end saying how %s ended", e.SessionID, turn)
	case TurnError:
		if f := e.Reason.Error; f != nil {
			msg := "sdkproto: " + turn + " failed: " + f.Message
			var details []string
			if f.Code != "" {
				details = append(details, f.Code)
			}
			if f.Status != nil {
				details = append(details, "status "+strconv.Itoa(*f.Status))
			}
			if len(details) > 0 {
				msg += " (" + strings.Join(details, ", ") + ")"
			}
			return msg
		}
		return "sdkproto: " + turn + " failed"
	case TurnAborted:
		msg := "sdkproto: " + turn + " was aborted"
		if r := e.Reason.Reason; r != nil && r.Kind != "" {
			who := r.Kind
			if r.Reason != "" {
				who += ": " + r.Reason
			}
			msg += " (" + who + ")"
		}
		return msg
	case TurnMaxTokens:
		return "sdkproto: " + turn + " hit the output cap (max-tokens): its reply may be cut short"
	}
	return "sdkproto: " + turn + " ended " + string(e.Kind)
}

// The errors a Server answers requests with (-32603 and the text), with
// upstream's exact texts.
var (
	// ErrNotInitialized answers a session/prompt that arrives before an
	// initialize succeeded.
	ErrNotInitialized = errors.New("SDK server is not initialized")
	// ErrShuttingDown answers a session/prompt that arrives after shutdown
	// began.
	ErrShuttingDown = errors.New("SDK server is shutting down")
	// ErrTeardownFailed answers a shutdown whose Runtime.Shutdown returned
	// several failures (an errors.Join of them).
	ErrTeardownFailed = errors.New("SDK server teardown failed")
	// ErrNotServing is returned by an Emitter whose Server has no
	// connection yet (no request arrived and Serve was not called).
	ErrNotServing = errors.New("sdkproto: the server is not serving a connection")
)

// The errors of decoding a payload as a type it is not.
var (
	// ErrNoEnvelope is returned when decoding an Event from a value that is
	// not an object with a string type.
	ErrNoEnvelope = errors.New("sdkproto: not an event envelope (an object with a string type)")
	// ErrEventType is wrapped by the Event accessors when the event has
	// another type.
	ErrEventType = errors.New("sdkproto: event has another type")
	// ErrNotificationMethod is returned by the typed accessors of
	// Notification for a notification of another method.
	ErrNotificationMethod = errors.New("sdkproto: notification has another method")
)

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
