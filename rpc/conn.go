package rpc

import (
	"context"
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
// that queue up behind a slow Write go out together. Both ends are alike: a Conn can serve and call at
// the same time.
//
// A Conn never closes r or w: they belong to the caller.
type Conn struct {
	r io.Reader

	reg          *Registry
	maxFrameSize int
	onDrop       func(Drop)
	log          *slog.Logger

	// ctx is the context of handlers; Close cancels it. It carries the Conn
	// for ConnFromContext.
	ctx    context.Context
	cancel context.CancelFunc

	pending pendingCalls
	workers workers

	out writer
	lw  leadWatch

	// rmu guards the state of the read loop, so that Close can interrupt a
	// blocked read exactly while one is in progress.
	rmu     sync.Mutex
	started bool
	reading bool // the read loop is running
	// rclosed says Close was called: the read loop must not start or
	// dispatch. It is set under rmu, and read without it by the read loop
	// once per line.
	rclosed  atomic.Bool
	deadline readDeadliner

	// The end of the connection. Invariant: end runs once; it records why
	// the connection ended, fails every pending call with that error, and
	// then closes done. No call is added to pending after it (add checks
	// the same error under the same lock).
	endOnce sync.Once
	endErr  error
	done    chan struct{}

	// running counts the goroutines of the Conn (see work), for Wait.
	running sync.WaitGroup
}

// readDeadliner is implemented by streams whose blocked reads can be
// interrupted (net.Conn, pipes from os.Pipe).
type readDeadliner interface {
	SetReadDeadline(t time.Time) error
}

type connKey struct{}

// NewConn returns a connection that reads frames from r and writes frames to
// w. It does not read until Start is called; calls and notifications may be
// sent before that. opts may be nil for defaults.
func NewConn(r io.Reader, w io.Writer, opts *Options) *Conn {
	c := &Conn{
		r:            r,
		reg:          opts.handler(),
		maxFrameSize: opts.maxFrameSize(),
		onDrop:       opts.onDrop(),
		log:          opts.logger(),
		done:         make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.ctx = context.WithValue(c.ctx, connKey{}, c)
	c.workers.init(opts.maxConcurrentRequests())
	c.pending.init()
	c.out.init(w)
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
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.started || c.rclosed.Load() {
		return
	}
	c.started, c.reading = true, true
	rd := &reader{lines: lines.NewReader(c.r, c.maxFrameSize)}
	rd.scanner.LazyParams = true // typed handlers' decoders check params (see dispatch)
	c.initWatch(rd)
	c.running.Add(1)
	go c.work(rd)
}

// Done returns a channel that is closed when the connection has ended: Close
// was called, or the input reached its end or failed.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns nil while the connection lives, then why it ended: ErrClosed,
// ErrInputEnded, or the input's read error.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.endErr
	default:
		return nil
	}
}

// Wait blocks until the read loop has exited and every handler the Conn
// started has returned, then returns Err. It is how a program makes sure no
// goroutine of the Conn outlives it: after the input ends, Wait lets the
// running handlers write their responses; after Close, it returns once the
// handlers have seen their context cancelled and the read in progress (if
// the reader cannot be interrupted, see Close) has returned. Wait returns
// at once if Start was never called.
func (c *Conn) Wait() error {
	c.running.Wait()
	return c.Err()
}

// Close ends the connection: it stops dispatching, fails every pending call
// with ErrClosed, cancels the context of running handlers, drops requests
// still waiting for a handler slot, and starts no write after it returns. It does not close the streams. A read
// in progress is interrupted when the reader has SetReadDeadline (its
// deadline is restored afterwards); otherwise the read loop exits as soon as
// that read returns, discarding what it read. Close is idempotent and safe
// before Start; it always returns nil.
func (c *Conn) Close() error {
	c.rmu.Lock()
	c.rclosed.Store(true)
	if c.reading && c.deadline != nil {
		c.deadline.SetReadDeadline(time.Now())
	}
	c.rmu.Unlock()

	c.out.close() // first: a handler that sees its context end writes nothing
	c.end(ErrClosed)
	c.endFreeLead()
	c.cancel()
	c.workers.drop()
	return nil
}

// Shutdown ends the connection gracefully, as http.Server.Shutdown does:
// the requests among the lines received so far are served and answered
// (running, waiting for a handler slot, or not yet handled), the requests
// in input received later are dropped unanswered (DropShutdown), and then
// the connection is closed as by Close. If ctx ends first,
// Shutdown closes the connection at once and returns ctx.Err(). A program
// that serves a peer until a "shutdown" request calls it after that
// request's handler returned, to let its response reach the peer. It must
// not be called from a handler of the connection, which it would wait for.
func (c *Conn) Shutdown(ctx context.Context) error {
	var err error
	select {
	case <-c.workers.drain():
		c.out.flush() // replies posted by the read loop's goroutine go out too
	case <-ctx.Done():
		err = ctx.Err()
	}
	c.Close()
	return err
}

// end records why the connection ended and fails the pending calls; only
// its first call has an effect.
func (c *Conn) end(err error) {
	c.endOnce.Do(func() {
		c.endErr = err
		c.pending.failAll(err)
		close(c.done)
	})
}

// closed reports whether Close was called.
func (c *Conn) closed() bool { return c.rclosed.Load() }

// write writes one complete frame (see writer).
func (c *Conn) write(b []byte) error { return c.out.write(b) }
