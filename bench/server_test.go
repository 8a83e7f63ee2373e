package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

// Workload 10: the listener helper. A transport.Server serves a unix
// socket; 1,000 clients (transport.Dial) connect, each calls the round
// trip of workload 1 once, and then all of them call at once, each on
// its own connection from a goroutine of its own, b.N calls in all: an op
// is one call (calls/s: the calls of all the clients per second).
// heap-B/conn is the heap in use (runtime.MemStats.HeapInuse, after a GC)
// once the 1,000 clients have connected and called once, less what was in
// use before they connected, per connection: both ends of it (the
// client's Conn and the server's, and their sockets), as they are while
// the connections are busy; stack-B/conn the same of the goroutine stacks
// (StackInuse); cpu-ns/op the CPU time of the whole process per call.
// linerpc alone: the peers have no listener helper.

// serverClients is the number of clients of workload 10.
const serverClients = 1000

func BenchmarkServerUnix(b *testing.B) {
	u, err := startUnixServer(b.TempDir(), serverClients)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := u.stop(); err != nil {
			b.Error(err)
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu := time.Now(), startCPU()
	if err := u.callAll(b.N); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cpu.stop(b)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	b.ReportMetric(u.heapPerConn, "heap-B/conn")
	b.ReportMetric(u.stackPerConn, "stack-B/conn")
}

// TestServerUnix runs workload 10 small.
func TestServerUnix(t *testing.T) {
	u, err := startUnixServer(t.TempDir(), 50)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.callAll(500); err != nil {
		t.Error(err)
	}
	if err := u.stop(); err != nil {
		t.Error(err)
	}
	t.Logf("%.0f B of heap, %.0f B of stack per connection", u.heapPerConn, u.stackPerConn)
}

// unixServer is a transport.Server on a unix socket and its clients, each
// with a goroutine of its own that makes the calls it is given, so that
// the op measures calls, not goroutines started to make them (a new
// goroutine grows its stack for go-json's encoder on its first call).
type unixServer struct {
	srv          *transport.Server
	served       chan error // Serve's
	clients      []*rpc.Conn
	work         []chan int // how many calls each client's goroutine is to make
	done         chan error // each client's goroutine, once it has made them
	heapPerConn  float64
	stackPerConn float64
}

// serverWait bounds each wait of workload 10.
const serverWait = time.Minute

// startUnixServer serves the round trip's method on a unix socket in dir,
// connects n clients, has each call once, and measures the memory the
// connections hold.
func startUnixServer(dir string, n int) (*unixServer, error) {
	path := filepath.Join(dir, "s")
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	reg := rpc.NewRegistry()
	rpc.Handle(reg, lrPrompt, func(_ context.Context, p Prompt) (Reply, error) { return servePrompt(&p) })
	u := &unixServer{srv: &transport.Server{Options: &rpc.Options{Handler: reg}}, served: make(chan error, 1), done: make(chan error, n)}
	go func() { u.served <- u.srv.Serve(l) }()

	before := memInUse()
	ctx, cancel := context.WithTimeout(bg, serverWait)
	defer cancel()
	for range n {
		c, err := transport.Dial(ctx, "unix", path, nil)
		if err != nil {
			u.stop()
			return nil, fmt.Errorf("dialing client %d of %d: %w", len(u.clients)+1, n, err)
		}
		work := make(chan int)
		u.clients = append(u.clients, c)
		u.work = append(u.work, work)
		go func() {
			for calls := range work {
				var err error
				for range calls {
					if err = callPromptWithin(c); err != nil {
						break
					}
				}
				u.done <- err
			}
		}()
	}
	// One call each: every connection accepted, served and in use.
	if err := u.callAll(n); err != nil {
		u.stop()
		return nil, err
	}
	after := memInUse()
	u.heapPerConn = float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / float64(n)
	u.stackPerConn = float64(int64(after.StackInuse)-int64(before.StackInuse)) / float64(n)
	return u, nil
}

func memInUse() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// callAll makes n calls, shared out among the clients, all at once, each
// client on its own connection, and returns the first error.
func (u *unixServer) callAll(n int) error {
	for i, w := range u.work {
		calls := n / len(u.work)
		if i < n%len(u.work) {
			calls++
		}
		w <- calls
	}
	var first error
	timeout := time.After(serverWait + time.Duration(n/len(u.work)+1)*serverWait/100)
	for range u.work {
		select {
		case err := <-u.done:
			if first == nil {
				first = err
			}
		case <-timeout:
			return fmt.Errorf("the clients had not made their %d calls in time", n)
		}
	}
	return first
}

// callPromptWithin makes the round trip's call on c, bounded by serverWait.
func callPromptWithin(c *rpc.Conn) error {
	ctx, cancel := context.WithTimeout(bg, serverWait)
	defer cancel()
	p := helloPrompt
	return checkReply(lrPrompt.Call(ctx, c, p))
}

// stop closes the clients, shuts the server down, and waits for
// everything to end, each wait bounded by serverWait.
func (u *unixServer) stop() error {
	for _, w := range u.work {
		close(w)
	}
	for _, c := range u.clients {
		c.Close()
	}
	ctx, cancel := context.WithTimeout(bg, serverWait)
	defer cancel()
	var errs []error
	if err := u.srv.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("Shutdown: %w", err))
	}
	select {
	case err := <-u.served:
		if !errors.Is(err, transport.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("Serve: %w", err))
		}
	case <-time.After(serverWait):
		errs = append(errs, fmt.Errorf("Serve did not return within %v of Shutdown", serverWait))
	}
	waited := make(chan struct{})
	go func() {
		for _, c := range u.clients {
			c.Wait()
		}
		close(waited)
	}()
	select {
	case <-waited:
	case <-time.After(serverWait):
		errs = append(errs, fmt.Errorf("the clients' Conns did not end within %v of Close", serverWait))
	}
	return errors.Join(errs...)
}
