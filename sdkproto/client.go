package sdkproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

// Defaults of ClientOptions, those of the TypeScript HarnessClient.
const (
	DefaultShutdownTimeout = 1 * time.Second // shutdownTimeoutMs
	DefaultEOFGrace        = 6 * time.Second // disposeEofGraceMs
	DefaultKillGrace       = 3 * time.Second // disposeGraceMs
	DefaultStderrLines     = 400             // lines of stderr kept for diagnostics
	// DefaultMaxQueued is the default of ClientOptions.MaxQueued: a
	// consumer may lag that many notifications behind the runtime.
	DefaultMaxQueued = 1 << 16
)

// ClientOptions configure a Client. A nil *ClientOptions means all
// defaults; a zero field means that field's default.
type ClientOptions struct {
	// RequestTimeout bounds each request (initialize, session/prompt,
	// shutdown) with a *TimeoutError. Zero means no timeout, as upstream;
	// a caller's context deadline applies either way.
	RequestTimeout time.Duration
	// ShutdownTimeout bounds the shutdown request that Close sends.
	ShutdownTimeout time.Duration
	// EOFGrace is how long Close waits for the runtime to exit after
	// closing its stdin, before SIGTERM.
	EOFGrace time.Duration
	// KillGrace is how long Close waits after SIGTERM, and again after
	// SIGKILL.
	KillGrace time.Duration
	// StderrLines is how many of the runtime's last stderr lines are kept
	// for error messages (Launch only).
	StderrLines int
	// MaxQueued bounds the notifications a subscription holds unread; one
	// more fails the subscription with ErrSubscriptionOverflow (Next
	// returns it once the queue is drained). Zero means DefaultMaxQueued;
	// a negative value means unbounded, as upstream. The notification handler never
	// waits for a subscriber, so this bound is what keeps a consumer that
	// stopped reading from holding every notification of the runtime.
	MaxQueued int
	// MaxLineage bounds the subagent edges the Client remembers (ParentOf,
	// session-tree scoping); past it the oldest child is forgotten. Zero
	// means DefaultMaxLineage.
	MaxLineage int
	// Logger receives the connection's diagnostics (dropped lines, write
	// failures); nil logs nothing.
	Logger *slog.Logger
	// OnDrop, when set, is called for every line of the runtime's output
	// that the connection ignores (not JSON, a response to no pending
	// call, ...), with the reason, as rpc.Options.OnDrop is, by NewClient
	// and Launch; AttachConn leaves it to the options its connection was
	// made with. It runs on the connection's reader and must not block
	// for long.
	OnDrop func(rpc.Drop)
	// Responders answer the requests the runtime sends to the client
	// (docs/wire.md §2.6), one method each; make them with Respond. A
	// request for a method without a responder is answered as the
	// TypeScript client answers every request, with or without
	// responders: error -32601 (rpc.CodeMethodNotFound) and the message
	// "method not found: <method>". Two responders for one method are a
	// programming error: NewClient and Launch panic, as rpc.Handle does,
	// and AttachConn returns an error, as it does for a responder's
	// method that its registry already handles.
	Responders []Responder
}

// Responder answers one request method that the runtime sends to the
// client. The runtimes of the revisions read send none, but the protocol
// allows them in both directions (docs/wire.md §2.6), and the Python
// client already hands them to its caller; a Responder answers them as
// they come. The zero Responder answers nothing: make one with Respond.
type Responder struct {
	method   string
	register func(reg *rpc.Registry)
}

// Respond returns a Responder that answers the requests for m with h,
// served as rpc.Handle serves a request: h runs on a goroutine of the
// connection, with a context that ends when the Client closes; its
// result is the answer; an error is answered -32603 with its text (an
// *rpc.Error as it is); params that do not decode into P are answered
// -32602 without calling h; a panic in h is recovered and answered
// -32603.
func Respond[P, R any](m rpc.Method[P, R], h func(ctx context.Context, params P) (R, error)) Responder {
	return Responder{method: m.Name(), register: func(reg *rpc.Registry) { rpc.Handle(reg, m, h) }}
}

