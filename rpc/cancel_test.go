package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
)

// A handler's context carries its request's method and raw id, and the
// Conn; a notification handler's says it is one.
func TestRequestFromContext(t *testing.T) {
	reg := rpc.NewRegistry()
	type seen struct {
		method, id   string
		notification bool
		conn         bool
	}
	got := make(chan seen, 4)
	report := func(ctx context.Context) {
		r := rpc.RequestFromContext(ctx)
		got <- seen{r.Method, string(r.ID), r.IsNotification(), rpc.ConnFromContext(ctx) != nil}
	}
	rpc.Handle(reg, echo, func(ctx context.Context, p echoParams) (echoResult, error) {
		report(ctx)
		return echoResult{}, nil
	})
	rpc.HandleNotification(reg, note, func(ctx context.Context, p echoParams) { report(ctx) })
	reg.HandleUnknown(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		report(ctx)
		return nil, nil
	})
	p := newPeer(t, &rpc.Options{Handler: reg})

	for _, tc := range []struct {
		line string
		want seen
	}{
		{`{"jsonrpc":"2.0","id":"req_\u0031","method":"echo","params":{}}`, seen{"echo", `"req_\u0031"`, false, true}},
		{`{"jsonrpc":"2.0","id":1.50,"method":"echo"}`, seen{"echo", `1.50`, false, true}},
		{`{"jsonrpc":"2.0","id":"` + strings.Repeat("long", 20) + `","method":"other"}`, seen{"other", `"` + strings.Repeat("long", 20) + `"`, false, true}},
		{`{"jsonrpc":"2.0","method":"note","params":{"text":"n"}}`, seen{"note", "", true, true}},
	} {
		p.Send(tc.line)
		if s := <-got; s != tc.want {
			t.Errorf("%s: context says %+v, want %+v", tc.line, s, tc.want)
		}
		if !strings.Contains(tc.line, `"method":"note"`) {
			p.Next()
		}
	}
	if rpc.RequestFromContext(context.Background()) != nil {
		t.Error("RequestFromContext of a context that is no handler's is not nil")
	}
}

// Close ends a running request's context with ErrClosed as its cause.
func TestRequestContextEndsWithClose(t *testing.T) {
	b := linetest.NewBlocker()
	p := newPeer(t, &rpc.Options{Handler: b.Reg})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"text":"x"}}`)
	<-b.Started
	p.conn.Close()
	if cause := <-b.Ended; !errors.Is(cause, rpc.ErrClosed) {
		t.Fatalf("cause %v, want ErrClosed", cause)
	}
}

// The end of the input does not end the running requests: they are
// answered (the peer may still read, as a shell pipe's reader does).
func TestRequestContextOutlivesTheInput(t *testing.T) {
	b := linetest.NewBlocker()
	p := newPeer(t, &rpc.Options{Handler: b.Reg})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"text":"x"}}`)
	ctx := <-b.Started
	p.CloseInput(nil)
	<-p.conn.Done()
	if err := p.conn.Err(); !errors.Is(err, rpc.ErrInputEnded) {
		t.Fatalf("Err = %v", err)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("the request's context ended with the input: %v", context.Cause(ctx))
	}
	close(b.Release)
	p.Expect(`{"jsonrpc":"2.0","id":1,"result":{"echo":"released"}}`)
}

// Close after the end of the input ends the running requests with
// ErrClosed too.
func TestRequestContextEndsWithCloseAfterTheInput(t *testing.T) {
	b := linetest.NewBlocker()
	p := newPeer(t, &rpc.Options{Handler: b.Reg})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"text":"x"}}`)
	<-b.Started
	p.CloseInput(nil)
	<-p.conn.Done()
	p.conn.Close()
	if cause := <-b.Ended; !errors.Is(cause, rpc.ErrClosed) {
		t.Fatalf("cause %v, want ErrClosed", cause)
	}
}

// A request's context ends when its handler returns.
func TestRequestContextEndsWhenTheHandlerReturns(t *testing.T) {
	b := linetest.NewBlocker()
	close(b.Release)
	p := newPeer(t, &rpc.Options{Handler: b.Reg})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"text":"x"}}`)
	ctx := <-b.Started
	p.Expect(`{"jsonrpc":"2.0","id":1,"result":{"echo":"released"}}`)
	if !errors.Is(ctx.Err(), context.Canceled) || errors.Is(context.Cause(ctx), rpc.ErrPeerCancelled) {
		t.Fatalf("after the handler returned: %v, cause %v", ctx.Err(), context.Cause(ctx))
	}
}

