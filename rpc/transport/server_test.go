package transport_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/rpc/transport"
)

// unixListener listens on a unix socket in a temporary directory of t.
func unixListener(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "rpc.sock"))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// serving is a Server at work on a goroutine: what its Serve (or
// ListenAndServe) returned, once it has.
type serving struct {
	ch   chan error
	once sync.Once
	err  error
}

// returned waits for Serve to return, and returns what it did.
func (s *serving) returned(t *testing.T, what string) error {
	t.Helper()
	s.once.Do(func() { s.err = linetest.Within(t, s.ch, what) })
	return s.err
}

// startServing runs serve on a goroutine. When the test ends, srv is
// closed and serve must have returned.
func startServing(t *testing.T, srv *transport.Server, serve func() error) *serving {
	t.Helper()
	s := &serving{ch: make(chan error, 1)}
	go func() { s.ch <- serve() }()
	t.Cleanup(func() {
		srv.Close()
		s.returned(t, "Serve to return after Close")
	})
	return s
}

// startServer serves l with srv (see startServing).
func startServer(t *testing.T, srv *transport.Server, l net.Listener) *serving {
	t.Helper()
	return startServing(t, srv, func() error { return srv.Serve(l) })
}

// dial connects a client Conn with reg to l's address; the Conn is closed
// when the test ends.
func dial(t *testing.T, l net.Listener, reg *rpc.Registry) *rpc.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), linetest.WaitBound)
	defer cancel()
	c, err := transport.Dial(ctx, l.Addr().Network(), l.Addr().String(), &rpc.Options{Handler: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		c.Wait()
	})
	return c
}

// connEvents records what a Server's ConnState is told: each
// connection's Conn at StateActive, and its Conn and error at StateClosed.
type connEvents struct {
	connected    chan *rpc.Conn
	disconnected chan disconnect
}

type disconnect struct {
	conn *rpc.Conn
	err  error
}

func newConnEvents() *connEvents {
	return &connEvents{connected: make(chan *rpc.Conn, 64), disconnected: make(chan disconnect, 64)}
}

// hook sets the Server's ConnState to record into e.
func (e *connEvents) hook(srv *transport.Server) *transport.Server {
	srv.ConnState = func(c *transport.ServerConn, state transport.ConnState) {
		switch state {
		case transport.StateActive:
			e.connected <- c.Conn
		case transport.StateClosed:
			e.disconnected <- disconnect{c.Conn, c.Err}
		}
	}
	return srv
}