// Method returns the name of the method r answers ("" for the zero
// Responder).
func (r Responder) Method() string { return r.method }

func (o *ClientOptions) resolved() ClientOptions {
	var r ClientOptions
	if o != nil {
		r = *o
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&r.ShutdownTimeout, DefaultShutdownTimeout)
	def(&r.EOFGrace, DefaultEOFGrace)
	def(&r.KillGrace, DefaultKillGrace)
	if r.StderrLines <= 0 {
		r.StderrLines = DefaultStderrLines
	}
	switch {
	case r.MaxQueued == 0:
		r.MaxQueued = DefaultMaxQueued
	case r.MaxQueued < 0:
		r.MaxQueued = 0 // unbounded
	}
	if r.MaxLineage <= 0 {
		r.MaxLineage = DefaultMaxLineage
	}
	if r.RequestTimeout < 0 {
		r.RequestTimeout = 0
	}
	return r
}

// Client drives a DeepSeek Harness runtime: it sends initialize,
// session/prompt and shutdown, keeps the session lineage that
// subagent.started reports, and fans the runtime's notifications out to
// subscriptions (see Subscribe and Run). Create one with Launch (a child
// process), NewClient (a pair of streams) or AttachConn. Its methods are
// safe for concurrent use. Close must be called: once it returns, no
// goroutine of the Client (nor of its connection and process handling) is
// left running.
type Client struct {
	conn  *rpc.Conn
	opts  ClientOptions
	child *transport.Child // nil unless made by Launch

	// For a Client not made by Launch, streams are closed by Close after
	// the connection, in order; stdin is the writer whose closing is the
	// "close stdin" step.
	stdin   io.Closer
	streams []io.Closer

	mu      sync.Mutex
	lineage *lineage        // child session -> parent session
	subs    []*Subscription // copied on write: intake takes a snapshot
	count   uint64          // notifications received
	closing bool            // Close has begun: no new requests
	// shutdownFailed is the line Close adds to a launched runtime's
	// stderr tail when its shutdown request failed (see stderrTail).
	shutdownFailed string

	closeOnce sync.Once
	closeErr  error

	// echoed is canceled, with the *echoError as its cause, once the
	// peer has sent the Client one of the Client's own requests.
	echoed     context.Context
	echoCancel context.CancelCauseFunc
}

// NewClient returns a Client talking to a runtime that reads frames from w
// and writes frames to r, and starts reading. The Client owns the pair:
// Close closes w (the runtime sees its input end), then r, when they are
// io.Closers. For the no-goroutine-left promise, r must be an io.Closer
// whose Close interrupts a blocked Read (io.Pipe, os.Pipe, net.Conn do).
func NewClient(r io.Reader, w io.Writer, opts *ClientOptions) *Client {
	c := newClient(opts)
	if wc, ok := w.(io.Closer); ok {
		c.stdin = wc
	}
	if rc, ok := r.(io.Closer); ok {
		c.streams = append(c.streams, rc)
	}
	c.conn = rpc.NewConn(r, w, &rpc.Options{Handler: c.registry(nil), Logger: c.opts.Logger, OnDrop: c.opts.OnDrop})
	c.conn.Start()
	return c
}

// AttachConn returns a Client using conn, a connection created with reg as
// its Options.Handler, and starts conn. The Client installs its
// notification intake as reg's handler of unknown notifications, so reg
// must have none, nor a handler for any of the four notification methods
// (it would hide those notifications from the Client): AttachConn checks
// both before it changes anything and returns an error naming the
// conflict, leaving reg and conn as they were. It also registers on reg,
// for each of initialize, session/prompt and shutdown that reg does not
// handle already, the handler that detects a peer echoing the Client's
// requests (see ErrEchoingPeer). Close closes conn but not its streams.
func AttachConn(conn *rpc.Conn, reg *rpc.Registry, opts *ClientOptions) (*Client, error) {
	if conn == nil || reg == nil {
		return nil, errors.New("sdkproto: AttachConn needs the connection and the registry it was created with")
	}
	if err := attachConflict(reg); err != nil {
		return nil, err
	}
	if err := respondersConflict(opts, reg); err != nil {
		return nil, err
	}
	c := newClient(opts)
	c.registry(reg)
	c.conn = conn
	conn.Start()
	return c, nil
}

