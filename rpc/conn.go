package rpc

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linerpc/linerpc/internal/lines"
)

// Conn is one end of a JSON-RPC 2.0 connection over a byte stream: it reads
// LF-terminated frames from r, dispatches requests and notifications to its
// Registry, settles its own calls with the responses, and writes frames to
// w, whole frames only: a frame is never split across writes, and frames
// that queue up behind a slow Write go out together. Both ends are alike: a
// Conn can serve and call at the same time.
//
// A Conn runs on goroutines of its own: one read loop while it reads, one
// per running request handler, and one while frames are being written. A
// caller's goroutine never does the peer's work: it encodes its frame and
// waits, and the wait ends with its context or with Close.
//
// A Conn never closes r or w: they belong to the caller.
type Conn struct {
	r io.Reader

	reg             *Registry
	maxFrameSize    int
	maxWaiting      int
	maxWaitingBytes int
	onDrop          func(Drop)
	log             *slog.Logger
	cancellation    *CancelPolicy // nil: no cancellation on the wire
	serve           ServeFunc     // the serving interceptors' chain; nil without one
	callChain       CallFunc      // the calling interceptors' chain; nil without one

	// ctx is the parent of the handlers' contexts; Close cancels it, with
	// ErrClosed as its cause (a failed write, with the write error). It
	// carries the Conn for ConnFromContext.
	ctx    context.Context
	cancel context.CancelCauseFunc

	pending pendingCalls
	out     writer

	// mu guards st, the lifecycle (see state.go), and drained, Shutdown's
	// channel. Every change goes through update.
	mu      sync.Mutex
	st      connState
	drained chan struct{}
	// closing mirrors st.closed for the read loop, which checks it once
	// per line without taking mu; it is set under mu, with st.closed.
	closing  atomic.Bool
	deadline readDeadliner // the input's, when it has one
	done     chan struct{} // closed when st.err is set (see update)
	readDone chan struct{} // closed when the read loop stops

	// idleWork hands work to an idle goroutine of the Conn (see goRun).
	idleWork chan *requestContext

	// readLoopMark tells calls made on the read loop (request.go).
	readLoopMark

	// running counts the goroutines of the Conn, for Wait.
	running sync.WaitGroup
}

// readDeadliner is implemented by streams whose blocked reads can be
// interrupted (net.Conn, pipes from os.Pipe).
type readDeadliner interface {
	SetReadDeadline(t time.Time) error
}

type connKey struct{}

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
		r:               r,
		reg:             opts.handler(),
		maxFrameSize:    opts.maxFrameSize(),
		maxWaiting:      opts.maxWaitingRequests(),
		maxWaitingBytes: opts.maxWaitingBytes(),
		onDrop:          opts.onDrop(),
		log:             opts.logger(),
		done:            make(chan struct{}),
		readDone:        make(chan struct{}),
		idleWork:        make(chan *requestContext),
		cancellation:    opts.cancellation(),
	}
	if in := opts.intercept(); in != nil {
		c.serve = in(serveHandler)
	}
	if in := opts.interceptCall(); in != nil {
		c.callChain = in(sendCall)
	}
	c.st.maxActive = opts.maxConcurrentRequests()
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	c.ctx = context.WithValue(c.ctx, connKey{}, c)
	c.pending.init()
	c.out.init(w, opts.maxWriteQueue(), opts.writeTimeout())
	if d, ok := r.(readDeadliner); ok {
		c.deadline = d
	}
	return c
}

// ConnFromContext returns the Conn whose handler received ctx, or nil. A
// handler uses it to call or notify the peer that sent the request.
func ConnFromContext(ctx context.Context) *Conn {
	c, _ := ctx.Value(connKey{}).(*Conn)
	return c
}

// Start begins reading and dispatching frames on a goroutine of the Conn's
// own. It is idempotent, and does nothing after Close.
func (c *Conn) Start() {
	var start bool
	c.update(func(s *connState) {
		if s.started || s.closed {
			return
		}
		s.started, s.reading, start = true, true, true
	})
	if !start {
		return
	}
	c.pending.start()
	rd := &reader{lines: lines.NewReader(c.r, c.maxFrameSize)}
	rd.scanner.LazyParams = true // typed handlers' decoders check params (see params.go)
	c.running.Add(1)
	go c.readLoop(rd)
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
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.st.err
	default:
		return nil
	}
}

// Wait blocks until every goroutine of the Conn has exited, then returns
// Err. It is how a program makes sure no goroutine of the Conn outlives
// it: after the input ends, Wait lets the running handlers write their
// responses; after Close, it returns once the handlers have seen their
// context cancelled, and the read and the Write in progress have returned
// (see Close for streams that cannot be interrupted). Wait returns at once
// if Start was never called and nothing is being written.
func (c *Conn) Wait() error {
	c.running.Wait()
	return c.Err()
}

// Close ends the connection: it stops dispatching, fails every pending call
// with ErrClosed, cancels the context of running handlers, drops the
// requests still waiting for a handler slot, withdraws the frames not yet
// written, and starts no Write after it returns. It does not close the
// streams. A read or a Write in progress is interrupted when the stream has
// SetReadDeadline or SetWriteDeadline (the deadline is reset afterwards);
// otherwise the goroutine doing it exits as soon as it returns, and Wait
// waits for that. Close is idempotent and safe before Start; it always
// returns nil.
func (c *Conn) Close() error {
	c.shut(ErrClosed)
	return nil
}

// failOutput ends the connection because writing failed: as Close does,
// but with the write error as the reason.
func (c *Conn) failOutput(err error) {
	if err != ErrWriteTimeout {
		err = fmt.Errorf("rpc: writing output: %w", err)
	}
	c.shut(err)
}

// shut closes the connection with why as its reason (unless it had ended
// already: then the first reason stays).
func (c *Conn) shut(why error) {
	var dropped []waitingTask
	var interrupt bool
	c.update(func(s *connState) {
		if !s.closed {
			s.closed = true
			c.closing.Store(true)
			s.started = true // nothing will start now
		}
		s.endWith(why)
		dropped = s.waiting.takeAll()
		s.requests = nil // no cancel notification is read any more
		interrupt = s.reading && c.deadline != nil
		if interrupt {
			// Under mu, so that the read loop, which resets the deadline
			// when it stops reading, does so after this.
			c.deadline.SetReadDeadline(time.Now())
		}
	})
	c.out.close() // first: a handler that sees its context end writes nothing
	c.cancel(why) // the handlers' cause, even when the input had ended first
	for _, w := range dropped {
		w.rc.t.discard()
	}
}

// Shutdown ends the connection gracefully, as http.Server.Shutdown does:
// the requests among the lines received so far are served and answered
// (running, waiting for a handler slot, or not yet handled), the requests
// in input received later are dropped unanswered (DropShutdown), the
// frames queued are written, and then the connection is closed as by
// Close. If ctx ends first, Shutdown closes the connection at once and
// returns ctx.Err(): it never waits longer than ctx allows, even for a
// peer that does not read. A program that serves a peer until a
// "shutdown" request calls it after that request's handler returned, to
// let its response reach the peer. It must not be called from a handler
// of the connection, which it would wait for.
func (c *Conn) Shutdown(ctx context.Context) error {
	var drained chan struct{}
	c.update(func(s *connState) {
		s.draining = true
		if c.drained == nil {
			c.drained = make(chan struct{})
		}
		drained = c.drained
	})
	var err error
	select {
	case <-drained:
		select {
		case <-c.out.drain():
		case <-ctx.Done():
			err = ctx.Err()
		}
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.Close()
	return err
}