// MCP, inbound: notifications/cancelled ends the running request's context
// with the reason in its cause, and the request gets no response, whatever
// its handler returns. Ids match by JSON value: 1.0 and 1e0 name 1.
func TestMCPCancelInbound(t *testing.T) {
	b := linetest.NewBlocker()
	drops := make(chan rpc.Drop, 16)
	p := newPeer(t, &rpc.Options{Handler: b.Reg, Cancellation: rpc.MCPCancellation(), OnDrop: func(d rpc.Drop) { drops <- d }})
	for _, tc := range []struct{ id, text, cancelID, reason string }{
		{`1`, "error", `1.0`, `"user"`},
		{`2`, "result", `2e0`, ``},
		{`"s"`, "error", `"\u0073"`, `"why not"`},
	} {
		p.Send(`{"jsonrpc":"2.0","id":` + tc.id + `,"method":"block","params":{"text":"` + tc.text + `"}}`)
		<-b.Started
		params := `{"requestId":` + tc.cancelID
		if tc.reason != "" {
			params += `,"reason":` + tc.reason
		}
		p.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":` + params + `}}`)
		cause := <-b.Ended
		if !errors.Is(cause, rpc.ErrPeerCancelled) {
			t.Fatalf("cause %v, want ErrPeerCancelled", cause)
		}
		if tc.reason != "" && !strings.Contains(cause.Error(), strings.Trim(tc.reason, `"`)) {
			t.Fatalf("cause %q lacks the reason %s", cause, tc.reason)
		}
	}
	// No response was written for any: the next frame answers this.
	p.Send(`{"jsonrpc":"2.0","id":9,"method":"echo","params":{"text":"next"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":9,"result":{"echo":"next"}}`)
	select {
	case d := <-drops:
		t.Fatalf("unexpected drop %+v", d)
	default:
	}
}

// LSP, inbound: $/cancelRequest ends the request's context; a handler that
// then returns an error is answered -32800, one that returns a result has
// it sent.
func TestLSPCancelInbound(t *testing.T) {
	b := linetest.NewBlocker()
	p := newPeer(t, &rpc.Options{Handler: b.Reg, Cancellation: rpc.LSPCancellation()})
	p.Send(`{"jsonrpc":"2.0","id":"a","method":"block","params":{"text":"error"}}`)
	<-b.Started
	p.Send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":"a","error":{"code":-32800,"message":"request cancelled"}}`)
	if cause := <-b.Ended; !errors.Is(cause, rpc.ErrPeerCancelled) {
		t.Fatalf("cause %v", cause)
	}
	p.Send(`{"jsonrpc":"2.0","id":7,"method":"block","params":{"text":"result"}}`)
	<-b.Started
	p.Send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}`)
	p.Expect(`{"jsonrpc":"2.0","id":7,"result":{"echo":"done anyway"}}`)
	<-b.Ended
}

// A request still waiting for a handler slot is settled at once when the
// peer cancels it, and never runs: under MCP without a response, under
// LSP with -32800.
func TestCancelWaitingRequest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy *rpc.CancelPolicy
		cancel string
		answer string // "" for none
	}{
		{"MCP", rpc.MCPCancellation(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`, ""},
		{"LSP", rpc.LSPCancellation(), `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":2}}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"request cancelled"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := linetest.NewBlocker()
			p := newPeer(t, &rpc.Options{Handler: b.Reg, Cancellation: tc.policy, MaxConcurrentRequests: 1})
			p.Send(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"text":"x"}}`)
			<-b.Started
			p.Send(`{"jsonrpc":"2.0","id":2,"method":"block","params":{"text":"x"}}`) // waits for the slot
			p.Send(tc.cancel)
			if tc.answer != "" {
				p.Expect(tc.answer) // while request 1 still holds the slot
			}
			// Send returns once the Conn has read the bytes, not handled
			// them: the answer to a request the read loop answers itself
			// shows that the cancel before it was handled.
			p.Send(`{"jsonrpc":"2.0","id":"sync","method":"nosuch"}`)
			p.Expect(`{"jsonrpc":"2.0","id":"sync","error":{"code":-32601,"message":"method not found: nosuch"}}`)
			close(b.Release)
			p.Expect(`{"jsonrpc":"2.0","id":1,"result":{"echo":"released"}}`)
			<-b.Ended
			p.Send(`{"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":"after"}}`)
			p.Expect(`{"jsonrpc":"2.0","id":3,"result":{"echo":"after"}}`)
			select {
			case <-b.Started:
				t.Fatal("the cancelled request ran")
			default:
			}
		})
	}
}

