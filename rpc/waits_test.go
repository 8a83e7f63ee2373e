package rpc_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// stuckWriter is an output whose Writes block until it is released, as a
// peer that stops reading makes them; it records what was written.
type stuckWriter struct {
	entered chan struct{} // a Write began
	release chan struct{} // closing it lets every Write through
	mu      sync.Mutex
	written strings.Builder
}

func newStuckWriter() *stuckWriter {
	return &stuckWriter{entered: make(chan struct{}, 100), release: make(chan struct{})}
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.entered <- struct{}{}
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written.Write(p)
}

func (w *stuckWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written.String()
}

// While a Write is stuck, a call with a deadline returns when its deadline
// passes, its frame withdrawn; a notification is queued, and waits with
// its context once the queue is full. Close then fails the call whose
// frame the stuck Write carries, without waiting for it, and withdraws
// what is queued.
func TestWaitsEndWithTheirContextWhileTheOutputIsStuck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, feed := io.Pipe()
		out := newStuckWriter()
		c := rpc.NewConn(in, out, &rpc.Options{MaxWriteQueue: 200})
		c.Start()
		first := call(context.Background(), c, "first")
		<-out.entered // its frame is in the stuck Write

		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if _, err := echo.Call(ctx, c, echoParams{Text: "second"}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("call behind the stuck Write: %v", err)
		}
		if err := note.Notify(context.Background(), c, echoParams{Text: "third"}); err != nil {
			t.Fatalf("notify behind the stuck Write: %v", err)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if err := note.Notify(ctx, c, echoParams{Text: strings.Repeat("fourth", 20)}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("notify behind a full queue: %v", err)
		}

		c.Close()
		if r := <-first; !errors.Is(r.Err, rpc.ErrClosed) {
			t.Fatalf("call in the stuck Write after Close: %v", r.Err)
		}
		close(out.release)
		feed.Close()
		c.Wait()
		if got := out.String(); strings.Contains(got, "second") || strings.Contains(got, "third") || strings.Contains(got, "fourth") || !strings.Contains(got, "first") {
			t.Fatalf("written %q: only the first frame should be", got)
		}
	})
}

// A call that the input's end fails while its request is still queued
// behind a stuck Write withdraws the request, also once notifications have
// been read (a call then first waits for them to be handled): the request
// is never written.
func TestACallFailedByTheInputsEndIsNotWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, feed := io.Pipe()
		out := newStuckWriter()
		handled := make(chan struct{}, 1)
		reg := rpc.NewRegistry()
		rpc.HandleNotification(reg, note, func(context.Context, echoParams) { handled <- struct{}{} })
		c := rpc.NewConn(in, out, &rpc.Options{Handler: reg})
		c.Start()
		go io.WriteString(feed, `{"jsonrpc":"2.0","method":"note","params":{"text":"tick"}}`+"\n")
		<-handled
		first := call(context.Background(), c, "first")
		<-out.entered // its frame is in the stuck Write
		second := call(context.Background(), c, "second")
		synctest.Wait() // second's request is queued, its caller waits
		feed.Close()
		for _, r := range []<-chan linetest.CallResult{first, second} {
			if res := <-r; !errors.Is(res.Err, rpc.ErrInputEnded) {
				t.Fatalf("call when the input ended: %v", res.Err)
			}
		}
		close(out.release)
		c.Wait()
		if got := out.String(); strings.Contains(got, "second") || !strings.Contains(got, "first") {
			t.Fatalf("written %q: only the first request should be", got)
		}
	})
}

