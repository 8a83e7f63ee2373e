package transport

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linerpc/linerpc/rpc"
)

// DefaultMaxConns is how many connections a Server serves at once when
// Server.MaxConns is zero. An idle connection holds about 10 KiB of heap
// (its Conn, its socket; TestServerThousandClients measures it) and the
// stacks of its read loop and its watcher, about 20 KiB in all: 10,000
// idle connections hold about 200 MiB. Each busy one may hold up to the
// bound of package rpc's documentation (its section Bounds).
const DefaultMaxConns = 10000

// ErrServerClosed is returned by Server.Serve and Server.ListenAndServe
// once Shutdown or Close has been called.
var ErrServerClosed = errors.New("transport: Server closed")

// Server serves every connection a net.Listener accepts (TCP, a unix
// socket), each with a Conn of its own, in the manner of http.Server. The
// common case is one Registry and one Options for all:
//
//	srv := &transport.Server{Options: &rpc.Options{Handler: reg}}
//	go srv.Serve(l)
//	…
//	srv.Shutdown(ctx) // answers what was read, then closes
//
// For each connection it accepts, the Server starts a Conn over the
// net.Conn (see StartConn): the net.Conn is closed once the Conn has
// ended. Each connection has one goroutine of the Server's, besides the
// Conn's own: the watcher, which waits for the Conn to end, closes the
// net.Conn, calls ConnState with StateClosed and frees the connection's
// place.
//
// What differs from one connection to the next (a session, the peer's
// identity in the handlers' context, Options of its own) and what a
// program does as connections come and go (call the peer at once, keep
// the live ones) is the one hook ConnState: see ConnState and ServerConn.
//
// The zero Server is ready to use (with default Options). Its fields must
// not be changed once Serve has been called. A Server may serve several
// listeners at once; MaxConns then bounds them together.
type Server struct {
	// Options configure the Conn of every connection. Nil means all
	// defaults. The Server never changes them: a connection that needs
	// them changed (a context from BaseContext, a change at StateNew)
	// gets a copy.
	Options *rpc.Options

	// MaxConns bounds the connections served at once, over every
	// listener. Zero means DefaultMaxConns; a negative value means no
	// bound. At the bound the Server stops accepting until a connection
	// has ended, as netutil.LimitListener does: further clients wait in
	// the kernel's backlog of the listener (their connection is made, and
	// what they write waits, unread), and past the backlog the kernel
	// refuses them.
	MaxConns int

	// BaseContext, when set, returns the context that every connection of
	// l starts from, as in http.Server: its values reach every handler of
	// those connections (it becomes their Options.BaseContext); its end
	// ends nothing (Shutdown and Close do). It is called once, by Serve,
	// and must not return nil. Nil means Options.BaseContext, or
	// context.Background().
	BaseContext func(l net.Listener) context.Context

	// ConnState, when set, is called at each state of each connection,
	// in the manner of http.Server's ConnContext and ConnState together:
	//
	//   - StateNew, once the connection is accepted, before its Conn is
	//     made: c.Options is the connection's own copy of Options, whose
	//     BaseContext is BaseContext's context (else the Options' own,
	//     else context.Background()). ConnState may change it, or replace
	//     it, for this connection alone: put values in its BaseContext for
	//     the handlers (a session, the peer's identity), set its Handler
	//     or its bounds.
	//   - StateActive, once c.Conn has started with those Options (its
	//     handlers may be running already). To call the peer as soon as
	//     it connects, ConnState starts a goroutine that does.
	//   - StateClosed, once c.Conn has ended, every goroutine of it has
	//     exited and c.NetConn is closed; c.Err says why.
	//
	// Each connection passes through them in that order, each once, on
	// the same *ServerConn; StateActive is left out when Shutdown or Close
	// comes while ConnState is at StateNew (the Conn is then closed before
	// it starts). StateNew and StateActive are called on the accept loop,
	// which accepts the next connection once they have returned: they must
	// not block for long. StateClosed is called on the connection's
	// watcher. Shutdown and Close wait for every connection to reach
	// StateClosed and for ConnState to return from it, so ConnState must
	// not call them.
	ConnState func(c *ServerConn, state ConnState)

	// Logger, when set, receives the errors of Accept, at error level.
	// The Conns log to their Options.Logger.
	Logger *slog.Logger

	// mu guards what follows, and the Conn of each connection in conns.
	// Invariants: once closing is closed, no listener and no connection is
	// added; every connection in conns has, or is about to have, a
	// watcher that removes it and then closes its ended; one without a
	// Conn is at StateNew, and its Conn, once made, is closed unstarted if
	// closing is closed by then (publish); a connection holds one token
	// of slots from before its Accept until its watcher has removed it.
	mu        sync.Mutex
	closing   chan struct{} // closed by Shutdown and Close; made when first needed
	listeners map[*net.Listener]struct{}
	conns     map[*ServerConn]struct{}
	slots     chan struct{} // a token per connection served; nil without a bound
	slotsMade bool
}