// Cancellations of no running request (unknown, finished, of another
// JSON type, malformed) are ignored and reported.
func TestCancelUnmatched(t *testing.T) {
	drops := make(chan rpc.Drop, 16)
	b := linetest.NewBlocker()
	p := newPeer(t, &rpc.Options{Handler: b.Reg, Cancellation: rpc.MCPCancellation(), OnDrop: func(d rpc.Drop) { drops <- d }})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"quick"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":1,"result":{"echo":"quick"}}`)
	p.Send(`{"jsonrpc":"2.0","id":2,"method":"block","params":{"text":"x"}}`)
	<-b.Started
	for _, tc := range []struct {
		params string
		want   rpc.DropReason
	}{
		{`{"requestId":1}`, rpc.DropUnmatchedCancel},   // finished
		{`{"requestId":99}`, rpc.DropUnmatchedCancel},  // unknown
		{`{"requestId":"2"}`, rpc.DropUnmatchedCancel}, // a string never names a number
		{`{"requestId":null}`, rpc.DropUnmatchedCancel},
		{`{"RequestId":2}`, rpc.DropUnmatchedCancel}, // names match exactly
		{`[2]`, rpc.DropInvalidParams},
	} {
		p.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":` + tc.params + `}`)
		if d := <-drops; d.Reason != tc.want || d.Method != "notifications/cancelled" {
			t.Fatalf("%s: drop %+v, want %v", tc.params, d, tc.want)
		}
	}
	select {
	case ctx := <-b.Started:
		t.Fatalf("unexpected start %v", ctx)
	default:
	}
	close(b.Release)
	p.Expect(`{"jsonrpc":"2.0","id":2,"result":{"echo":"released"}}`)
}

// Without a policy, a cancel notification is a notification like any
// other: the request runs on and is answered.
func TestNoPolicyNoCancellation(t *testing.T) {
	drops := make(chan rpc.Drop, 16)
	b := linetest.NewBlocker()
	p := newPeer(t, &rpc.Options{Handler: b.Reg, OnDrop: func(d rpc.Drop) { drops <- d }})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"text":"x"}}`)
	ctx := <-b.Started
	p.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	if d := <-drops; d.Reason != rpc.DropUnhandledNotification {
		t.Fatalf("drop %+v", d)
	}
	if ctx.Err() != nil {
		t.Fatal("the request was cancelled without a policy")
	}
	close(b.Release)
	p.Expect(`{"jsonrpc":"2.0","id":1,"result":{"echo":"released"}}`)
}

// Outbound: when a call's context ends after its request was written,
// the policy's notification is sent once, with the cause as MCP's
// reason; the call returns the context's error and a late response is
// dropped.
func TestCancelOutbound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy *rpc.CancelPolicy
		want   string
	}{
		{"MCP", rpc.MCPCancellation(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user gave up"}}`},
		{"LSP", rpc.LSPCancellation(), `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`},
		{"none", nil, `{"jsonrpc":"2.0","method":"tick"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			drops := make(chan rpc.Drop, 4)
			p := newPeer(t, &rpc.Options{Cancellation: tc.policy, OnDrop: func(d rpc.Drop) { drops <- d }})
			ctx, cancel := context.WithCancelCause(context.Background())
			res := call(ctx, p.conn, "slow")
			p.Expect(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"slow"}}`)
			cancel(errors.New("user gave up"))
			if r := <-res; !errors.Is(r.Err, context.Canceled) {
				t.Fatalf("call = %+v, want context.Canceled", r)
			}
			if tc.policy == nil {
				tick.Notify(context.Background(), p.conn, rpc.NoParams{}) // the next frame: no cancel came before it
			}
			p.Expect(tc.want)
			p.Send(`{"jsonrpc":"2.0","id":1,"result":{"echo":"late"}}`)
			if d := <-drops; d.Reason != rpc.DropUnmatchedResponse {
				t.Fatalf("late response: drop %+v", d)
			}
			// Once: the next frame is the next call's.
			go p.conn.Notify(context.Background(), "after", nil)
			p.Expect(`{"jsonrpc":"2.0","method":"after"}`)
		})
	}
}