// Shutdown honours its context when the peer does not read the replies it
// would wait to flush.
func TestShutdownEndsWithItsContextWhenThePeerDoesNotRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		connIn, peerOut, peerIn, connOut := pipes()
		c := rpc.NewConn(connIn, connOut, &rpc.Options{Handler: echoRegistry()})
		c.Start()
		io.WriteString(peerOut, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"unread"}}`+"\n")
		synctest.Wait() // the reply's Write waits for a reader
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := c.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v", err)
		}
		peerOut.Close()
		peerIn.Close() // ends the stuck Write
		c.Wait()
	})
}

// shortWriter writes half of each frame and reports no error.
type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) / 2, nil }

func TestShortWriteEndsTheConnection(t *testing.T) {
	rpctest.CheckNoLeak(t)
	in, feed := io.Pipe()
	c := rpc.NewConn(in, shortWriter{}, nil)
	c.Start()
	defer func() { c.Close(); feed.Close(); c.Wait() }()
	if _, err := echo.Call(context.Background(), c, echoParams{Text: "x"}); !errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("Call = %v, want io.ErrShortWrite", err)
	}
	<-c.Done()
	if !errors.Is(c.Err(), io.ErrShortWrite) {
		t.Fatalf("Err = %v", c.Err())
	}
}

type panicky struct{}

func (panicky) MarshalJSON() ([]byte, error) { panic("boom") }

// A panic while encoding is contained: a result answers -32603, params
// fail the call; the connection lives on.
func TestEncodingPanicsAreContained(t *testing.T) {
	reg := echoRegistry()
	rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, panicky]("panicky"), func(context.Context, rpc.NoParams) (panicky, error) {
		return panicky{}, nil
	})
	p := newPeer(t, &rpc.Options{Handler: reg})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"panicky"}`)
	p.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error: the result could not be encoded"}}`)
	err := p.conn.Call(context.Background(), "x", panicky{}, nil)
	if err == nil || !strings.Contains(err.Error(), "encoder panic") {
		t.Fatalf("Call with panicking params = %v", err)
	}
	p.Send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"alive"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":2,"result":{"echo":"alive"}}`)
}

// Frames larger than MaxFrameSize are refused where they are made: the
// peer would drop them unread.
func TestOversizeFramesAreRefusedAtTheSender(t *testing.T) {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echo, func(_ context.Context, p echoParams) (echoResult, error) {
		return echoResult{Echo: strings.Repeat("y", 2000)}, nil
	})
	p := newPeer(t, &rpc.Options{Handler: reg, MaxFrameSize: 1000})
	big := echoParams{Text: strings.Repeat("x", 2000)}
	if _, err := echo.Call(context.Background(), p.conn, big); !errors.Is(err, rpc.ErrFrameTooLarge) {
		t.Fatalf("Call = %v, want ErrFrameTooLarge", err)
	}
	if err := note.Notify(context.Background(), p.conn, big); !errors.Is(err, rpc.ErrFrameTooLarge) {
		t.Fatalf("Notify = %v, want ErrFrameTooLarge", err)
	}
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"small"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error: the result is larger than the maximum frame size"}}`)
}

