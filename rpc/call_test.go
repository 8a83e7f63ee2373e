package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

var (
	tick = rpc.NewNotification[rpc.NoParams]("tick")
	note = rpc.NewNotification[echoParams]("note")
)

func TestCallSettlesWithResult(t *testing.T) {
	p := newPeer(t, nil)
	res := call(context.Background(), p.conn, "hi")
	p.Expect(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"hi"}}`)
	p.Send(`{"jsonrpc":"2.0","id":1,"result":{"echo":"hi!"}}`)
	if r := <-res; r.Err != nil || r.Result.Echo != "hi!" {
		t.Fatalf("got %+v", r)
	}
}

func TestCallSettlesWithErrorObject(t *testing.T) {
	p := newPeer(t, nil)
	res := call(context.Background(), p.conn, "hi")
	id := string(p.NextCall().ID)
	p.Send(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32000,"message":"nope","data":{"why":[1,2]}}}`)
	r := <-res
	var e *rpc.Error
	if !errors.As(r.Err, &e) {
		t.Fatalf("err = %v, want *rpc.Error", r.Err)
	}
	if e.Code != -32000 || e.CodeMissing || e.Message != "nope" || string(e.Data) != `{"why":[1,2]}` {
		t.Fatalf("error = %+v", e)
	}
	if got := e.Error(); got != "jsonrpc error -32000: nope" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestResponseIDsMatchByTypeAndValue(t *testing.T) {
	drops := make(chan rpc.Drop, 8)
	p := newPeer(t, &rpc.Options{OnDrop: func(d rpc.Drop) { drops <- d }})
	res := call(context.Background(), p.conn, "a")
	p.NextCall() // id 1
	p.Send(`{"jsonrpc":"2.0","id":"1","result":{"echo":"string id"}}`)
	if d := <-drops; d.Reason != rpc.DropUnmatchedResponse {
		t.Fatalf("drop %v, want unmatched response", d.Reason)
	}
	// JavaScript peers parse 1.0 and 1e0 as 1, so they name call 1 too.
	p.Send(`{"jsonrpc":"2.0","id":1.0,"result":{"echo":"one"}}`)
	if r := <-res; r.Err != nil || r.Result.Echo != "one" {
		t.Fatalf("got %+v", r)
	}
	res = call(context.Background(), p.conn, "b")
	p.NextCall() // id 2
	p.Send(`{"jsonrpc":"2.0","id":2e0,"result":{"echo":"two"}}`)
	if r := <-res; r.Err != nil || r.Result.Echo != "two" {
		t.Fatalf("got %+v", r)
	}
}