// Serve accepts connections on l and serves each with a Conn, until l
// fails or Shutdown or Close is called; it then returns ErrServerClosed
// (or l's error), having closed l. A connection being served when Serve
// returns for l's error goes on until it ends, or until Shutdown or
// Close. Errors of Accept that pass (too many open files, a connection
// aborted before it was accepted: those whose Temporary method reports
// true) are retried after a pause that starts at 5ms and doubles up to
// 1s, and are logged to Logger, as http.Server does.
func (s *Server) Serve(l net.Listener) error {
	orig := l
	l = &onceCloseListener{Listener: l}
	defer l.Close()
	if !s.trackListener(&l, true) {
		return ErrServerClosed
	}
	defer s.trackListener(&l, false)

	var base context.Context
	if s.BaseContext != nil {
		if base = s.BaseContext(orig); base == nil {
			panic("transport: Server.BaseContext returned a nil context")
		}
	}
	var pause time.Duration // after a failed Accept
	for {
		if !s.acquireSlot() {
			return ErrServerClosed
		}
		nc, err := l.Accept()
		if err != nil {
			s.releaseSlot()
			if s.isClosing() {
				return ErrServerClosed
			}
			if !isTemporary(err) {
				return err
			}
			pause = min(max(2*pause, acceptPauseMin), acceptPauseMax)
			if s.Logger != nil {
				s.Logger.Error("transport: accept failed; retrying", "error", err, "pause", pause)
			}
			if !s.sleep(pause) {
				return ErrServerClosed
			}
			continue
		}
		pause = 0
		s.serve(nc, base)
	}
}

// The pauses after a failed Accept, those of http.Server.
const (
	acceptPauseMin = 5 * time.Millisecond
	acceptPauseMax = time.Second
)

