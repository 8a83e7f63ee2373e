package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/linerpc/linerpc/rpc"
)

type ctxKey struct{}

// The serving interceptor sees each request and notification (method, id,
// decoded params), the handler's outcome (panics as -32603), and passes
// the handler a context of its own making; what it returns is answered.
func TestServeInterceptor(t *testing.T) {
	seen := make(chan string, 8)
	reg := echoRegistry()
	rpc.HandleNotification(reg, note, func(ctx context.Context, p echoParams) {
		seen <- fmt.Sprintf("notification handler: %v", ctx.Value(ctxKey{}))
	})
	intercept := func(next rpc.ServeFunc) rpc.ServeFunc {
		return func(ctx context.Context, req *rpc.Request) (any, error) {
			ctx = context.WithValue(ctx, ctxKey{}, "from the interceptor")
			if rpc.RequestFromContext(ctx) != req {
				t.Errorf("the context's request is not the interceptor's")
			}
			res, err := next(ctx, req)
			var code rpc.Code
			var e *rpc.Error
			if errors.As(err, &e) {
				code = e.Code
			}
			seen <- fmt.Sprintf("%s %s %+v notification=%v -> %+v %d", req.Method, req.ID, req.Params, req.IsNotification(), res, code)
			if req.Method == "echo" && res != nil {
				return echoResult{Echo: res.(echoResult).Echo + " (intercepted)"}, nil
			}
			return res, err
		}
	}
	p := newPeer(t, &rpc.Options{Handler: reg, Intercept: intercept})

	p.Send(`{"jsonrpc":"2.0","id":"a","method":"echo","params":{"text":"hi"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":"a","result":{"echo":"hi (intercepted)"}}`)
	if got, want := <-seen, `echo "a" {Text:hi} notification=false -> {Echo:hi} 0`; got != want {
		t.Fatalf("interceptor saw %q, want %q", got, want)
	}
	p.Send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"panic"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"internal error: the handler panicked"}}`)
	if got, want := <-seen, `echo 2 {Text:panic} notification=false -> <nil> -32603`; got != want {
		t.Fatalf("interceptor saw %q, want %q", got, want)
	}
	p.Send(`{"jsonrpc":"2.0","method":"note","params":{"text":"n"}}`)
	if got, want := <-seen, "notification handler: from the interceptor"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	if got, want := <-seen, `note  {Text:n} notification=true -> <nil> 0`; got != want {
		t.Fatalf("interceptor saw %q, want %q", got, want)
	}
}

// A serving interceptor refuses a request by returning an *Error without
// calling next: the handler does not run, and the peer gets that error.
func TestServeInterceptorRefuses(t *testing.T) {
	ran := make(chan string, 4)
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echo, func(ctx context.Context, p echoParams) (echoResult, error) {
		ran <- p.Text
		return echoResult{Echo: p.Text}, nil
	})
	intercept := func(next rpc.ServeFunc) rpc.ServeFunc {
		return func(ctx context.Context, req *rpc.Request) (any, error) {
			if p, ok := req.Params.(echoParams); ok && p.Text == "secret" {
				return nil, &rpc.Error{Code: -32001, Message: "not allowed"}
			}
			return next(ctx, req)
		}
	}
	p := newPeer(t, &rpc.Options{Handler: reg, Intercept: intercept})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"secret"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"not allowed"}}`)
	p.Send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"open"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":2,"result":{"echo":"open"}}`)
	if got := <-ran; got != "open" {
		t.Fatalf("handler ran for %q", got)
	}
	select {
	case got := <-ran:
		t.Fatalf("handler ran for %q", got)
	default:
	}
}

// The calling interceptor sees each call (method, params, id, raw result,
// outcome) and notification; one that refuses sends nothing.
func TestCallInterceptor(t *testing.T) {
	seen := make(chan string, 8)
	intercept := func(next rpc.CallFunc) rpc.CallFunc {
		return func(ctx context.Context, call *rpc.Call) error {
			if call.Method == "forbidden" {
				return errors.New("refused here")
			}
			err := next(ctx, call)
			seen <- fmt.Sprintf("%s %+v notification=%v id=%s result=%s err=%v", call.Method, call.Params, call.Notification, call.ID, call.Result, err)
			return err
		}
	}
	p := newPeer(t, &rpc.Options{InterceptCall: intercept})

	res := call(context.Background(), p.conn, "hi")
	p.Expect(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"hi"}}`)
	p.Send(`{"jsonrpc":"2.0","id":1,"result":{"echo":"hi!"}}`)
	if r := <-res; r.Err != nil || r.Result.Echo != "hi!" {
		t.Fatalf("call: %+v", r)
	}
	if got, want := <-seen, `echo {Text:hi} notification=false id=1 result={"echo":"hi!"} err=<nil>`; got != want {
		t.Fatalf("interceptor saw %q, want %q", got, want)
	}

	res = call(context.Background(), p.conn, "bad")
	p.Expect(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"bad"}}`)
	p.Send(`{"jsonrpc":"2.0","id":2,"error":{"code":7,"message":"no"}}`)
	if r := <-res; r.Err == nil {
		t.Fatal("call succeeded")
	}
	if got, want := <-seen, `echo {Text:bad} notification=false id=2 result= err=jsonrpc error 7: no`; got != want {
		t.Fatalf("interceptor saw %q, want %q", got, want)
	}

	if err := p.conn.Call(context.Background(), "forbidden", nil, nil); err == nil || err.Error() != "refused here" {
		t.Fatalf("refused call: %v", err)
	}
	if err := p.conn.Notify(context.Background(), "forbidden", nil); err == nil {
		t.Fatal("refused notification sent")
	}
	if err := tick.Notify(context.Background(), p.conn, rpc.NoParams{}); err != nil {
		t.Fatal(err)
	}
	p.Expect(`{"jsonrpc":"2.0","method":"tick"}`) // nothing was sent for the refused ones
	if got, want := <-seen, `tick <nil> notification=true id= result= err=<nil>`; got != want {
		t.Fatalf("interceptor saw %q, want %q", got, want)
	}
}

// A calling interceptor that returns nil without calling next fails the
// call rather than inventing a result.
func TestCallInterceptorMustSend(t *testing.T) {
	p := newPeer(t, &rpc.Options{InterceptCall: func(next rpc.CallFunc) rpc.CallFunc {
		return func(ctx context.Context, call *rpc.Call) error { return nil }
	}})
	var r json.RawMessage
	if err := p.conn.Call(context.Background(), "m", nil, &r); err == nil {
		t.Fatal("a call that was never sent succeeded")
	}
}