// Outbound: a request withdrawn before any Write took it is not
// cancelled on the wire (the peer never saw it); one in a Write in
// progress is.
func TestCancelOutboundOnlyWhatWasWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, feed := io.Pipe()
		out := newStuckWriter()
		c := rpc.NewConn(in, out, &rpc.Options{Cancellation: rpc.MCPCancellation()})
		c.Start()
		ctx1, cancel1 := context.WithCancel(context.Background())
		first := call(ctx1, c, "first")
		<-out.entered // its frame is in the stuck Write
		ctx2, cancel2 := context.WithCancel(context.Background())
		second := call(ctx2, c, "second")
		synctest.Wait() // queued behind the Write
		cancel2()
		if r := <-second; !errors.Is(r.Err, context.Canceled) {
			t.Fatalf("second: %v", r.Err)
		}
		cancel1()
		if r := <-first; !errors.Is(r.Err, context.Canceled) {
			t.Fatalf("first: %v", r.Err)
		}
		close(out.release)
		if err := c.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		feed.Close()
		c.Wait()
		want := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"first"}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"context canceled"}}` + "\n"
		if got := out.String(); got != want {
			t.Fatalf("written:\n%s\nwant:\n%s", got, want)
		}
	})
}

// A notification handler runs on a goroutine of its own, not the read
// loop: it may call its peer and wait, and the response is read meanwhile,
// while the notifications behind it wait their turn.
func TestNotificationHandlerCallsItsPeer(t *testing.T) {
	reg := rpc.NewRegistry()
	got := make(chan string, 2)
	rpc.HandleNotification(reg, note, func(ctx context.Context, p echoParams) {
		r, err := echo.Call(ctx, rpc.ConnFromContext(ctx), echoParams{Text: p.Text})
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- r.Echo
	})
	p := newPeer(t, &rpc.Options{Handler: reg})
	p.Send(`{"jsonrpc":"2.0","method":"note","params":{"text":"first"}}`)
	p.Send(`{"jsonrpc":"2.0","method":"note","params":{"text":"second"}}`)
	for _, want := range []string{"first", "second"} {
		r := p.NextCall()
		if r.Method != "echo" || string(r.Params) != `{"text":"`+want+`"}` {
			t.Fatalf("request %s %s, want echo of %q", r.Method, r.Params, want)
		}
		p.Answer(r, `{"echo":"`+want+` answered"}`)
		if s := <-got; s != want+" answered" {
			t.Fatalf("the handler's call returned %q", s)
		}
	}
}

// A handler that looks at its context only after the request was
// cancelled, or after Close, still finds it ended, with the cause.
func TestRequestContextLookedAtLate(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(p *peer)
		want error
	}{
		{"peer", func(p *peer) {
			p.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
		}, rpc.ErrPeerCancelled},
		{"Close", func(p *peer) { p.conn.Close() }, rpc.ErrClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := rpc.NewRegistry()
			entered, looked := make(chan struct{}), make(chan struct{})
			got := make(chan [2]error, 1)
			rpc.Handle(reg, echo, func(ctx context.Context, p echoParams) (echoResult, error) {
				close(entered)
				<-looked // the handler has not looked at ctx until now
				<-ctx.Done()
				got <- [2]error{ctx.Err(), context.Cause(ctx)}
				return echoResult{}, nil
			})
			p := newPeer(t, &rpc.Options{Handler: reg, Cancellation: rpc.MCPCancellation()})
			p.Send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}}`)
			<-entered
			tc.end(p)
			if tc.name == "peer" {
				// The read loop handled the cancel once it answers this.
				p.Send(`{"jsonrpc":"2.0","id":2,"method":"nosuch"}`)
				p.Expect(`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: nosuch"}}`)
			}
			close(looked)
			r := <-got
			if !errors.Is(r[0], context.Canceled) || !errors.Is(r[1], tc.want) {
				t.Fatalf("Err %v, Cause %v; want context.Canceled and %v", r[0], r[1], tc.want)
			}
		})
	}
}

// A cancel notification names a request by the rule responses match calls
// by (TestCancelMatchesIDsExactly regresses a rule that compared numbers
// as doubles, so that 2^53 cancelled 2^53+1, and 2e400 cancelled 1e400):
// numbers by their exact value, strings by their content.
func TestCancelMatchesIDsExactly(t *testing.T) {
	for _, tc := range []struct{ id, other, same string }{
		{`9007199254740993`, `9007199254740992`, `9007199254740993.0`},
		{`1e400`, `2e400`, `10e399`},
		{`1.5`, `1.4999999999999999999`, `15e-1`},
		{`"a"`, `"A"`, `"\u0061"`},
	} {
		b := linetest.NewBlocker()
		drops := make(chan rpc.Drop, 4)
		p := newPeer(t, &rpc.Options{Handler: b.Reg, Cancellation: rpc.MCPCancellation(), OnDrop: func(d rpc.Drop) { drops <- d }})
		p.Send(`{"jsonrpc":"2.0","id":` + tc.id + `,"method":"block","params":{"text":"error"}}`)
		linetest.Within(t, b.Started, "the handler to start")
		p.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + tc.other + `}}`)
		if d := linetest.Within(t, drops, "the unmatched cancel's drop"); d.Reason != rpc.DropUnmatchedCancel {
			t.Fatalf("%s cancelled by %s: drop %v, want DropUnmatchedCancel", tc.id, tc.other, d.Reason)
		}
		p.Send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + tc.same + `}}`)
		if cause := linetest.Within(t, b.Ended, "the handler to end"); !errors.Is(cause, rpc.ErrPeerCancelled) {
			t.Fatalf("%s cancelled by %s: cause %v", tc.id, tc.same, cause)
		}
	}
}
