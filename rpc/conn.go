package rpc

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linerpc/linerpc/internal/wire"
)

// Conn is one end of a JSON-RPC 2.0 connection over a byte stream: it reads
// frames from r, dispatches requests and notifications to its Registry in
// the order of the line (see the package documentation), settles its own
// calls with the responses, and writes frames to w, whole frames only: a
// frame is never split across writes, and frames that queue up behind a
// slow Write go out together. Both ends are alike: a Conn can serve and
// call at the same time.
//
// A Conn runs on goroutines of its own, its workers: one reads while there
// is input to read, one runs each handler whose turn has come, and one
// writes while frames wait. A caller's goroutine never does the peer's
// work: it encodes its frame and waits, and the wait ends with its context
// or with Close (a lone caller may write its own frame and read its own
// response, where that wait still ends so).
//
// A Conn never closes r or w: they belong to the caller.
type Conn struct {
	framing Framing // Options.Framing (see Conn.Framing for DetectFraming's choice)
	framer  framer
	// The input's and the output's deadlines, when they have ones that
	// work (net.Conn, pipes from os.Pipe): Close interrupts a blocked Read
	// or Write with them.
	readDeadline  interface{ SetReadDeadline(time.Time) error }
	writeDeadline interface{ SetWriteDeadline(time.Time) error }
	w             io.Writer
	writeTimeout  time.Duration

	reg           *Registry
	maxFrameSize  int
	onDrop        func(Drop)
	log           *slog.Logger
	preempt       *cancelling // nil: no cancellation on the wire
	intercept     ServeFunc   // the serving interceptors' chain; nil without one
	interceptCall CallFunc    // the calling interceptors' chain; nil without one

	// ctx is the parent of the handlers' contexts; it is cancelled when
	// the Conn closes, with why as its cause. It carries the Conn for
	// ConnFromContext.
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{} // closed when the Conn ends (see setPhase)
	wake   chan struct{} // parked workers wait on it (worker.go)
	// watchdog ticks while the reading role is lent (see lend); made by
	// the first lend, changed under the lock.
	watchdog *time.Timer
	lastID   atomic.Uint64 // the id of the last request sent
	// callPool keeps settled calls for reuse (see newCall).
	callPool sync.Pool
	warned   atomic.Bool // a framing warning was logged (see framingWarning)
	// batchHeld counts the bytes of the responses held for the peer's
	// batches (batch.go), bounded by MaxFrameSize.
	batchHeld atomic.Int64
	// rd is the reader's: whoever holds the reading role (read.go).
	rd reader

	mu sync.Mutex
	st state // see state.go: changed only between lock and unlock
}

// NewConn returns a connection that reads frames from r and writes frames to
// w. It does not read until Start is called; notifications may be sent
// before that, but a call fails with ErrNotStarted, since nothing would
// read its response. opts may be nil for defaults. r and w must not be nil.
func NewConn(r io.Reader, w io.Writer, opts *Options) *Conn {
	switch {
	case r == nil:
		panic("rpc: NewConn with a nil reader")
	case w == nil:
		panic("rpc: NewConn with a nil writer")
	}
	c := &Conn{
		framing:      opts.framing(),
		w:            w,
		writeTimeout: opts.writeTimeout(),
		reg:          opts.handler(),
		maxFrameSize: opts.maxFrameSize(),
		onDrop:       opts.onDrop(),
		log:          opts.logger(),
		preempt:      opts.cancellation(),
		done:         make(chan struct{}),
		wake:         make(chan struct{}),
	}
	c.framer = newFramer(c.framing, r, c.maxFrameSize, func() { c.update(func(*state) {}) })
	// A deadline that cannot be set (a file without one) is none.
	if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok && d.SetReadDeadline(time.Time{}) == nil {
		c.readDeadline = d
	}
	if d, ok := w.(interface{ SetWriteDeadline(time.Time) error }); ok && d.SetWriteDeadline(time.Time{}) == nil {
		c.writeDeadline = d
	}
	if in := opts.intercept(); in != nil {
		c.intercept = in(serveHandler)
	}
	if in := opts.interceptCall(); in != nil {
		c.interceptCall = in(sendCall)
	}
	c.ctx, c.cancel = context.WithCancelCause(opts.baseContext())
	c.ctx = context.WithValue(c.ctx, connKey, c)
	c.rd = reader{preempt: c.preempt, reg: c.reg, batches: opts.batches(), answerInvalid: opts.answerInvalid(), checkParams: opts.checkParams()}
	c.rd.scanner.LazyParams = true // typed handlers' decoders check params (see parse.go)
	l := &c.st.line
	l.slots = opts.maxConcurrentRequests()
	l.room = opts.maxWaiting()
	l.roomBytes = opts.maxWaitingBytes()
	if c.preempt != nil {
		l.byID = make(map[wire.IDKey]*job)
	}
	c.st.calls = make(map[uint64]*call)
	c.st.out.max = opts.maxWriteQueue()
	return c
}