// attachConflict reports a registration on reg that would keep
// notifications from a Client's intake.
func attachConflict(reg *rpc.Registry) error {
	if reg.HandlesUnknownNotifications() {
		return errors.New("sdkproto: AttachConn: the registry already handles unknown notifications")
	}
	for _, method := range []string{SessionEvent.Name(), SessionStatus.Name(), SubagentStarted.Name(), SubagentFinished.Name()} {
		if reg.Handles(method) {
			return fmt.Errorf("sdkproto: AttachConn: the registry already handles %s, which the Client must receive", method)
		}
	}
	return nil
}

// respondersConflict reports two responders of opts for one method, or
// one for a method that reg already handles.
func respondersConflict(opts *ClientOptions, reg *rpc.Registry) error {
	if opts == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, r := range opts.Responders {
		switch {
		case r.register == nil:
			continue
		case seen[r.method]:
			return fmt.Errorf("sdkproto: two Responders for %s", r.method)
		case reg != nil && reg.Handles(r.method):
			return fmt.Errorf("sdkproto: AttachConn: the registry already handles %s, which a Responder answers", r.method)
		}
		seen[r.method] = true
	}
	return nil
}

func newClient(opts *ClientOptions) *Client {
	c := &Client{opts: opts.resolved()}
	c.echoed, c.echoCancel = context.WithCancelCause(context.Background())
	c.lineage = newLineage(c.opts.MaxLineage)
	c.lineage.evicted = c.forget
	return c
}

// registry installs the responders, the echo detector and the
// notification intake on reg (a new registry when nil). Requests from the
// runtime without a responder get no handler, so they are answered -32601
// "method not found: <method>", as the TypeScript client does.
func (c *Client) registry(reg *rpc.Registry) *rpc.Registry {
	if reg == nil {
		reg = rpc.NewRegistry()
	}
	if err := respondersConflict(&c.opts, nil); err != nil {
		panic(err.Error())
	}
	for _, r := range c.opts.Responders {
		if r.register != nil {
			r.register(reg)
		}
	}
	for _, method := range []string{Initialize.Name(), SessionPrompt.Name(), Shutdown.Name()} {
		if !reg.Handles(method) {
			rpc.Handle(reg, rpc.NewMethod[json.RawMessage, json.RawMessage](method), c.echoDetector(method))
		}
	}
	reg.HandleUnknownNotification(c.intake)
	return reg
}

// echoDetector handles a request for method, one of the Client's own: a
// runtime never sends those (docs/wire.md §2.6: it sends the client
// notifications, and requests of other methods), so receiving one means
// that the peer echoes what the Client writes (cat, a shell, a tee) and
// that the answer to the Client's own request would be its own answer,
// echoed. The detector fails every call in flight and every later one
// with the *echoError, then answers as the TypeScript client answers a
// request, so the wire is as it was.
func (c *Client) echoDetector(method string) func(context.Context, json.RawMessage) (json.RawMessage, error) {
	return func(context.Context, json.RawMessage) (json.RawMessage, error) {
		c.echoCancel(&echoError{method: method}) // the first cause stays
		return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "method not found: " + method}
	}
}

