package rpc

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/linerpc/linerpc/internal/lines"
)

// Default limits of a Conn, used when an Options field is zero.
const (
	// DefaultMaxFrameSize is the longest line, in bytes without its LF, that
	// a Conn reads; a longer line is skipped and reported as DropOversize.
	DefaultMaxFrameSize = 64 << 20
	// DefaultMaxConcurrentRequests is how many request handlers a Conn runs
	// at once that have not yielded; further requests wait, in arrival
	// order, for a free slot.
	DefaultMaxConcurrentRequests = 256
	// DefaultMaxWaiting is how many requests and notifications may wait
	// for their turn; a further request is answered with CodeOverloaded,
	// and a further notification holds the reading back.
	DefaultMaxWaiting = 1024
	// DefaultMaxWaitingBytes bounds the lines of the requests and
	// notifications waiting for their turn, in bytes, as DefaultMaxWaiting
	// bounds their count.
	DefaultMaxWaitingBytes = 16 << 20
	// DefaultMaxWriteQueue bounds the frames waiting to be written, in
	// bytes; a frame that does not fit waits for room (one larger than the
	// bound waits for an empty queue and goes alone).
	DefaultMaxWriteQueue = 1 << 20
	// MaxDepth is the deepest nesting of arrays and objects a frame may
	// have; a deeper frame is dropped (DropTooDeep) before any decoder sees
	// it, so that no recursive decoder can exhaust the goroutine stack.
	MaxDepth = 10000
	// MaxHeaderBytes bounds a header block of ContentLengthFraming, its
	// blank line included; a longer one is dropped (DropBadHeader).
	MaxHeaderBytes = lines.MaxHeaderBytes
)