// ListenAndServe listens on address of the named network (as net.Listen
// does: "tcp", "unix", …) and serves it (see Serve). It returns
// ErrServerClosed after Shutdown or Close, or the error of Listen.
func (s *Server) ListenAndServe(network, address string) error {
	if s.isClosing() {
		return ErrServerClosed
	}
	l, err := net.Listen(network, address)
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// serve serves nc, which holds a slot: it makes and starts its Conn,
// with ConnState told at each step, and starts its watcher. The
// connection is tracked from before StateNew, so that Shutdown and Close
// wait for it whatever ConnState does.
func (s *Server) serve(nc net.Conn, base context.Context) {
	sc := &ServerConn{NetConn: nc, Options: s.connOptions(base), ended: make(chan struct{})}
	if !s.trackConn(sc) {
		nc.Close() // Shutdown or Close came first: nothing was started nor told
		s.releaseSlot()
		return
	}
	s.setState(sc, StateNew)
	if s.publish(sc, rpc.NewConn(nc, nc, sc.Options)) {
		sc.Conn.Start()
		s.setState(sc, StateActive)
	}
	go s.watch(sc) // after StateActive: StateClosed comes after it
}

// publish makes c the Conn of sc, where Shutdown and Close find it, and
// reports whether it is to start: when they were called while ConnState
// was at StateNew, they did not find it, so publish closes it instead.
func (s *Server) publish(sc *ServerConn, c *rpc.Conn) bool {
	s.mu.Lock()
	sc.Conn = c
	closing := s.closingLocked()
	s.mu.Unlock()
	select {
	case <-closing:
		c.Close() // before Start: nothing was read, nothing is left to answer
		return false
	default:
		return true
	}
}

// watch is the watcher of a connection: it waits for its Conn to end,
// closes its net.Conn (closeWhenEnded), calls ConnState with StateClosed,
// and frees its place.
func (s *Server) watch(sc *ServerConn) {
	sc.Err = closeWhenEnded(sc.Conn, sc.NetConn)
	s.setState(sc, StateClosed)
	s.mu.Lock()
	delete(s.conns, sc)
	s.mu.Unlock()
	s.releaseSlot()
	close(sc.ended) // last: Shutdown and Close return once it is closed
}

// setState tells ConnState, when set, that sc is at state.
func (s *Server) setState(sc *ServerConn, state ConnState) {
	if s.ConnState != nil {
		s.ConnState(sc, state)
	}
}

// connOptions returns the Options of a new connection: Options as they
// are when nothing is to change in them (NewConn only reads them), and
// otherwise a copy whose BaseContext is the listener's context, base.
// ConnState always gets a copy, so that what it changes is the
// connection's alone.
func (s *Server) connOptions(base context.Context) *rpc.Options {
	if base == nil && s.ConnState == nil {
		return s.Options
	}
	var o rpc.Options
	if s.Options != nil {
		o = *s.Options
	}
	switch {
	case base != nil:
		o.BaseContext = base
	case o.BaseContext == nil:
		o.BaseContext = context.Background()
	}
	return &o
}

// Shutdown shuts the Server down gracefully, as http.Server.Shutdown
// does: it closes the listeners (Serve returns ErrServerClosed), then
// shuts every connection down with rpc.Conn.Shutdown, all at once — each
// answers the requests it has read and writes what it has queued, then
// closes — and waits until every connection has ended (its net.Conn
// closed, ConnState returned from StateClosed). It returns the error of closing a
// listener, if any. If ctx ends first, Shutdown closes the connections
// left, as Close does, and returns ctx.Err() at once: it never waits
// longer than ctx allows. Those connections then end as soon as their
// handlers have returned; call Close to wait for that.
//
// Once Shutdown has been called, Serve and ListenAndServe return
// ErrServerClosed at once; the Server cannot be used again.
func (s *Server) Shutdown(ctx context.Context) error {
	conns, err := s.stop()
	var shutdowns sync.WaitGroup
	defer shutdowns.Wait() // each returns once its Conn is closed, or ctx has ended
	// cut: a Conn.Shutdown was ended by ctx, which closed its Conn; the
	// connection then ends at once, and may be seen to end before ctx is.
	var cut atomic.Bool
	for _, lc := range conns {
		if lc.conn == nil {
			continue // at StateNew: closed as soon as it is made
		}
		shutdowns.Go(func() {
			if lc.conn.Shutdown(ctx) != nil {
				cut.Store(true)
			}
		})
	}
	for _, lc := range conns {
		select {
		case <-lc.ended:
		case <-ctx.Done():
			for _, lc := range conns {
				lc.close()
			}
			return ctx.Err()
		}
	}
	shutdowns.Wait()
	if cut.Load() {
		return ctx.Err()
	}
	return err
}

// Close closes the listeners and every connection at once, with
// rpc.Conn.Close: pending calls fail, the handlers' contexts are cancelled,
// nothing more is written. Unlike http.Server.Close, it then waits until
// every connection has ended — its Conn's goroutines exited (see
// rpc.Conn.Wait), its net.Conn closed, ConnState returned from
// StateClosed — so that no
// goroutine of the Server outlives it; a handler that ignores the end of
// its context holds it up. It returns the error of closing a listener,
// if any.
func (s *Server) Close() error {
	conns, err := s.stop()
	for _, lc := range conns {
		lc.close()
	}
	for _, lc := range conns {
		<-lc.ended
	}
	return err
}

// liveConn is a connection as stop finds it: its Conn, nil while
// ConnState is at StateNew (publish then closes the Conn it makes), and
// the channel closed once it has ended.
type liveConn struct {
	conn  *rpc.Conn
	ended <-chan struct{}
}

func (lc liveConn) close() {
	if lc.conn != nil {
		lc.conn.Close()
	}
}

// stop marks the Server closing, closes its listeners, and returns the
// connections live at that moment (no connection is added after it: see
// trackConn) and the first error of closing a listener.
func (s *Server) stop() ([]liveConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	closing := s.closingLocked()
	select {
	case <-closing:
	default:
		close(closing)
	}
	var err error
	for l := range s.listeners {
		if cerr := (*l).Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	conns := make([]liveConn, 0, len(s.conns))
	for sc := range s.conns {
		conns = append(conns, liveConn{sc.Conn, sc.ended})
	}
	return conns, err
}

// closingLocked returns the channel closed once the Server is closing.
// Called with mu held.
func (s *Server) closingLocked() chan struct{} {
	if s.closing == nil {
		s.closing = make(chan struct{})
	}
	return s.closing
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	closing := s.closingLocked()
	s.mu.Unlock()
	select {
	case <-closing:
		return true
	default:
		return false
	}
}

// trackListener adds or removes l; it adds none once the Server is
// closing, and then reports false.
func (s *Server) trackListener(l *net.Listener, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !add {
		delete(s.listeners, l)
		return true
	}
	select {
	case <-s.closingLocked():
		return false
	default:
	}
	if s.listeners == nil {
		s.listeners = make(map[*net.Listener]struct{})
	}
	s.listeners[l] = struct{}{}
	return true
}

// trackConn adds sc to the live connections, unless the Server is closing.
func (s *Server) trackConn(sc *ServerConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.closingLocked():
		return false
	default:
	}
	if s.conns == nil {
		s.conns = make(map[*ServerConn]struct{})
	}
	s.conns[sc] = struct{}{}
	return true
}

// acquireSlot takes a place for the next connection, waiting while
// MaxConns connections are served; it reports false when the Server
// closes first.
func (s *Server) acquireSlot() bool {
	s.mu.Lock()
	if !s.slotsMade {
		s.slotsMade = true
		switch {
		case s.MaxConns == 0:
			s.slots = make(chan struct{}, DefaultMaxConns)
		case s.MaxConns > 0:
			s.slots = make(chan struct{}, s.MaxConns)
		}
	}
	slots, closing := s.slots, s.closingLocked()
	s.mu.Unlock()
	if slots == nil {
		select {
		case <-closing:
			return false
		default:
			return true
		}
	}
	select {
	case slots <- struct{}{}:
		return true
	case <-closing:
		return false
	}
}

// releaseSlot gives back a place taken by acquireSlot.
func (s *Server) releaseSlot() {
	s.mu.Lock()
	slots := s.slots
	s.mu.Unlock()
	if slots != nil {
		<-slots
	}
}

// sleep waits d, and reports false when the Server closes first.
func (s *Server) sleep(d time.Duration) bool {
	s.mu.Lock()
	closing := s.closingLocked()
	s.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-closing:
		return false
	}
}

// isTemporary reports an Accept error that passes. net.Error's Temporary
// is deprecated because a timeout is not always one; the errors of Accept
// that it reports (EMFILE, ENFILE, ECONNABORTED, a listener's deadline)
// do pass, which is why http.Server relies on it too.
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// onceCloseListener closes its Listener once, as Serve and stop may both
// close it.
type onceCloseListener struct {
	net.Listener
	once sync.Once
	err  error
}

func (l *onceCloseListener) Close() error {
	l.once.Do(func() { l.err = l.Listener.Close() })
	return l.err
}
