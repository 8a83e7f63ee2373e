package rpc_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

func TestStartIsIdempotentAndCloseBeforeStartIsSafe(t *testing.T) {
	rpctest.CheckNoLeak(t)
	c := rpc.NewConn(strings.NewReader(""), io.Discard, nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c.Start() // after Close: does nothing
	if err := c.Wait(); !errors.Is(err, rpc.ErrClosed) {
		t.Fatalf("Wait = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal("second Close:", err)
	}

	d := rpc.NewConn(strings.NewReader("{\"id\":1,\"result\":1}\n"), io.Discard, nil)
	d.Start()
	d.Start()
	if err := d.Wait(); !errors.Is(err, rpc.ErrInputEnded) {
		t.Fatalf("Wait = %v", err)
	}
	<-d.Done()
}

// After the input ends, handlers still running write their responses:
// a peer may send its last request and close its side.
func TestHandlersAnswerAfterInputEnds(t *testing.T) {
	rpctest.CheckNoLeak(t)
	var out rpctest.LockedBuffer
	reg := echoRegistry()
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"last"}}` + "\n")
	c := rpc.NewConn(in, &out, &rpc.Options{Handler: reg})
	c.Start()
	if err := c.Wait(); !errors.Is(err, rpc.ErrInputEnded) {
		t.Fatalf("Wait = %v", err)
	}
	if got := strings.TrimSpace(out.String()); got != `{"jsonrpc":"2.0","id":1,"result":{"echo":"last"}}` {
		t.Fatalf("wrote %q", got)
	}
}

// Close cancels the context of running handlers, and the Conn writes
// nothing after Close.
func TestCloseCancelsHandlers(t *testing.T) {
	entered := make(chan struct{})
	exited := make(chan error, 1)
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echo, func(ctx context.Context, p echoParams) (echoResult, error) {
		close(entered)
		<-ctx.Done()
		exited <- ctx.Err()
		return echoResult{Echo: "too late"}, nil
	})
	var w rpctest.Recorder
	rpctest.CheckNoLeak(t)
	in, feed := io.Pipe()
	defer feed.Close()
	c := rpc.NewConn(in, &w, &rpc.Options{Handler: reg})
	c.Start()
	feed.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}` + "\n"))
	<-entered
	c.Close()
	if err := <-exited; !errors.Is(err, context.Canceled) {
		t.Fatalf("handler context ended with %v", err)
	}
	feed.Close()
	c.Wait()
	if f := w.Frames(t); len(f) != 0 {
		t.Fatalf("wrote after Close: %q", f)
	}
}

// Close interrupts a read blocked on a stream with read deadlines (here an
// os.Pipe), so Wait returns without the caller closing its stream, and the
// stream's deadline is given back.
func TestCloseInterruptsBlockedRead(t *testing.T) {
	rpctest.CheckNoLeak(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	c := rpc.NewConn(r, io.Discard, nil)
	c.Start()
	c.Close()
	waited := make(chan error, 1)
	go func() { waited <- c.Wait() }()
	if err := <-waited; !errors.Is(err, rpc.ErrClosed) {
		t.Fatalf("Wait = %v", err)
	}
	// The stream works again for its owner.
	go w.Write([]byte("still usable\n"))
	buf := make([]byte, 64)
	r.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := r.Read(buf)
	if err != nil || string(buf[:n]) != "still usable\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
}

// pair connects two Conns over net.Pipe, both serving reg.
func pair(t *testing.T, regA, regB *rpc.Registry) (a, b *rpc.Conn) {
	t.Helper()
	rpctest.CheckNoLeak(t)
	x, y := net.Pipe()
	a = rpc.NewConn(x, x, &rpc.Options{Handler: regA})
	b = rpc.NewConn(y, y, &rpc.Options{Handler: regB})
	t.Cleanup(func() {
		a.Close()
		b.Close()
		x.Close()
		y.Close()
		a.Wait()
		b.Wait()
	})
	a.Start()
	b.Start()
	return a, b
}

// Both ends serve and call: a request from the server side to the client
// side, answered while the client's own call is in flight, nested deeply.
func TestBothSidesCallEachOther(t *testing.T) {
	count := rpc.NewMethod[int, int]("count")
	handler := func(ctx context.Context, n int) (int, error) {
		if n == 0 {
			return 0, nil
		}
		r, err := count.Call(ctx, rpc.ConnFromContext(ctx), n-1)
		return r + 1, err
	}
	regA, regB := rpc.NewRegistry(), rpc.NewRegistry()
	rpc.Handle(regA, count, handler)
	rpc.Handle(regB, count, handler)
	a, _ := pair(t, regA, regB)
	got, err := count.Call(context.Background(), a, 40)
	if err != nil || got != 40 {
		t.Fatalf("count = %d, %v", got, err)
	}
}

func TestConnFromContext(t *testing.T) {
	if rpc.ConnFromContext(context.Background()) != nil {
		t.Fatal("ConnFromContext of a bare context is not nil")
	}
	got := make(chan *rpc.Conn, 1)
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, tick, func(ctx context.Context, _ rpc.NoParams) { got <- rpc.ConnFromContext(ctx) })
	a, b := pair(t, nil, reg)
	if err := tick.Notify(context.Background(), a, rpc.NoParams{}); err != nil {
		t.Fatal(err)
	}
	if c := <-got; c != b {
		t.Fatal("ConnFromContext is not the receiving Conn")
	}
}