// Options configure a Conn. A nil *Options means all defaults; a zero field
// means that field's default.
type Options struct {
	// BaseContext, when set, is the parent of the Conn's context, and so
	// of every handler's: its values (a peer's address, an authenticated
	// user) reach every handler, as http.Server's BaseContext and
	// ConnContext do for requests. Its end does not end the Conn nor its
	// handlers' contexts: Close and Shutdown do. Nil means
	// context.Background().
	BaseContext context.Context

	// Handler dispatches the requests and notifications the peer sends.
	// Nil answers every request with CodeMethodNotFound and drops every
	// notification, as a peer without handlers does.
	Handler *Registry

	// Framing is how frames are laid out on the stream: NewlineFraming
	// (the zero value), ContentLengthFraming (LSP, DAP), or DetectFraming,
	// which decides from the peer's first bytes. See Framing.
	Framing Framing

	// Batches, when set, serves JSON-RPC 2.0 batches: a frame that is an
	// array has each element served as a lone frame would be (the same
	// bounds, policies and drops), and the responses to its requests are
	// written together, in one array, once the last is ready (none for a
	// batch of notifications; an empty array is answered
	// CodeInvalidRequest with a null id). The arrays being collected hold
	// at most MaxFrameSize bytes in all, so that none is longer than a
	// frame may be: a response that would pass the bound is replaced by a
	// CodeInternalError error with its id when that fits, and left out
	// (logged) when not. Off, the default,
	// an array is dropped (DropNotObject) and nothing is answered, as the
	// DeepSeek Harness and MCP peers expect, unless it holds responses
	// only: they settle this side's calls (they answer a Batch, which can
	// be sent either way).
	Batches bool

	// AnswerInvalid, when set, reads frames as JSON-RPC 2.0 does and
	// answers those that are not valid as its §5.1 and §7 show, with an
	// error whose id is null. An object with a string method is a
	// notification without an id, and a request with a string, a number or
	// a null id (a request whose id is null is served and answered with a
	// null id; without the option it is a notification). An object without
	// a method is a response when it has a result or an error, whatever its
	// id. Everything else is answered: CodeParseError for a frame that is
	// not JSON (or a malformed Content-Length header block), and
	// CodeInvalidRequest for a value that is not an object, an object with
	// a method that is not a string, an id of another kind, or neither a
	// method nor a result or an error, a request or notification nested
	// deeper than MaxDepth, or longer than MaxFrameSize when its first KiB
	// shows its method, and an array while Batches is off (an empty one
	// included). In a batch, each invalid element gets its own
	// CodeInvalidRequest in the batch's array. Off, the default, such
	// frames are dropped (OnDrop) and the peer is told nothing, as the
	// DeepSeek Harness, MCP and LSP peers expect.
	//
	// Responses are never answered, with or without it. Every answer to an
	// invalid frame is a response (it has an error and no method), so two
	// ends that both answer invalid frames never answer each other's
	// answers. The jsonrpc member is not checked.
	AnswerInvalid bool

	// CheckParams, when set, checks the params of every request and
	// notification of a method registered with Handle or
	// HandleNotification, once they have decoded and before the handler's
	// turn: method is the method's name, and params the raw member (nil
	// when absent), valid until CheckParams returns. A non-nil error
	// refuses the frame: a request is answered with the error when it is
	// an *Error, and otherwise with CodeInvalidParams and "invalid params: "
	// followed by the error's text; a notification is dropped. Either is
	// reported to OnDrop as DropInvalidParams. It runs on the reader, as
	// decoding does, so it must not block, and it is called concurrently
	// by every Conn that shares the Options. A panic in it is recovered:
	// the frame is refused, a request answered CodeInternalError. Package
	// openrpc/validator checks params against their JSON Schema this way.
	CheckParams func(method string, params json.RawMessage) error

	// MaxFrameSize is the longest frame accepted, in bytes: a line, LF
	// excluded, or a Content-Length body, headers excluded. Zero means
	// DefaultMaxFrameSize.
	MaxFrameSize int

	// MaxConcurrentRequests bounds how many request handlers run at once
	// without having yielded (see Yield): a handler that yielded, by
	// calling its peer with its context or by Yield, holds no slot. Zero
	// means DefaultMaxConcurrentRequests. Requests beyond the bound wait
	// in arrival order; reading goes on meanwhile, so responses to this
	// side's own calls are never held behind them. Handlers alive,
	// yielded or not, are capped at twice the bound: a request whose turn
	// comes at the cap is answered CodeOverloaded, and a notification
	// handler's yield is refused (it holds the line until it returns), so
	// that two ends calling each other back under load never wait for
	// each other for ever.
	MaxConcurrentRequests int

	// MaxWaiting bounds how many requests and notifications may wait for
	// their turn in the line, and MaxWaitingBytes the total length of
	// their lines (one solo entry, a notification or an exclusive request
	// next in line, waits outside these bounds). A request that finds no
	// room is answered at once with CodeOverloaded, and reading goes on; a
	// notification that finds no room holds the reading back until there
	// is room. Zero means DefaultMaxWaiting and DefaultMaxWaitingBytes; a
	// negative MaxWaiting lets nothing wait.
	MaxWaiting      int
	MaxWaitingBytes int

	// MaxWriteQueue bounds the frames waiting to be written, in bytes. Zero
	// means DefaultMaxWriteQueue. A caller whose frame does not fit waits
	// for room with its context; a handler's reply waits with its handler
	// counted alive; and the reader waits before it reads on when it has a
	// reply of its own to queue (method not found, invalid params,
	// overloaded): a peer that sends requests without reading the replies
	// is read no further until it does. See the package documentation for
	// the memory this bounds.
	MaxWriteQueue int

	// WriteTimeout, when set, ends the connection with ErrWriteTimeout when
	// a Write makes no progress for that long: a peer that stops reading
	// is then cut off instead of holding the queued frames and the callers
	// that wait for room. On a stream with SetWriteDeadline (net.Conn,
	// os.Pipe files) the Write is interrupted; on any other the
	// connection ends while the Write goes on until it returns. Zero means
	// no timeout.
	WriteTimeout time.Duration

	// OnDrop, when set, is called by the reader for every frame the Conn
	// does not serve, with the reason: ignored, or answered with an error
	// (Drop.Reply). It must not block for long: the next frame is read
	// after it returns.
	OnDrop func(Drop)

	// Logger, when set, receives diagnostics: dropped lines at debug level,
	// handler panics and write failures at error level. A panic's record
	// says where it happened ("at", the function and file:line that
	// panicked) and lists its stack, one frame per element ("stack").
	// Nil logs nothing.
	Logger *slog.Logger

	// Cancellation, when set, cancels requests across the wire both ways:
	// the peer's cancel notifications end the context of the requests they
	// name, and this side's calls whose context ends before their response
	// send one (see CancelPolicy, MCPCancellation, LSPCancellation). Nil,
	// the default, sends and handles no cancellation: nothing on the wire
	// changes, as the DeepSeek Harness peers expect.
	Cancellation *CancelPolicy

	// Intercept, when set, wraps the serving of every request and
	// notification of the peer's: it is given the function that serves
	// them (decoded params, handler, recovered panic) and returns the one
	// the Conn calls instead. See ServeFunc for what the wrapper sees and
	// may do. It is called once, by NewConn.
	Intercept func(next ServeFunc) ServeFunc

	// InterceptCall, when set, wraps every call and notification this
	// side sends: it is given the function that sends one (and waits for
	// the response of a call) and returns the one used instead, for each
	// call. See CallFunc.
	InterceptCall func(next CallFunc) CallFunc
}