// ConnFromContext returns the Conn whose handler received ctx, or nil. A
// handler uses it to call or notify the peer that sent the request.
func ConnFromContext(ctx context.Context) *Conn {
	c, _ := ctx.Value(connKey).(*Conn)
	return c
}

// Start begins reading and dispatching frames on a goroutine of the Conn's
// own. It is idempotent, and does nothing after Close or Shutdown.
func (c *Conn) Start() {
	c.update(func(s *state) {
		if s.phase != phaseNew {
			return
		}
		c.setPhase(s, phaseOpen, nil)
		s.reading = readFree // staff starts a worker to read
	})
}

// Done returns a channel that is closed when the connection has ended:
// Close was called, the input reached its end or failed, or a write
// failed.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns nil while the connection lives, then why it ended:
// ErrClosed, ErrInputEnded, the input's read error, or the output's write
// error (ErrWriteTimeout among them).
func (c *Conn) Err() error {
	select {
	case <-c.done:
		c.lock()
		defer c.mu.Unlock()
		return c.st.err
	default:
		return nil
	}
}

// Wait blocks until the connection is closed and every goroutine of the
// Conn has exited, then returns Err. It is how a program makes sure no
// goroutine of the Conn outlives it. After the input ends, the Conn closes
// once the handlers running have answered and the frames queued are
// written; Close and Shutdown close it too. A read or a Write in progress
// on a stream without SetReadDeadline or SetWriteDeadline, which Close
// cannot interrupt, is waited for.
func (c *Conn) Wait() error {
	c.lock()
	c.await(&c.st.changed, nil, func(s *state) bool { return s.phase == phaseClosed && s.goroutines == 0 })
	err := c.st.err
	c.mu.Unlock()
	return err
}

// Close ends the connection: it stops dispatching, fails every pending call
// with ErrClosed, cancels the context of running handlers, drops the
// requests and notifications still waiting for a handler, drops the frames
// not yet written, and starts no Write after it returns. It does not close
// the streams. A read or a Write in progress is interrupted when the
// stream has SetReadDeadline or SetWriteDeadline (the deadline is reset
// afterwards); otherwise the goroutine doing it exits as soon as it
// returns, and Wait waits for that. Close is idempotent and safe before
// Start; it always returns nil.
func (c *Conn) Close() error {
	c.update(func(s *state) { c.setPhase(s, phaseClosed, ErrClosed) })
	return nil
}

// Shutdown ends the connection gracefully, as http.Server.Shutdown does:
// the requests and notifications read so far are served (running,
// waiting, or held), those read later are dropped unanswered
// (DropShutdown), the frames queued are written, and then the connection
// is closed as by Close. Responses to this side's calls are still read
// meanwhile. If ctx ends first, Shutdown closes the connection at once and
// returns ctx.Err(): it never waits longer than ctx allows, even for a
// peer that does not read.
//
// A program that serves a peer until a "shutdown" request calls it after
// that request's handler returned, to let its response reach the peer; or
// the handler itself calls it, with its own context (or one derived from
// it): Shutdown cannot wait for the handler that calls it, so it then
// begins the shutdown and returns nil at once, and the connection closes
// once that handler has returned and its response is written. Called from
// a handler with another context, it would wait for that handler, until
// the context ends.
func (c *Conn) Shutdown(ctx context.Context) error {
	c.update(func(s *state) { c.setPhase(s, phaseDraining, nil) })
	if r := RequestFromContext(ctx); r != nil && r.conn == c {
		return nil
	}
	c.lock()
	closed := c.await(&c.st.changed, ctx.Done(), func(s *state) bool { return s.phase == phaseClosed })
	c.mu.Unlock()
	if !closed {
		c.Close()
		return ctx.Err()
	}
	return nil
}
