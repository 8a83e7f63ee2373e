package rpc

import "context"

// Method describes a request method: its name, the type P of its params and
// the type R of its result. Declare one per method as a package-level
// variable and use it on both sides, so that a call or a handler with the
// wrong types does not compile:
//
//	var Add = rpc.NewMethod[AddParams, AddResult]("math/add")
//
// A Method is a small value, safe to copy and to use from many goroutines.
type Method[P, R any] struct {
	name       string
	omitParams bool
	doc        *Doc // set by Describe; read-only once set
}

// NewMethod returns the descriptor of the request method called name. When
// P is NoParams, calls omit the params member and handlers ignore it. It
// panics when name is empty, a descriptor no peer could mean.
func NewMethod[P, R any](name string) Method[P, R] {
	mustName("NewMethod", name)
	return Method[P, R]{name: name, omitParams: isNoParams[P]()}
}

// Name returns the method's name as it appears on the wire.
func (m Method[P, R]) Name() string { return m.name }

// Call sends a request for m with params on c and waits for its response.
// It returns the decoded result, or an error: an *Error when the peer
// answered with one; ErrInvalidResult (wrapped) when the result does not
// decode into R; ctx.Err() when ctx ended first (the call is abandoned and
// a late response is dropped; under Options.Cancellation the peer is sent
// the policy's cancel notification, when it may have read the request); ErrClosed or ErrInputEnded when the
// connection ended first; the input's read error; or the write error when
// the request could not be sent. A context that is already done sends
// nothing. A result member that is absent leaves R at its zero value.
//
// The request is written, and the response read, by goroutines of the
// Conn, so that the wait ends with ctx whatever the peer does; a request
// that no Write has taken yet when ctx ends is not sent. When ctx cannot
// end (its Done channel is nil, as with context.Background) and c's output
// has SetWriteDeadline, Call may write its own request when nothing else
// is being written, which Close can still interrupt.
func (m Method[P, R]) Call(ctx context.Context, c *Conn, params P) (R, error) {
	var r R
	pc, err := doCall(ctx, c, m.name, m.omitParams, params)
	if err != nil {
		return r, err
	}
	err = decodeResult(c, pc, &r)
	return r, err
}

// Notification describes a notification method: its name and the type P of
// its params. Declare one per notification as a package-level variable.
type Notification[P any] struct {
	name       string
	omitParams bool
	doc        *Doc // set by Describe; read-only once set
}

// NewNotification returns the descriptor of the notification called name.
// When P is NoParams, the params member is omitted. It panics when name is
// empty.
func NewNotification[P any](name string) Notification[P] {
	mustName("NewNotification", name)
	return Notification[P]{name: name, omitParams: isNoParams[P]()}
}

// mustName panics, for the descriptor constructor fn, when name is empty:
// a descriptor is declared once, at init, where a panic is seen at once.
func mustName(fn, name string) {
	if name == "" {
		panic("rpc: " + fn + ": the method name is empty")
	}
}

// Name returns the notification's name as it appears on the wire.
func (n Notification[P]) Name() string { return n.name }

// Notify sends the notification n with params on c. It returns once the
// frame is queued for writing, in order with the Conn's other frames: a
// stream of notifications is written as fast as the peer reads, several
// frames to a Write. It waits, with ctx, while the write queue is full
// (Options.MaxWriteQueue). It returns ErrClosed after Close, the write
// error once the output has failed, ErrFrameTooLarge for a frame over
// MaxFrameSize, or ctx.Err() without sending anything when ctx is already
// done. A frame still queued when the Conn closes is not written: end a
// connection with Shutdown to have the queued frames written first.
func (n Notification[P]) Notify(ctx context.Context, c *Conn, params P) error {
	return notify(ctx, c, n.name, n.omitParams, params)
}

// NoParams is the params type of a method or notification that takes no
// params: the params member is omitted from the frames sent, and whatever a
// peer sends as params is ignored.
type NoParams struct{}

func isNoParams[P any]() bool {
	var p P
	_, ok := any(p).(NoParams)
	return ok
}