func TestCallAbandonedByContextDropsLateResponse(t *testing.T) {
	drops := make(chan rpc.Drop, 8)
	p := newPeer(t, &rpc.Options{OnDrop: func(d rpc.Drop) { drops <- d }})
	ctx, cancel := context.WithCancel(context.Background())
	res := call(ctx, p.conn, "slow")
	id := string(p.NextCall().ID)
	cancel()
	if r := <-res; !errors.Is(r.Err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", r.Err)
	}
	p.Send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"echo":"late"}}`)
	if d := <-drops; d.Reason != rpc.DropUnmatchedResponse {
		t.Fatalf("drop %v, want unmatched response", d.Reason)
	}
}

func TestDoneContextWritesNothing(t *testing.T) {
	p := newPeer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := echo.Call(ctx, p.conn, echoParams{Text: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call err = %v", err)
	}
	if err := tick.Notify(ctx, p.conn, rpc.NoParams{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Notify err = %v", err)
	}
	// The first frame on the wire is the one sent afterwards.
	go tick.Notify(context.Background(), p.conn, rpc.NoParams{})
	p.Expect(`{"jsonrpc":"2.0","method":"tick"}`)
}

func TestCloseFailsPendingCalls(t *testing.T) {
	p := newPeer(t, nil)
	res := call(context.Background(), p.conn, "x")
	p.NextCall()
	p.conn.Close()
	if r := <-res; !errors.Is(r.Err, rpc.ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", r.Err)
	}
	if _, err := echo.Call(context.Background(), p.conn, echoParams{}); !errors.Is(err, rpc.ErrClosed) {
		t.Fatalf("call after Close: %v", err)
	}
	if err := note.Notify(context.Background(), p.conn, echoParams{}); !errors.Is(err, rpc.ErrClosed) {
		t.Fatalf("notify after Close: %v", err)
	}
	if !errors.Is(p.conn.Err(), rpc.ErrClosed) {
		t.Fatalf("Err = %v", p.conn.Err())
	}
}

func TestInputEndFailsPendingCalls(t *testing.T) {
	p := newPeer(t, nil)
	res := call(context.Background(), p.conn, "x")
	p.NextCall()
	p.Send(`{"jsonrpc":"2.0","id":99,"method":"unterminated"`[:20]) // garbage, then the end
	p.CloseInput(nil)
	if r := <-res; !errors.Is(r.Err, rpc.ErrInputEnded) {
		t.Fatalf("err = %v, want ErrInputEnded", r.Err)
	}
	<-p.conn.Done()
	if !errors.Is(p.conn.Err(), rpc.ErrInputEnded) {
		t.Fatalf("Err = %v", p.conn.Err())
	}
}

var errBrokenStream = errors.New("broken stream")

func TestInputErrorFailsPendingCalls(t *testing.T) {
	p := newPeer(t, nil)
	res := call(context.Background(), p.conn, "x")
	p.NextCall()
	p.CloseInput(errBrokenStream)
	if r := <-res; !errors.Is(r.Err, errBrokenStream) {
		t.Fatalf("err = %v, want the input's error", r.Err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errBrokenStream }

func TestWriteFailureEndsTheConnection(t *testing.T) {
	rpctest.CheckNoLeak(t)
	in, feed := io.Pipe()
	c := rpc.NewConn(in, failingWriter{}, nil)
	c.Start()
	defer func() { c.Close(); feed.Close(); c.Wait() }()
	if _, err := echo.Call(context.Background(), c, echoParams{}); !errors.Is(err, errBrokenStream) {
		t.Fatalf("Call err = %v", err)
	}
	if err := tick.Notify(context.Background(), c, rpc.NoParams{}); !errors.Is(err, errBrokenStream) {
		t.Fatalf("Notify err = %v", err)
	}
	// Dead output ends the connection, with the write error as the reason.
	<-c.Done()
	if err := c.Err(); !errors.Is(err, errBrokenStream) {
		t.Fatalf("Err = %v, want the write error", err)
	}
}

func TestResultThatDoesNotDecode(t *testing.T) {
	p := newPeer(t, nil)
	res := call(context.Background(), p.conn, "x")
	id := string(p.NextCall().ID)
	p.Send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"echo":42}}`)
	if r := <-res; !errors.Is(r.Err, rpc.ErrInvalidResult) {
		t.Fatalf("err = %v, want ErrInvalidResult", r.Err)
	}
}