// A call is never held up by the peer's requests: not by a slow handler,
// nor by a reply that cannot be written because the peer does not read.
func TestCallsNeverDoThePeersWork(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	reg := echoRegistry()
	rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, rpc.NoParams]("slow"), func(context.Context, rpc.NoParams) (rpc.NoParams, error) {
		close(entered)
		<-release
		return rpc.NoParams{}, nil
	})
	p := newPeer(t, &rpc.Options{Handler: reg})
	defer close(release)

	res := call(context.Background(), p.conn, "mine")
	id := string(p.NextCall().ID)
	p.Send(`{"jsonrpc":"2.0","id":"s","method":"slow"}`)
	<-entered
	// The peer now stops reading: the echo's reply waits in a Write.
	p.Send(`{"jsonrpc":"2.0","id":"e","method":"echo","params":{"text":"unread"}}`)
	p.Send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"echo":"done"}}`)
	if r := <-res; r.Err != nil || r.Result.Echo != "done" {
		t.Fatalf("call = %+v while the slow handler runs and a reply is unread", r)
	}
}

// Two ends whose handlers call each other back, far more at once than
// either has handler slots: every call ends, answered or overloaded.
func TestBothEndsCallingBackUnderLoadNeverDeadlock(t *testing.T) {
	rpctest.CheckNoLeak(t)
	const perSide = 700
	ping := rpc.NewMethod[echoParams, echoResult]("ping")
	pong := rpc.NewMethod[echoParams, echoResult]("pong")
	newReg := func() *rpc.Registry {
		reg := rpc.NewRegistry()
		rpc.Handle(reg, ping, func(ctx context.Context, p echoParams) (echoResult, error) {
			return pong.Call(ctx, rpc.ConnFromContext(ctx), p)
		})
		rpc.Handle(reg, pong, func(_ context.Context, p echoParams) (echoResult, error) {
			return echoResult{Echo: p.Text}, nil
		})
		return reg
	}
	aIn, bOut := io.Pipe()
	bIn, aOut := io.Pipe()
	opts := func() *rpc.Options { return &rpc.Options{Handler: newReg(), MaxWaiting: 64} }
	a, b := rpc.NewConn(aIn, aOut, opts()), rpc.NewConn(bIn, bOut, opts())
	a.Start()
	b.Start()
	var answered, overloaded atomic.Int64
	var wg sync.WaitGroup
	for i := range 2 * perSide {
		from := a
		if i%2 == 1 {
			from = b
		}
		wg.Go(func() {
			r, err := ping.Call(context.Background(), from, echoParams{Text: fmt.Sprint(i)})
			var e *rpc.Error
			switch {
			case err == nil && r.Echo == fmt.Sprint(i):
				answered.Add(1)
			case errors.As(err, &e) && e.Code == rpc.CodeOverloaded:
				overloaded.Add(1)
			default:
				t.Errorf("call %d: %+v, %v", i, r, err)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	<-done
	t.Logf("%d calls answered, %d overloaded", answered.Load(), overloaded.Load())
	a.Close()
	b.Close()
	aOut.Close()
	bOut.Close()
	a.Wait()
	b.Wait()
}

// failingDeadline is an input whose SetReadDeadline exists but fails, as
// os.Stdin's does on a pipe.
type failingDeadline struct{ *io.PipeReader }

func (failingDeadline) SetReadDeadline(time.Time) error { return errors.New("no deadline") }

// A stream that cannot be interrupted does not make Close wait for the
// peer: a call with a context that cannot end fails at once.
func TestCloseDoesNotWaitForAnUninterruptibleRead(t *testing.T) {
	in, feed := io.Pipe()
	c := rpc.NewConn(failingDeadline{in}, io.Discard, nil)
	c.Start()
	res := call(context.Background(), c, "x")
	c.Close()
	if r := <-res; !errors.Is(r.Err, rpc.ErrClosed) {
		t.Fatalf("call = %v, want ErrClosed", r.Err)
	}
	feed.Close() // the read returns; the read loop exits
	c.Wait()
}

// A write timeout ends a connection whose peer makes no progress, on
// streams with and without a write deadline.
func TestWriteTimeoutEndsAStalledConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, feed := io.Pipe()
		out := newStuckWriter()
		c := rpc.NewConn(in, out, &rpc.Options{WriteTimeout: 5 * time.Second})
		c.Start()
		res := call(context.Background(), c, "x")
		if r := <-res; !errors.Is(r.Err, rpc.ErrWriteTimeout) {
			t.Fatalf("call = %v, want ErrWriteTimeout", r.Err)
		}
		if !errors.Is(c.Err(), rpc.ErrWriteTimeout) {
			t.Fatalf("Err = %v", c.Err())
		}
		close(out.release)
		feed.Close()
		c.Wait()
	})
}

// A Conn that was never started cannot be answered: a call says so at
// once instead of waiting for ever.
func TestCallBeforeStartFails(t *testing.T) {
	c := rpc.NewConn(strings.NewReader(""), io.Discard, nil)
	if _, err := echo.Call(context.Background(), c, echoParams{}); !errors.Is(err, rpc.ErrNotStarted) {
		t.Fatalf("Call = %v, want ErrNotStarted", err)
	}
	if err := note.Notify(context.Background(), c, echoParams{}); err != nil {
		t.Fatalf("Notify before Start = %v", err)
	}
	c.Close()
}

// Programmer mistakes panic with a message that names them.
func TestMisuseIsExplained(t *testing.T) {
	for name, f := range map[string]func(){
		"NewConn(nil reader)": func() { rpc.NewConn(nil, io.Discard, nil) },
		"NewConn(nil writer)": func() { rpc.NewConn(strings.NewReader(""), nil, nil) },
		"Call on nil Conn":    func() { echo.Call(context.Background(), nil, echoParams{}) },
		"Notify on nil Conn": func() {
			note.Notify(context.Background(), rpc.ConnFromContext(context.Background()), echoParams{})
		},
		"Handle on nil Registry": func() {
			rpc.Handle(nil, echo, func(context.Context, echoParams) (echoResult, error) { return echoResult{}, nil })
		},
	} {
		func() {
			defer func() {
				v := recover()
				if msg, _ := v.(string); !strings.HasPrefix(msg, "rpc: ") {
					t.Errorf("%s: panic %v, want an rpc: message", name, v)
				}
			}()
			f()
		}()
	}
}

var _ = bufio.NewReader
