package transport_test

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"sync"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/rpc/transport"
)

// acceptOne accepts one connection of l on a goroutine.
func acceptOne(t *testing.T, l net.Listener) <-chan net.Conn {
	t.Helper()
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, err := l.Accept()
		if err != nil {
			t.Errorf("Accept: %v", err)
			close(accepted)
			return
		}
		accepted <- nc
	}()
	return accepted
}

// Dial's Conn serves and calls over the connection; when it is closed,
// its net.Conn is closed too: the far end reads EOF.
func TestDialClosesItsNetConn(t *testing.T) {
	rpctest.CheckNoLeak(t)
	l := unixListener(t)
	defer l.Close()
	accepted := acceptOne(t, l)
	c, err := transport.Dial(t.Context(), "unix", l.Addr().String(), &rpc.Options{Handler: linetest.EchoRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	far := linetest.Within(t, accepted, "the connection to be accepted")
	defer far.Close()
	// The far end, a Conn of StartConn's, calls the dialled one.
	server := transport.StartConn(far, nil)
	if res := linetest.Within(t, linetest.Call(t.Context(), server, "to the dialler"), "the call's result"); res.Err != nil || res.Result.Echo != "to the dialler" {
		t.Fatalf("call: %+v", res)
	}

	c.Close()
	linetest.Within(t, server.Done(), "the far end to see the dialler hang up")
	if err := server.Err(); !errors.Is(err, rpc.ErrInputEnded) {
		t.Errorf("the far end ended with %v, want ErrInputEnded", err)
	}
	if err := c.Wait(); !errors.Is(err, rpc.ErrClosed) {
		t.Errorf("Wait: %v", err)
	}
	server.Wait()
}

// closeReporter is a net.Conn that reports its Close.
type closeReporter struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (c *closeReporter) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// A Conn of StartConn's ends when its peer hangs up, and then closes its
// net.Conn, once its goroutines have exited.
func TestStartConnClosesWhenPeerHangsUp(t *testing.T) {
	rpctest.CheckNoLeak(t)
	near, far := net.Pipe()
	nc := &closeReporter{Conn: near, closed: make(chan struct{})}
	c := transport.StartConn(nc, nil)
	select {
	case <-nc.closed:
		t.Fatal("the net.Conn was closed while its Conn lived")
	default:
	}
	far.Close()
	if err := c.Wait(); !errors.Is(err, rpc.ErrInputEnded) {
		t.Errorf("Wait: %v, want ErrInputEnded", err)
	}
	linetest.Within(t, nc.closed, "the net.Conn to be closed")
}

// Dial fails as net.Dialer does: an address with no listener, a context
// that has ended.
func TestDialErrors(t *testing.T) {
	rpctest.CheckNoLeak(t)
	if _, err := transport.Dial(t.Context(), "unix", filepath.Join(t.TempDir(), "nobody.sock"), nil); err == nil {
		t.Error("Dial to no listener succeeded")
	}
	l := unixListener(t)
	defer l.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := transport.Dial(ctx, "unix", l.Addr().String(), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Dial with an ended context: %v", err)
	}
}