func TestUntypedCallAndNotify(t *testing.T) {
	p := newPeer(t, nil)
	done := make(chan error, 1)
	var raw json.RawMessage
	go func() { done <- p.conn.Call(context.Background(), "any/thing", []int{1, 2}, &raw) }()
	r := p.NextCall()
	id, method := string(r.ID), r.Method
	if method != "any/thing" {
		t.Fatalf("method %q", method)
	}
	p.Send(`{"jsonrpc":"2.0","id":` + id + `,"result":[true,null]}`)
	if err := <-done; err != nil || string(raw) != "[true,null]" {
		t.Fatalf("Call = %v, result %s", err, raw)
	}
	go func() { done <- p.conn.Call(context.Background(), "no/params", nil, nil) }()
	p.Expect(`{"jsonrpc":"2.0","id":2,"method":"no/params"}`)
	p.Send(`{"jsonrpc":"2.0","id":2,"result":{"ignored":true}}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	go func() { done <- p.conn.Notify(context.Background(), "bare", nil) }()
	p.Expect(`{"jsonrpc":"2.0","method":"bare"}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestNoParamsOmitsTheMember(t *testing.T) {
	ping := rpc.NewMethod[rpc.NoParams, struct{}]("ping")
	p := newPeer(t, nil)
	done := make(chan error, 1)
	go func() { _, err := ping.Call(context.Background(), p.conn, rpc.NoParams{}); done <- err }()
	p.Expect(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	p.Send(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ping.Name() != "ping" || tick.Name() != "tick" {
		t.Fatal("Name() does not return the wire name")
	}
}

// A response longer than MaxFrameSize is skipped unread, but when its id
// shows in its first bytes, as peers write it, the call it answers fails
// at once with ErrFrameTooLarge instead of waiting for ever
// (TestOversizeResponseFailsItsCall regresses a call that waited until its
// context ended, for ever with context.Background()).
func TestOversizeResponseFailsItsCall(t *testing.T) {
	drops := make(chan rpc.Drop, 4)
	p := newPeer(t, &rpc.Options{MaxFrameSize: 1 << 10, OnDrop: func(d rpc.Drop) { drops <- d }})
	res := call(context.Background(), p.conn, "big")
	r := p.NextCall()
	p.Send(`{"jsonrpc":"2.0","id":` + string(r.ID) + `,"result":{"echo":"` + strings.Repeat("x", 4<<10) + `"}}`)
	got := linetest.Within(t, res, "the call answered by an oversize response")
	if !errors.Is(got.Err, rpc.ErrFrameTooLarge) || !strings.Contains(got.Err.Error(), "response") {
		t.Fatalf("call = %v, want ErrFrameTooLarge about the response", got.Err)
	}
	if d := linetest.Within(t, drops, "the oversize drop"); d.Reason != rpc.DropOversize {
		t.Fatalf("drop %v, want DropOversize", d.Reason)
	}
	// A call whose oversize response does not show its id early waits on,
	// and the stream goes on.
	res = call(context.Background(), p.conn, "big")
	r = p.NextCall()
	p.Send(`{"jsonrpc":"2.0","result":{"echo":"` + strings.Repeat("x", 4<<10) + `"},"id":` + string(r.ID) + `}`)
	linetest.Within(t, drops, "the second oversize drop")
	p.Answer(r, `{"echo":"small"}`)
	if got := linetest.Within(t, res, "the call answered again"); got.Err != nil || got.Result.Echo != "small" {
		t.Fatalf("call = %+v", got)
	}
}

// A call returns after the notifications the peer wrote ahead of its
// response have been handled, as the TypeScript transport handles them
// before the response (notifications run on a goroutine of their own, so
// this is a promise of the Conn's, not of the order of goroutines); and
// so does a call that the end of the input fails.
func TestCallReturnsAfterTheNotificationsAhead(t *testing.T) {
	const n = 200
	var handled atomic.Int64
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, note, func(context.Context, echoParams) { handled.Add(1) })
	p := newPeer(t, &rpc.Options{Handler: reg})
	for round, end := range []string{"response", "end of input"} {
		res := call(context.Background(), p.conn, "x")
		r := p.NextCall()
		for range n {
			p.Send(`{"jsonrpc":"2.0","method":"note","params":{"text":"n"}}`)
		}
		if end == "response" {
			p.Answer(r, `{"echo":"x"}`)
		} else {
			p.CloseInput(nil)
		}
		got := linetest.Within(t, res, "the call to return")
		if h := handled.Load(); h != int64((round+1)*n) {
			t.Fatalf("after the %s: the call returned (%v) with %d notifications handled, want %d", end, got.Err, h, (round+1)*n)
		}
	}
}

// Callers that read their own responses (a context that cannot end, on a
// stream with read deadlines) each get their own result, whoever reads
// it: a caller lets the reading role go only once its result is copied
// out of the frame, which the next reader overwrites (run with -race, a
// copy made after would be reported; without it, results came empty).
func TestCallersReadingGetTheirOwnResults(t *testing.T) {
	ar, bw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	br, aw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echo, func(_ context.Context, p echoParams) (echoResult, error) { return echoResult{Echo: p.Text}, nil })
	srv, cl := rpc.NewConn(br, bw, &rpc.Options{Handler: reg}), rpc.NewConn(ar, aw, nil)
	t.Cleanup(func() {
		cl.Close()
		srv.Close()
		for _, f := range []*os.File{ar, bw, br, aw} {
			f.Close()
		}
		cl.Wait()
		srv.Wait()
	})
	srv.Start()
	cl.Start()
	const callers, calls = 8, 300
	errs := make(chan error, callers)
	for g := range callers {
		go func() {
			for i := range calls {
				text := fmt.Sprint(g, ".", i)
				r, err := echo.Call(context.Background(), cl, echoParams{Text: text})
				if err == nil && r.Echo != text {
					err = fmt.Errorf("call %q got %q", text, r.Echo)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range callers {
		if err := linetest.Within(t, errs, "a caller's calls to end"); err != nil {
			t.Fatal(err)
		}
	}
}

// Conn.Call refuses a result it could not decode into (not a non-nil
// pointer) before it sends anything: the next request the peer reads is
// the next call's, id 1.
func TestCallRefusesANonPointerResultBeforeSending(t *testing.T) {
	p := newPeer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), linetest.WaitBound) // a call that was sent waits for its answer
	defer cancel()
	var nilPtr *echoResult
	for _, result := range []any{echoResult{}, nilPtr, "text"} {
		err := p.conn.Call(ctx, "echo", echoParams{Text: "x"}, result)
		if err == nil || !strings.Contains(err.Error(), "non-nil pointer") {
			t.Fatalf("Call with a %T result: %v, want a refusal", result, err)
		}
	}
	res := call(context.Background(), p.conn, "after")
	p.Expect(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"after"}}`)
	p.Send(`{"jsonrpc":"2.0","id":1,"result":{"echo":"after"}}`)
	if r := linetest.Within(t, res, "the call after the refusals"); r.Err != nil || r.Result.Echo != "after" {
		t.Fatalf("the call after the refusals: %+v", r)
	}
}
