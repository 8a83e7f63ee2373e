package transport_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/floods"
	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/rpc/transport"
)

var hold = rpc.NewMethod[linetest.EchoParams, linetest.EchoResult]("hold")

// The bounds of TestServerThousandClients, per connection: the live heap
// of an idle connection (the server's Conn, its net.Conn, the client's
// socket), and of one with a request in flight.
const (
	idleHeapPerConn     = 16 << 10
	inFlightHeapPerConn = 24 << 10
)

// rawClient is a client of the flood: a bare socket, so that the heap
// measured is the Server's (and the sockets').
type rawClient struct {
	nc  net.Conn
	buf [256]byte
}

// roundTrip writes a request and reads its one-line reply.
func (c *rawClient) roundTrip(t *testing.T, method, text string, id int) {
	t.Helper()
	c.send(t, method, text, id)
	c.expectReply(t, text, id)
}

func (c *rawClient) send(t *testing.T, method, text string, id int) {
	t.Helper()
	if _, err := fmt.Fprintf(c.nc, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"text":%q}}`+"\n", id, method, text); err != nil {
		t.Fatal(err)
	}
}

// expectReply reads the reply to request id, which must echo text. The
// read deadline is a failure bound, not a pace.
func (c *rawClient) expectReply(t *testing.T, text string, id int) {
	t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(linetest.WaitBound))
	n := 0
	for n == 0 || c.buf[n-1] != '\n' {
		m, err := c.nc.Read(c.buf[n:])
		if err != nil {
			t.Fatalf("reading the reply to %d: %v (after %q)", id, err, c.buf[:n])
		}
		n += m
	}
	want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"echo":%q}}`+"\n", id, text)
	if !bytes.Equal(c.buf[:n], []byte(want)) {
		t.Fatalf("reply %q, want %q", c.buf[:n], want)
	}
}

// expectEOF reads the end of the connection: the Server closed it.
func (c *rawClient) expectEOF(t *testing.T) {
	t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(linetest.WaitBound))
	if n, err := c.nc.Read(c.buf[:]); !errors.Is(err, io.EOF) {
		t.Fatalf("read %q, %v; want EOF", c.buf[:n], err)
	}
}

// A thousand clients on a unix socket at once: the memory per connection
// stays within a stated bound, idle and with a request in flight, and
// Shutdown answers every request in flight, then closes every
// connection.
func TestServerThousandClients(t *testing.T) {
	floods.SkipUnlessEnabled(t, "1,000 clients on a unix socket, a few seconds")
	rpctest.CheckNoLeak(t)
	const clients = 1000

	var started, disconnected atomic.Int64
	allStarted := make(chan struct{})
	release := make(chan struct{})
	reg := linetest.EchoRegistry()
	rpc.Handle(reg, hold, func(ctx context.Context, p linetest.EchoParams) (linetest.EchoResult, error) {
		if started.Add(1) == clients {
			close(allStarted)
		}
		select {
		case <-release:
		case <-ctx.Done():
			return linetest.EchoResult{}, context.Cause(ctx)
		}
		return linetest.EchoResult{Echo: p.Text}, nil
	})
	srv := &transport.Server{
		Options: &rpc.Options{Handler: reg},
		ConnState: func(_ *transport.ServerConn, state transport.ConnState) {
			if state == transport.StateClosed {
				disconnected.Add(1)
			}
		},
	}
	l := unixListener(t)
	served := startServer(t, srv, l)

	base := linetest.LiveHeap()
	var stacksBase runtime.MemStats
	runtime.ReadMemStats(&stacksBase)
	cs := make([]*rawClient, clients)
	for i := range cs {
		nc, err := net.Dial("unix", l.Addr().String())
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		defer nc.Close()
		cs[i] = &rawClient{nc: nc}
		cs[i].roundTrip(t, "echo", "hello", i)
	}
	idle := linetest.LiveHeap() - base
	var stacks runtime.MemStats
	runtime.ReadMemStats(&stacks)
	t.Logf("%d idle connections: live heap %d KiB, %d B per connection (bound %d B); goroutine stacks %d B per connection",
		clients, idle>>10, idle/clients, idleHeapPerConn, int64(stacks.StackInuse-stacksBase.StackInuse)/clients)
	if idle > clients*idleHeapPerConn {
		t.Errorf("%d B per idle connection, over the bound of %d", idle/clients, idleHeapPerConn)
	}

	for i, c := range cs {
		c.send(t, "hold", "held", i)
	}
	linetest.Within(t, allStarted, "every request to reach its handler")
	inFlight := linetest.LiveHeap() - base
	t.Logf("%d connections with a request in flight: live heap %d KiB, %d B per connection (bound %d B)",
		clients, inFlight>>10, inFlight/clients, inFlightHeapPerConn)
	if inFlight > clients*inFlightHeapPerConn {
		t.Errorf("%d B per connection with a request in flight, over the bound of %d", inFlight/clients, inFlightHeapPerConn)
	}

	shutdown := make(chan error, 1)
	start := time.Now()
	go func() { shutdown <- srv.Shutdown(t.Context()) }()
	if err := served.returned(t, "Serve to return once Shutdown began"); !errors.Is(err, transport.ErrServerClosed) {
		t.Fatalf("Serve returned %v", err)
	}
	select {
	case err := <-shutdown:
		t.Fatalf("Shutdown returned (%v) with %d requests in flight", err, clients)
	default:
	}
	close(release)
	for i, c := range cs {
		c.expectReply(t, "held", i)
		c.expectEOF(t)
	}
	if err := linetest.Within(t, shutdown, "Shutdown to return"); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	t.Logf("Shutdown of %d connections with a request each in flight: %v", clients, time.Since(start).Round(time.Millisecond))
	if n := disconnected.Load(); n != clients {
		t.Errorf("%d connections seen at StateClosed, want %d", n, clients)
	}
}
