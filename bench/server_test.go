package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
)

// Workload 10: the listener helper. An rpc.Server serves a unix socket;
// 1,000 clients (rpc.Dial) connect, each calls the round trip of workload
// 1 once, and then all of them call at once, each on its own connection:
// an op is one call (calls/s: the calls of all the clients per second).
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

// unixServer is an rpc.Server on a unix socket and its clients.
type unixServer struct {
	srv          *rpc.Server
	served       chan error // Serve's
	clients      []*rpc.Conn
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
	u := &unixServer{srv: &rpc.Server{Options: &rpc.Options{Handler: reg}}, served: make(chan error, 1)}
	go func() { u.served <- u.srv.Serve(l) }()

	before := memInUse()
	ctx, cancel := context.WithTimeout(bg, serverWait)
	defer cancel()
	for range n {
		c, err := rpc.Dial(ctx, "unix", path, nil)
		if err != nil {
			u.stop()
			return nil, fmt.Errorf("dialing client %d of %d: %w", len(u.clients)+1, n, err)
		}
		u.clients = append(u.clients, c)
	}
	// One call each: every connection accepted, served and in use.
	if err := u.callEach(); err != nil {
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

// callEach makes one call on every client, all at once.
func (u *unixServer) callEach() error {
	return u.calls(func(i int) error {
		return callPromptWithin(u.clients[i])
	})
}

// callAll makes n calls, from one goroutine per client, each on its own
// connection, all at once.
func (u *unixServer) callAll(n int) error {
	var taken atomic.Int64
	return u.calls(func(i int) error {
		for taken.Add(1) <= int64(n) {
			if err := callPromptWithin(u.clients[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// calls runs fn for every client on a goroutine of its own, and returns
// the first error.
func (u *unixServer) calls(fn func(i int) error) error {
	var (
		wg      sync.WaitGroup
		errOnce sync.Once
		first   error
	)
	for i := range u.clients {
		wg.Go(func() {
			if err := fn(i); err != nil {
				errOnce.Do(func() { first = err })
			}
		})
	}
	wg.Wait()
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
		if !errors.Is(err, rpc.ErrServerClosed) {
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