// The same Server serves a unix socket and a TCP port: a call answered,
// then the client hanging up ends the connection, whose net.Conn the
// Server closes.
func TestServerServesUnixSocketAndTCP(t *testing.T) {
	tcp := func(t *testing.T) net.Listener {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for name, listen := range map[string]func(*testing.T) net.Listener{"unix": unixListener, "tcp": tcp} {
		t.Run(name, func(t *testing.T) {
			rpctest.CheckNoLeak(t)
			events := newConnEvents()
			srv := events.hook(&transport.Server{Options: &rpc.Options{Handler: linetest.EchoRegistry()}})
			l := listen(t)
			served := startServer(t, srv, l)
			client := dial(t, l, nil)

			res := linetest.Within(t, linetest.Call(t.Context(), client, "over "+name), "the call's result")
			if res.Err != nil || res.Result.Echo != "over "+name {
				t.Fatalf("call: %+v", res)
			}
			server := linetest.Within(t, events.connected, "StateActive")
			client.Close()
			d := linetest.Within(t, events.disconnected, "StateClosed once the client hung up")
			if d.conn != server || !errors.Is(d.err, rpc.ErrInputEnded) {
				t.Errorf("StateClosed with (%p, %v), want (%p, ErrInputEnded)", d.conn, d.err, server)
			}
			if err := srv.Shutdown(t.Context()); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
			if err := served.returned(t, "Serve to return after Shutdown"); !errors.Is(err, transport.ErrServerClosed) {
				t.Errorf("Serve returned %v, want ErrServerClosed", err)
			}
		})
	}
}

// ListenAndServe listens itself; after Shutdown it returns
// ErrServerClosed, and a Server shut down serves nothing more.
func TestServerListenAndServe(t *testing.T) {
	rpctest.CheckNoLeak(t)
	path := filepath.Join(t.TempDir(), "rpc.sock")
	listening := make(chan struct{})
	srv := &transport.Server{
		Options: &rpc.Options{Handler: linetest.EchoRegistry()},
		// Serve calls it once it has its listener: the socket exists.
		BaseContext: func(net.Listener) context.Context {
			close(listening)
			return context.Background()
		},
	}
	served := startServing(t, srv, func() error { return srv.ListenAndServe("unix", path) })
	linetest.Within(t, listening, "ListenAndServe to listen")
	client, err := transport.Dial(t.Context(), "unix", path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Wait()
	defer client.Close()
	if res := linetest.Within(t, linetest.Call(t.Context(), client, "hi"), "the call's result"); res.Err != nil {
		t.Fatal(res.Err)
	}
	if err := srv.Shutdown(t.Context()); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := served.returned(t, "ListenAndServe to return"); !errors.Is(err, transport.ErrServerClosed) {
		t.Errorf("ListenAndServe returned %v, want ErrServerClosed", err)
	}
	if err := srv.ListenAndServe("unix", path); !errors.Is(err, transport.ErrServerClosed) {
		t.Errorf("ListenAndServe after Shutdown: %v", err)
	}
	l := unixListener(t)
	if err := srv.Serve(l); !errors.Is(err, transport.ErrServerClosed) {
		t.Errorf("Serve after Shutdown: %v", err)
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Serve after Shutdown left its listener open: Accept returned %v", err)
	}
}

// callBlocked serves srv, whose handler is b's, on a unix listener, dials
// it and calls Block; it returns once the handler has started, with the
// listener, the server, the client, the call's outcome to come and the
// handler's context.
func callBlocked(t *testing.T, srv *transport.Server, b *linetest.Blocker) (net.Listener, *serving, *rpc.Conn, <-chan linetest.CallResult, context.Context) {
	t.Helper()
	l := unixListener(t)
	served := startServer(t, srv, l)
	client := dial(t, l, nil)
	res := make(chan linetest.CallResult, 1)
	go func() {
		r, err := linetest.Block.Call(t.Context(), client, linetest.EchoParams{Text: "x"})
		res <- linetest.CallResult{Result: r, Err: err}
	}()
	return l, served, client, res, linetest.Within(t, b.Started, "the handler to start")
}

// Shutdown stops accepting at once, lets the request in flight be
// answered, then closes the connection, and returns once it has ended.
func TestServerShutdownAnswersInFlight(t *testing.T) {
	rpctest.CheckNoLeak(t)
	b := linetest.NewBlocker()
	events := newConnEvents()
	srv := events.hook(&transport.Server{Options: &rpc.Options{Handler: b.Reg}})
	l, served, client, res, handlerCtx := callBlocked(t, srv, b)

	shutdown := make(chan error, 1)
	go func() { shutdown <- srv.Shutdown(t.Context()) }()
	if err := served.returned(t, "Serve to return once Shutdown began"); !errors.Is(err, transport.ErrServerClosed) {
		t.Fatalf("Serve returned %v, want ErrServerClosed", err)
	}
	if _, err := net.Dial("unix", l.Addr().String()); err == nil {
		t.Error("a client connected after Shutdown began")
	}
	select {
	case err := <-shutdown:
		t.Fatalf("Shutdown returned (%v) while a request was in flight", err)
	default:
	}
	if handlerCtx.Err() != nil {
		t.Fatalf("Shutdown cancelled the handler: %v", context.Cause(handlerCtx))
	}

	close(b.Release)
	if r := linetest.Within(t, res, "the answer to the request in flight"); r.Err != nil || r.Result.Echo != "released" {
		t.Errorf("call: %+v, want the handler's result", r)
	}
	if err := linetest.Within(t, shutdown, "Shutdown to return"); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	linetest.Within(t, client.Done(), "the client's Conn to see the server hang up")
	if d := linetest.Within(t, events.disconnected, "StateClosed"); !errors.Is(d.err, rpc.ErrClosed) {
		t.Errorf("StateClosed with %v, want ErrClosed", d.err)
	}
}

// When Shutdown's context ends first, it closes the connections left and
// returns the context's error; Close then waits for them to end.
func TestServerShutdownContextEnds(t *testing.T) {
	rpctest.CheckNoLeak(t)
	b := linetest.NewBlocker()
	srv := &transport.Server{Options: &rpc.Options{Handler: b.Reg}}
	_, served, _, res, _ := callBlocked(t, srv, b)

	ctx, cancel := context.WithCancel(t.Context())
	shutdown := make(chan error, 1)
	go func() { shutdown <- srv.Shutdown(ctx) }()
	served.returned(t, "Serve to return once Shutdown began")
	cancel()
	if err := linetest.Within(t, shutdown, "Shutdown to return once its context ended"); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown: %v, want context.Canceled", err)
	}
	if cause := linetest.Within(t, b.Ended, "the handler's context to end"); !errors.Is(cause, rpc.ErrClosed) {
		t.Errorf("the handler's context ended with %v, want ErrClosed", cause)
	}
	if r := linetest.Within(t, res, "the call to fail"); r.Err == nil {
		t.Errorf("the call succeeded (%+v) on a connection closed", r.Result)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// Close closes the listener and every connection at once (the handlers'
// contexts end with ErrClosed), and returns once they have ended.
func TestServerClose(t *testing.T) {
	rpctest.CheckNoLeak(t)
	b := linetest.NewBlocker()
	events := newConnEvents()
	srv := events.hook(&transport.Server{Options: &rpc.Options{Handler: b.Reg}})
	_, served, _, res, _ := callBlocked(t, srv, b)

	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	// Close has returned: the connection has ended, StateClosed told.
	select {
	case d := <-events.disconnected:
		if !errors.Is(d.err, rpc.ErrClosed) {
			t.Errorf("StateClosed with %v, want ErrClosed", d.err)
		}
	default:
		t.Fatal("Close returned before the connection had ended")
	}
	if cause := linetest.Within(t, b.Ended, "the handler's context to end"); !errors.Is(cause, rpc.ErrClosed) {
		t.Errorf("the handler's context ended with %v, want ErrClosed", cause)
	}
	if r := linetest.Within(t, res, "the call to fail"); !errors.Is(r.Err, rpc.ErrInputEnded) {
		t.Errorf("call: %+v, want ErrInputEnded", r)
	}
	if err := served.returned(t, "Serve to return"); !errors.Is(err, transport.ErrServerClosed) {
		t.Errorf("Serve returned %v, want ErrServerClosed", err)
	}
	if err := srv.Shutdown(t.Context()); err != nil {
		t.Errorf("Shutdown after Close: %v", err)
	}
}

type serverKey string

// BaseContext's values, and those ConnState puts in the Options'
// BaseContext at StateNew, reach the handlers, with the Conn through
// ConnFromContext; the Options given are not changed.
func TestServerConnStateContext(t *testing.T) {
	rpctest.CheckNoLeak(t)
	type seen struct {
		conn       *rpc.Conn
		base, peer any
		user       any
	}
	got := make(chan seen, 1)
	reg := rpc.NewRegistry()
	rpc.Handle(reg, linetest.Echo, func(ctx context.Context, p linetest.EchoParams) (linetest.EchoResult, error) {
		got <- seen{rpc.ConnFromContext(ctx), ctx.Value(serverKey("base")), ctx.Value(serverKey("peer")), ctx.Value(serverKey("user"))}
		return linetest.EchoResult{Echo: p.Text}, nil
	})
	opts := &rpc.Options{Handler: reg, BaseContext: context.WithValue(context.Background(), serverKey("user"), "from Options")}
	// withPeer is a ConnState that puts the net.Conn in the context of
	// each connection, and sends it on accepted, with its Conn on active.
	withPeer := func(accepted chan<- net.Conn, active chan<- *rpc.Conn) func(*transport.ServerConn, transport.ConnState) {
		return func(c *transport.ServerConn, state transport.ConnState) {
			switch state {
			case transport.StateNew:
				if c.Options == opts {
					t.Error("ConnState was given the Server's Options, not a copy")
				}
				c.Options.BaseContext = context.WithValue(c.Options.BaseContext, serverKey("peer"), c.NetConn)
				accepted <- c.NetConn
			case transport.StateActive:
				active <- c.Conn
			}
		}
	}
	l := unixListener(t)
	accepted := make(chan net.Conn, 1)
	active := make(chan *rpc.Conn, 1)
	srv := &transport.Server{
		Options:     opts,
		BaseContext: func(bl net.Listener) context.Context { return context.WithValue(t.Context(), serverKey("base"), bl) },
		ConnState:   withPeer(accepted, active),
	}
	startServer(t, srv, l)
	client := dial(t, l, nil)
	if res := linetest.Within(t, linetest.Call(t.Context(), client, "hi"), "the call's result"); res.Err != nil {
		t.Fatal(res.Err)
	}
	s := linetest.Within(t, got, "the handler's context")
	nc := linetest.Within(t, accepted, "StateNew")
	if s.conn != linetest.Within(t, active, "StateActive") {
		t.Error("ConnFromContext is not the Conn StateActive saw")
	}
	if s.base != l || s.peer != nc {
		t.Errorf("the handler saw base %v and peer %v, want the listener and the net.Conn", s.base, s.peer)
	}
	if s.user != nil {
		t.Errorf("the Options' BaseContext is used although BaseContext is set: %v", s.user)
	}
	if opts.BaseContext.Value(serverKey("peer")) != nil {
		t.Error("the Server changed the Options it was given")
	}

	// Without BaseContext, ConnState's copy starts from the Options' own.
	srv2 := &transport.Server{Options: opts, ConnState: withPeer(accepted, active)}
	l2 := unixListener(t)
	startServer(t, srv2, l2)
	client2 := dial(t, l2, nil)
	if res := linetest.Within(t, linetest.Call(t.Context(), client2, "hi"), "the call's result"); res.Err != nil {
		t.Fatal(res.Err)
	}
	linetest.Within(t, accepted, "StateNew")
	linetest.Within(t, active, "StateActive")
	if s := linetest.Within(t, got, "the handler's context"); s.user != "from Options" || s.peer == nil {
		t.Errorf("the handler saw user %v and peer %v, want the Options' value and the net.Conn", s.user, s.peer)
	}
}

// ConnState sees each connection at StateNew, StateActive and
// StateClosed, once each and in that order, on the same *ServerConn, for
// connections that end by the client and by Shutdown alike; the Options
// it sets at StateNew are those of the Conn that serves the connection.
func TestServerConnStateOnceEach(t *testing.T) {
	rpctest.CheckNoLeak(t)
	const clients = 6
	var mu sync.Mutex
	states := map[*transport.ServerConn][]transport.ConnState{}
	ended := make(chan error, clients)
	srv := &transport.Server{
		// No Options: a connection has a handler only if ConnState gives
		// it one.
		ConnState: func(c *transport.ServerConn, state transport.ConnState) {
			mu.Lock()
			states[c] = append(states[c], state)
			mu.Unlock()
			switch state {
			case transport.StateNew:
				if c.Conn != nil || c.Options == nil || c.Options.BaseContext == nil {
					t.Errorf("at StateNew: Conn %p, Options %+v; want no Conn yet, Options with a BaseContext", c.Conn, c.Options)
				}
				c.Options.Handler = linetest.EchoRegistry()
			case transport.StateActive:
				if c.Conn == nil {
					t.Error("no Conn at StateActive")
				}
			case transport.StateClosed:
				ended <- c.Err
			}
		},
	}
	l := unixListener(t)
	startServer(t, srv, l)
	var live []*rpc.Conn
	for i := range clients {
		c := dial(t, l, nil)
		if res := linetest.Within(t, linetest.Call(t.Context(), c, "hi"), "the call's result"); res.Err != nil {
			t.Fatal(res.Err)
		}
		if i%2 == 0 {
			c.Close() // ends by the client
			if err := linetest.Within(t, ended, "StateClosed"); !errors.Is(err, rpc.ErrInputEnded) {
				t.Errorf("StateClosed with %v, want ErrInputEnded", err)
			}
		} else {
			live = append(live, c)
		}
	}
	if err := srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	for range live {
		if err := linetest.Within(t, ended, "StateClosed"); !errors.Is(err, rpc.ErrClosed) {
			t.Errorf("StateClosed with %v, want ErrClosed", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(states) != clients {
		t.Errorf("%d connections seen, want %d", len(states), clients)
	}
	want := []transport.ConnState{transport.StateNew, transport.StateActive, transport.StateClosed}
	for _, got := range states {
		if !slices.Equal(got, want) {
			t.Errorf("a connection went through %v, want %v", got, want)
		}
	}
}

// At StateActive the Conn has started: a goroutine of ConnState's may
// call the client at once.
func TestServerStateActiveCallsThePeer(t *testing.T) {
	rpctest.CheckNoLeak(t)
	answers := make(chan linetest.CallResult, 1)
	srv := &transport.Server{ConnState: func(c *transport.ServerConn, state transport.ConnState) {
		if state != transport.StateActive {
			return
		}
		go func() {
			r, err := linetest.Echo.Call(t.Context(), c.Conn, linetest.EchoParams{Text: "welcome"})
			answers <- linetest.CallResult{Result: r, Err: err}
		}()
	}}
	l := unixListener(t)
	startServer(t, srv, l)
	dial(t, l, linetest.EchoRegistry())
	if r := linetest.Within(t, answers, "the client's answer to the server's call"); r.Err != nil || r.Result.Echo != "welcome" {
		t.Errorf("call from StateActive: %+v", r)
	}
}

// pipeListener is a net.Listener over net.Pipe, for tests in a synctest
// bubble, where every wait is on a channel: Dial queues a connection in
// its backlog, Accept takes the errors it is given first, then the
// connections.
type pipeListener struct {
	backlog   chan net.Conn
	errs      chan error
	done      chan struct{}
	closeOnce sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{backlog: make(chan net.Conn, 16), errs: make(chan error, 16), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case err := <-l.errs:
		return nil, err
	default:
	}
	select {
	case err := <-l.errs:
		return nil, err
	case nc := <-l.backlog:
		return nc, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// dial connects a client Conn to l: its connection waits in the backlog
// until the Server accepts it.
func (l *pipeListener) dial(t *testing.T) (*rpc.Conn, net.Conn) {
	client, server := net.Pipe()
	l.backlog <- server
	return transport.StartConn(client, nil), client
}

// With MaxConns 2, a third client is not served while two are: the
// Server does not accept it until one of them has ended. Run in a
// synctest bubble: synctest.Wait lets the Server do all it would, so
// that the third client not being served is a fact, not a race.
func TestServerMaxConns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newPipeListener()
		events := newConnEvents()
		srv := events.hook(&transport.Server{MaxConns: 2, Options: &rpc.Options{Handler: linetest.EchoRegistry()}})
		served := make(chan error, 1)
		go func() { served <- srv.Serve(l) }()

		var clients [3]*rpc.Conn
		for i := range 2 {
			clients[i], _ = l.dial(t)
			if res := <-linetest.Call(t.Context(), clients[i], "hi"); res.Err != nil {
				t.Fatal(res.Err)
			}
		}
		clients[2], _ = l.dial(t)
		third := linetest.Call(t.Context(), clients[2], "third")
		synctest.Wait()
		select {
		case res := <-third:
			t.Fatalf("the third client was served while two were (%+v)", res)
		default:
		}
		if n := len(events.connected); n != 2 {
			t.Fatalf("%d connections started, want 2", n)
		}

		clients[0].Close() // its net.Conn closes: the server sees it hang up
		if res := <-third; res.Err != nil || res.Result.Echo != "third" {
			t.Fatalf("the third client, once the first ended: %+v", res)
		}
		first := <-events.connected
		if d := <-events.disconnected; d.conn != first {
			t.Error("the first connection to end is not the first one")
		}
		if err := srv.Shutdown(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := <-served; !errors.Is(err, transport.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
		for _, c := range clients {
			c.Close()
			c.Wait()
		}
	})
}

// Shutdown while ConnState is at StateNew still waits for that
// connection, which ends without starting: ConnState sees it at
// StateClosed with ErrClosed and never at StateActive, and its client
// sees it closed.
func TestServerShutdownDuringStateNew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newPipeListener()
		atNew := make(chan struct{})
		proceed := make(chan struct{})
		var states []transport.ConnState // on the accept loop, then the watcher
		var closedWith error
		srv := &transport.Server{
			Options: &rpc.Options{Handler: linetest.EchoRegistry()},
			ConnState: func(c *transport.ServerConn, state transport.ConnState) {
				states = append(states, state)
				switch state {
				case transport.StateNew:
					close(atNew)
					<-proceed
				case transport.StateClosed:
					closedWith = c.Err
				}
			},
		}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(l) }()
		client, _ := l.dial(t)
		<-atNew
		shutdown := make(chan error, 1)
		go func() { shutdown <- srv.Shutdown(t.Context()) }()
		<-l.done // Shutdown closed the listener: the Server is closing
		synctest.Wait()
		select {
		case err := <-shutdown:
			t.Fatalf("Shutdown returned (%v) while a connection was at StateNew", err)
		default:
		}

		close(proceed)
		if err := <-shutdown; err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		// Shutdown has returned: the connection has ended.
		if want := []transport.ConnState{transport.StateNew, transport.StateClosed}; !slices.Equal(states, want) {
			t.Errorf("the connection went through %v, want %v", states, want)
		}
		if !errors.Is(closedWith, rpc.ErrClosed) {
			t.Errorf("StateClosed with %v, want ErrClosed", closedWith)
		}
		<-client.Done()
		if err := client.Err(); !errors.Is(err, rpc.ErrInputEnded) {
			t.Errorf("the client ended with %v, want ErrInputEnded", err)
		}
		if err := <-served; !errors.Is(err, transport.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
		client.Close()
		client.Wait()
	})
}

// temporaryError is an Accept error that passes.
type temporaryError struct{}

func (temporaryError) Error() string   { return "accept: too many open files" }
func (temporaryError) Temporary() bool { return true }
func (temporaryError) Timeout() bool   { return false }

// Errors of Accept that pass are logged and retried after 5ms, 10ms,
// 20ms…; any other ends Serve with it.
func TestServerRetriesTemporaryAcceptErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newPipeListener()
		var log rpctest.LockedBuffer
		srv := &transport.Server{Options: &rpc.Options{Handler: linetest.EchoRegistry()}, Logger: slog.New(slog.NewTextHandler(&log, nil))}
		for range 3 {
			l.errs <- fmt.Errorf("wrapped: %w", temporaryError{})
		}
		start := time.Now()
		served := make(chan error, 1)
		go func() { served <- srv.Serve(l) }()
		client, _ := l.dial(t)
		if res := <-linetest.Call(t.Context(), client, "hi"); res.Err != nil {
			t.Fatal(res.Err)
		}
		if took := time.Since(start); took != 35*time.Millisecond {
			t.Errorf("served after %v, want the pauses 5ms + 10ms + 20ms", took)
		}
		logged := log.String()
		for _, pause := range []string{"pause=5ms", "pause=10ms", "pause=20ms"} {
			if !strings.Contains(logged, pause) {
				t.Errorf("the log does not say %s:\n%s", pause, logged)
			}
		}

		broken := errors.New("listener broken")
		l.errs <- broken
		if err := <-served; !errors.Is(err, broken) {
			t.Errorf("Serve returned %v, want the listener's error", err)
		}
		// The connection served goes on until Close.
		if res := <-linetest.Call(t.Context(), client, "still"); res.Err != nil {
			t.Errorf("after Serve returned: %v", res.Err)
		}
		srv.Close()
		client.Close()
		client.Wait()
	})
}
