package rpc

import (
	"log/slog"
	"time"
)

// Default limits of a Conn, used when an Options field is zero.
const (
	// DefaultMaxFrameSize is the longest line, in bytes without its LF, that
	// a Conn reads; a longer line is skipped and reported as DropOversize.
	DefaultMaxFrameSize = 64 << 20
	// DefaultMaxConcurrentRequests is how many request handlers a Conn runs
	// at once; further requests wait, in arrival order, for a free slot.
	DefaultMaxConcurrentRequests = 256
	// DefaultMaxWaitingRequests is how many requests may wait for a
	// handler slot; further requests are answered with CodeOverloaded.
	DefaultMaxWaitingRequests = 1024
	// DefaultMaxWaitingBytes bounds the lines of the requests waiting for
	// a handler slot, in bytes; a request that would pass it is answered
	// with CodeOverloaded (one request may always wait alone).
	DefaultMaxWaitingBytes = 16 << 20
	// DefaultMaxWriteQueue bounds the frames waiting to be written, in
	// bytes; a frame that does not fit waits for room (one larger than the
	// bound waits for an empty queue and goes alone).
	DefaultMaxWriteQueue = 1 << 20
	// MaxDepth is the deepest nesting of arrays and objects a frame may
	// have; a deeper frame is dropped (DropTooDeep) before any decoder sees
	// it, so that no recursive decoder can exhaust the goroutine stack.
	MaxDepth = 10000
)

// Options configure a Conn. A nil *Options means all defaults; a zero field
// means that field's default.
type Options struct {
	// Handler dispatches the requests and notifications the peer sends.
	// Nil answers every request with CodeMethodNotFound and drops every
	// notification, as a peer without handlers does.
	Handler *Registry

	// MaxFrameSize is the longest line accepted, in bytes, LF excluded.
	// Zero means DefaultMaxFrameSize.
	MaxFrameSize int

	// MaxConcurrentRequests bounds how many request handlers run at once.
	// Zero means DefaultMaxConcurrentRequests. Requests beyond the bound
	// wait in arrival order; reading goes on meanwhile, so responses to
	// this side's own calls are never held behind them.
	MaxConcurrentRequests int

	// MaxWaitingRequests bounds how many requests may wait for a handler
	// slot, and MaxWaitingBytes the total length of their lines. A request
	// that finds every slot taken and the waiting room full is answered at
	// once with CodeOverloaded, and reading goes on. Zero means
	// DefaultMaxWaitingRequests and DefaultMaxWaitingBytes; a negative
	// MaxWaitingRequests lets no request wait.
	MaxWaitingRequests int
	MaxWaitingBytes    int

	// MaxWriteQueue bounds the frames waiting to be written, in bytes. Zero
	// means DefaultMaxWriteQueue. A caller whose frame does not fit waits
	// for room with its context; a handler's reply waits with its handler
	// slot taken; and the read loop waits before it reads on when it has a
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

	// OnDrop, when set, is called on the read loop for every line the Conn
	// ignores, with the reason. It must not block for long: the next line is
	// read after it returns.
	OnDrop func(Drop)

	// Logger, when set, receives diagnostics: dropped lines at debug level,
	// handler panics and write failures at error level. Nil logs nothing.
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

func (o *Options) cancellation() *CancelPolicy {
	if o == nil || o.Cancellation == nil {
		return nil
	}
	p := *o.Cancellation // a copy: the Conn's policy does not change under it
	if p.Method == "" || p.ParseParams == nil || p.Params == nil {
		panic("rpc: a CancelPolicy needs Method, ParseParams and Params")
	}
	return &p
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

func (o *Options) maxWaitingRequests() int {
	switch {
	case o == nil || o.MaxWaitingRequests == 0:
		return DefaultMaxWaitingRequests
	case o.MaxWaitingRequests < 0:
		return 0
	}
	return o.MaxWaitingRequests
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

// Drop describes a line that a Conn ignored. The peer is never told.
type Drop struct {
	Reason DropReason
	// Line is the trimmed line. It is valid only during the OnDrop call,
	// and nil for DropOversize and DropUnterminated.
	Line []byte
	// Size is the length of the line as read, in bytes, LF excluded.
	Size int64
	// Method names the method of a notification that was dropped.
	Method string
	// Err is the parse or decoding error behind the drop, if any.
	Err error
}

// DropReason says why a line was ignored.
type DropReason uint8

// The reasons a line is dropped.
const (
	// DropMalformed: the line is not exactly one valid JSON value.
	DropMalformed DropReason = iota + 1
	// DropNotObject: the line is JSON but not an object (arrays, and so
	// batches, included).
	DropNotObject
	// DropUnclassified: an object with neither a string or number id nor a
	// string method.
	DropUnclassified
	// DropOversize: the line is longer than MaxFrameSize; it was skipped
	// without being held in memory.
	DropOversize
	// DropTooDeep: the line nests arrays and objects deeper than MaxDepth.
	DropTooDeep
	// DropUnterminated: the input ended after bytes that no LF terminated.
	DropUnterminated
	// DropUnmatchedResponse: a response whose id matches no pending call
	// (unknown, already settled, or abandoned by its context).
	DropUnmatchedResponse
	// DropUnhandledNotification: a notification with no handler.
	DropUnhandledNotification
	// DropInvalidParams: a request or notification whose params do not
	// decode into the handler's type (a request is answered
	// CodeInvalidParams; Err has the decoder's error, which the answer
	// does not carry), or a cancel notification whose params do not parse.
	DropInvalidParams
	// DropShutdown: a request read after Shutdown began; it is not served.
	DropShutdown
	// DropUnmatchedCancel: a cancel notification (Options.Cancellation)
	// naming no request that is running or waiting: unknown, or finished.
	DropUnmatchedCancel
)

var dropReasonNames = [...]string{
	DropMalformed:             "malformed JSON",
	DropNotObject:             "not a JSON object",
	DropUnclassified:          "neither request, response nor notification",
	DropOversize:              "line longer than the maximum frame size",
	DropTooDeep:               "nesting deeper than the maximum depth",
	DropUnterminated:          "unterminated line at end of input",
	DropUnmatchedResponse:     "response to no pending call",
	DropUnhandledNotification: "notification without a handler",
	DropInvalidParams:         "params do not decode",
	DropShutdown:              "request after shutdown began",
	DropUnmatchedCancel:       "cancellation of no running request",
}

// String describes the reason in a few words.
func (r DropReason) String() string {
	if int(r) < len(dropReasonNames) && dropReasonNames[r] != "" {
		return dropReasonNames[r]
	}
	return "unknown drop reason"
}