// cancellation returns the preempter of the cancellation policy, or nil.
func (o *Options) cancellation() *cancelling {
	if o == nil || o.Cancellation == nil {
		return nil
	}
	return newCancelling(*o.Cancellation) // a copy: the Conn's policy does not change under it
}

func (o *Options) intercept() func(ServeFunc) ServeFunc {
	if o == nil {
		return nil
	}
	return o.Intercept
}

func (o *Options) interceptCall() func(CallFunc) CallFunc {
	if o == nil {
		return nil
	}
	return o.InterceptCall
}

func (o *Options) maxFrameSize() int {
	if o == nil || o.MaxFrameSize <= 0 {
		return DefaultMaxFrameSize
	}
	return o.MaxFrameSize
}

func (o *Options) maxConcurrentRequests() int {
	if o == nil || o.MaxConcurrentRequests <= 0 {
		return DefaultMaxConcurrentRequests
	}
	return o.MaxConcurrentRequests
}

func (o *Options) maxWaiting() int {
	switch {
	case o == nil || o.MaxWaiting == 0:
		return DefaultMaxWaiting
	case o.MaxWaiting < 0:
		return 0
	}
	return o.MaxWaiting
}

func (o *Options) maxWaitingBytes() int {
	if o == nil || o.MaxWaitingBytes <= 0 {
		return DefaultMaxWaitingBytes
	}
	return o.MaxWaitingBytes
}

func (o *Options) maxWriteQueue() int {
	if o == nil || o.MaxWriteQueue <= 0 {
		return DefaultMaxWriteQueue
	}
	return o.MaxWriteQueue
}

func (o *Options) writeTimeout() time.Duration {
	if o == nil || o.WriteTimeout <= 0 {
		return 0
	}
	return o.WriteTimeout
}

func (o *Options) handler() *Registry {
	if o == nil {
		return nil
	}
	return o.Handler
}

func (o *Options) onDrop() func(Drop) {
	if o == nil {
		return nil
	}
	return o.OnDrop
}

func (o *Options) logger() *slog.Logger {
	if o == nil {
		return nil
	}
	return o.Logger
}

func (o *Options) baseContext() context.Context {
	if o == nil || o.BaseContext == nil {
		return context.Background()
	}
	return context.WithoutCancel(o.BaseContext)
}

func (o *Options) framing() Framing {
	if o == nil {
		return NewlineFraming
	}
	return o.Framing
}

func (o *Options) batches() bool { return o != nil && o.Batches }

func (o *Options) answerInvalid() bool { return o != nil && o.AnswerInvalid }

func (o *Options) checkParams() func(string, json.RawMessage) error {
	if o == nil {
		return nil
	}
	return o.CheckParams
}