// Initialize sends initialize and checks the result as the TypeScript
// client does: serverInfo.name and serverInfo.version must be strings,
// else a *ProtocolError "initialize returned no server identity: <json>"
// ("undefined" when the result member is missing). The runtime answers
// once it is ready, so this is also the readiness barrier.
func (c *Client) Initialize(ctx context.Context, params InitializeParams) (InitializeResult, error) {
	var res InitializeResult
	raw, err := call(ctx, c, initializeRaw, params)
	if err != nil {
		return res, err
	}
	if kindOf(raw) != kindObject {
		return res, &ProtocolError{"initialize returned no server identity: " + rawText(raw)}
	}
	if err := res.UnmarshalJSON(raw); err != nil {
		return res, &ProtocolError{"initialize returned no server identity: " + rawText(raw)}
	}
	return res, res.Check()
}

// Prompt sends session/prompt and returns the id of the queued user message
// (not of a reply: see Run to wait for the turn). A result without a string
// messageId is a *ProtocolError "session/prompt returned no message id:
// <json>". Notifications the runtime writes before the result (the receipt
// among them) reach only subscriptions that existed before the call.
//
// blocks must hold at least one block: without any, Prompt sends nothing
// and returns an error wrapping ErrEmptyPrompt, which names the session
// (so that Prompt(ctx, "say hi"), the text taken for the session id, says
// what went wrong).
func (c *Client) Prompt(ctx context.Context, sessionID string, blocks ...ContentBlock) (string, error) {
	if err := checkPromptBlocks(sessionID, blocks); err != nil {
		return "", err
	}
	raw, err := call(ctx, c, sessionPromptRaw, SessionPromptParams{SessionID: sessionID, ContentBlocks: blocks})
	if err != nil {
		return "", err
	}
	var res SessionPromptResult
	if kindOf(raw) != kindObject || res.UnmarshalJSON(raw) != nil || res.Check() != nil {
		return "", &ProtocolError{"session/prompt returned no message id: " + rawText(raw)}
	}
	return res.MessageID, nil
}

// Shutdown sends shutdown (without params) and waits for its result; the
// runtime then stops its sessions and exits. Close calls it for you.
func (c *Client) Shutdown(ctx context.Context) error {
	_, err := call(ctx, c, shutdownRaw, rpc.NoParams{})
	return err
}

// ParentOf returns the parent session of child as recorded from
// subagent.started (the last edge wins), and whether there is one. The
// Client remembers the last ClientOptions.MaxLineage children only.
func (c *Client) ParentOf(child string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.lineage.parent[child]
	return p, ok
}

// Done is closed when the connection to the runtime has ended (the runtime
// closed its output or died, or Close was called).
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// rawText renders a raw result for a protocol error: its compact JSON, or
// "undefined" when the member was missing, as JSON.stringify shows them.
func rawText(raw json.RawMessage) string {
	if raw == nil {
		return "undefined"
	}
	return string(compact(raw))
}

// The Client's descriptors of its three requests: the methods and params
// of Initialize, SessionPrompt and Shutdown with the result kept raw. The
// Client checks results itself, with the TypeScript client's texts, where a
// typed decode would fail with texts of its own, and it ignores whatever
// shutdown returns.
var (
	initializeRaw    = rpc.NewMethod[InitializeParams, json.RawMessage](Initialize.Name())
	sessionPromptRaw = rpc.NewMethod[SessionPromptParams, json.RawMessage](SessionPrompt.Name())
	shutdownRaw      = rpc.NewMethod[rpc.NoParams, json.RawMessage](Shutdown.Name())
)

// errTimeout marks a context ended by the Client's own request timeout.
var errTimeout = errors.New("sdkproto: request timeout")

// call sends one request within the Client's request timeout and returns
// its raw result (nil when the member is absent); its failure is
// classified into the Client's error types.
func call[P any](ctx context.Context, c *Client, m rpc.Method[P, json.RawMessage], params P) (json.RawMessage, error) {
	return callWithin(ctx, c, m, params, c.opts.RequestTimeout, false)
}