// Shutdown serves what was read before it, refuses what comes after, and
// closes once the answers are written. Here the handler of the first
// request calls Shutdown itself, with its context: Shutdown cannot wait
// for the handler that calls it, so it begins the shutdown and returns at
// once, and the Conn closes once that handler has answered too.
func TestShutdownAnswersWhatWasRead(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	shutdown := make(chan error, 1)
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echo, func(ctx context.Context, p echoParams) (echoResult, error) {
		if p.Text == "running" {
			<-entered // the test knows the queued request was read
			shutdown <- rpc.ConnFromContext(ctx).Shutdown(ctx)
		}
		<-release
		return echoResult{Echo: p.Text}, nil
	})
	drops := make(chan rpc.Drop, 4)
	p := newPeer(t, &rpc.Options{Handler: reg, MaxConcurrentRequests: 1, OnDrop: func(d rpc.Drop) { drops <- d }})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"running"}}`)
	p.Send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"queued"}}`)
	// Frames are read in order: once this one, which has no handler, is
	// dropped, both requests were read.
	p.Send(`{"jsonrpc":"2.0","method":"probe"}`)
	if d := linetest.Within(t, drops, "the probe's drop"); d.Reason != rpc.DropUnhandledNotification {
		t.Fatalf("dropped as %v, want DropUnhandledNotification", d.Reason)
	}
	close(entered)
	if err := linetest.Within(t, shutdown, "Shutdown called by a handler to return"); err != nil {
		t.Fatalf("Shutdown from the handler = %v", err)
	}
	// Read after Shutdown began: dropped, not served.
	p.Send(`{"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":"late"}}`)
	if d := linetest.Within(t, drops, "the late request's drop"); d.Reason != rpc.DropShutdown {
		t.Fatalf("dropped as %v, want DropShutdown", d.Reason)
	}
	select {
	case <-p.conn.Done():
		t.Fatal("the Conn ended before answering what it had read")
	default:
	}
	close(release)
	p.Expect(`{"jsonrpc":"2.0","id":1,"result":{"echo":"running"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":2,"result":{"echo":"queued"}}`)
	if err := p.conn.Wait(); !errors.Is(err, rpc.ErrClosed) {
		t.Fatalf("Wait = %v", err)
	}
}

// Shutdown called from another goroutine waits until what was read is
// answered, then returns; a second Shutdown returns at once.
func TestShutdownWaitsForTheAnswers(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echo, func(ctx context.Context, p echoParams) (echoResult, error) {
		entered <- struct{}{}
		<-release
		return echoResult{Echo: p.Text}, nil
	})
	p := newPeer(t, &rpc.Options{Handler: reg})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}}`)
	linetest.Within(t, entered, "the handler to start")
	shut := make(chan error, 1)
	go func() { shut <- p.conn.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v before the handler answered", err)
	default:
	}
	close(release)
	p.Expect(`{"jsonrpc":"2.0","id":1,"result":{"echo":"x"}}`)
	if err := linetest.Within(t, shut, "Shutdown to return"); err != nil {
		t.Fatalf("Shutdown = %v", err)
	}
	if err := p.conn.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown = %v", err)
	}
}

// A Notify racing Wait after the input ended: Wait never races a
// goroutine's start (TestWaitAndNotifyAfterTheInputEnded regresses a
// writer restarted through a WaitGroup whose Wait was in progress, a data
// race under -race), and a Notify after Wait returned fails with the
// Conn's error.
func TestWaitAndNotifyAfterTheInputEnded(t *testing.T) {
	rpctest.CheckNoLeak(t)
	for range 200 {
		c := rpc.NewConn(strings.NewReader(""), io.Discard, nil)
		c.Start()
		<-c.Done()
		notified := make(chan error, 1)
		go func() { notified <- c.Notify(context.Background(), "late", nil) }()
		if err := c.Wait(); !errors.Is(err, rpc.ErrInputEnded) {
			t.Fatalf("Wait = %v", err)
		}
		if err := linetest.Within(t, notified, "the racing Notify"); err != nil && !errors.Is(err, rpc.ErrInputEnded) {
			t.Fatalf("Notify racing Wait = %v", err)
		}
		if err := c.Notify(context.Background(), "later", nil); !errors.Is(err, rpc.ErrInputEnded) {
			t.Fatalf("Notify after Wait = %v", err)
		}
	}
}

// Both ends under load at once, over a pipe that blocks each Write until
// the other end reads it: neither end may stop reading while it waits to
// write (TestConcurrentCallersBothWaysDoNotDeadlock regresses a flush that
// waited for the other end's writer before reading).
func TestConcurrentCallersBothWaysDoNotDeadlock(t *testing.T) {
	regA, regB := echoRegistry(), echoRegistry()
	a, b := pair(t, regA, regB)
	done := make(chan error, 64)
	for i := range 64 {
		c := a
		if i%2 == 1 {
			c = b
		}
		go func() {
			for range 200 {
				if r, err := echo.Call(context.Background(), c, echoParams{Text: "x"}); err != nil || r.Echo != "x" {
					done <- fmt.Errorf("call: %v %v", r, err)
					return
				}
			}
			done <- nil
		}()
	}
	for range 64 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