// callWithin is call with the given timeout (none when zero); closing is
// set by Close's own shutdown, which is not refused once Close began. The
// call is made on the caller's goroutine: an rpc call ends with its
// context even while the request is stuck behind a runtime that stopped
// reading, so the timeout holds whatever the runtime does.
func callWithin[P any](ctx context.Context, c *Client, m rpc.Method[P, json.RawMessage], params P, timeout time.Duration, closing bool) (json.RawMessage, error) {
	c.mu.Lock()
	refused := c.closing && !closing
	c.mu.Unlock()
	if refused {
		return nil, c.transportErr(ErrClientClosed, false)
	}
	if echo := context.Cause(c.echoed); echo != nil {
		return nil, echo
	}
	// The call ends as soon as the peer is seen to echo, rather than when
	// the echo of the detector's answer comes back, if it does.
	callCtx, cancelCall := context.WithCancelCause(ctx)
	defer cancelCall(nil)
	stop := context.AfterFunc(c.echoed, func() { cancelCall(context.Cause(c.echoed)) })
	defer stop()
	if timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeoutCause(callCtx, timeout, errTimeout)
		defer cancel()
	}
	raw, err := m.Call(callCtx, c.conn, params)
	var rpcErr *rpc.Error
	switch {
	case err == nil:
		return raw, nil
	case context.Cause(c.echoed) != nil:
		// Whatever ended the call (the detector, or the answer it wrote,
		// echoed back), the peer is no runtime.
		return nil, context.Cause(c.echoed)
	case errors.As(err, &rpcErr):
		return nil, responseError(m.Name(), rpcErr)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case callCtx.Err() != nil && context.Cause(callCtx) == errTimeout:
		return nil, &TimeoutError{Method: m.Name(), Timeout: timeout, StderrTail: c.stderrTail()}
	case isTransportFailure(err) || c.conn.Err() != nil:
		c.mu.Lock()
		byClose := c.closing && !closing
		c.mu.Unlock()
		if byClose {
			err = ErrClientClosed
		}
		return nil, c.transportErr(err, true)
	}
	return nil, err
}

// isTransportFailure reports errors that mean the runtime is unreachable.
func isTransportFailure(err error) bool {
	return errors.Is(err, rpc.ErrClosed) || errors.Is(err, rpc.ErrInputEnded) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed)
}

// exitWait is how long a transport error waits for the process to be
// reaped, so that it can report the exit status (the output usually ends
// a moment before the exit is seen).
const exitWait = 200 * time.Millisecond

// transportErr builds a *TransportClosedError with what is known of the
// process; wait lets it wait briefly for the exit status.
func (c *Client) transportErr(cause error, wait bool) *TransportClosedError {
	e := &TransportClosedError{Cause: cause}
	if c.child != nil {
		if wait {
			waitExit(c.child, exitWait)
		}
		e.Exited, e.ExitCode, e.Signal = exitStatus(c.child)
		e.StderrTail = c.stderrTail()
	}
	return e
}

// stderrTail returns the last stderr lines of a launched runtime, and nil
// for a Client not made by Launch. Once Close's shutdown request has
// failed, the line that says so is the tail's last (the lines the runtime
// wrote as Close ended it come before it), and the tail still holds at most
// StderrLines lines. The Client keeps that line itself: the child's tail is
// the child's own.
func (c *Client) stderrTail() []string {
	if c.child == nil {
		return nil
	}
	tail := c.child.StderrTail()
	c.mu.Lock()
	note := c.shutdownFailed
	c.mu.Unlock()
	if note == "" {
		return tail
	}
	tail = append(tail, note)
	return tail[max(0, len(tail)-c.opts.StderrLines):]
}

// CloseInput closes the runtime's input (its stdin for a launched
// runtime) without sending shutdown; requests fail afterwards, while
// notifications keep arriving. The real runtime keeps running queued work
// after its input ends; Close then ends it with the rest of the ladder.
func (c *Client) CloseInput() error {
	switch {
	case c.child != nil:
		return c.child.CloseInput()
	case c.stdin == nil:
		return errors.New("sdkproto: CloseInput: the Client does not own the runtime's input")
	}
	return c.stdin.Close()
}
