package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// errors.Is matches an *Error by its code alone: the peer's message and
// data, and any wrapping, do not matter; another code, a missing code, or
// another kind of error does not match.
func TestErrorIsMatchesCode(t *testing.T) {
	p := newPeer(t, nil)
	res := call(context.Background(), p.conn, "x")
	p.NextCall() // id 1
	p.Send(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such method here","data":[1]}}`)
	err := linetest.Within(t, res, "the call to end").Err
	wrapped := fmt.Errorf("calling echo: %w", err)
	missing := &rpc.Error{Message: "no code", CodeMissing: true}
	for _, tc := range []struct {
		err    error
		target error
		want   bool
	}{
		{err, &rpc.Error{Code: rpc.CodeMethodNotFound}, true},
		{wrapped, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "another message"}, true},
		{err, &rpc.Error{Code: rpc.CodeInvalidParams}, false},
		{err, &rpc.Error{CodeMissing: true}, false},
		{missing, &rpc.Error{CodeMissing: true}, true},
		{missing, &rpc.Error{}, false}, // code 0 is a code
		{err, rpc.ErrClosed, false},
		{err, (*rpc.Error)(nil), false},
		{rpc.ErrClosed, &rpc.Error{}, false},
	} {
		if got := errors.Is(tc.err, tc.target); got != tc.want {
			t.Errorf("errors.Is(%v, %#v) = %v, want %v", tc.err, tc.target, got, tc.want)
		}
	}
}

// panickyHandler panics on purpose, from a frame with a name to find in
// the log.
func panickyHandler(_ context.Context, p echoParams) (echoResult, error) {
	var empty []string
	return echoResult{Echo: empty[len(p.Text)]}, nil // out of range: the runtime panics
}

// A handler's panic is logged with the site that panicked and its stack as
// a list of frames, whether interceptors wrap it or not.
func TestHandlerPanicIsLoggedWithItsSite(t *testing.T) {
	for _, intercepted := range []bool{false, true} {
		t.Run(fmt.Sprint("intercepted=", intercepted), func(t *testing.T) {
			reg := rpc.NewRegistry()
			rpc.Handle(reg, echo, panickyHandler)
			var log rpctest.LockedBuffer
			opts := &rpc.Options{Handler: reg, Logger: slog.New(slog.NewJSONHandler(&log, nil))}
			if intercepted {
				opts.Intercept = func(next rpc.ServeFunc) rpc.ServeFunc { return next }
			}
			p := newPeer(t, opts)
			p.Send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}}`)
			p.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error: the handler panicked"}}`)
			var rec struct {
				Msg, Method, Panic, At string
				Stack                  []string
			}
			for line := range strings.Lines(log.String()) {
				if strings.Contains(line, "handler panicked") {
					if err := json.Unmarshal([]byte(line), &rec); err != nil {
						t.Fatal(err)
					}
				}
			}
			if rec.Method != "echo" || !strings.Contains(rec.Panic, "index out of range") {
				t.Fatalf("logged %+v, in %s", rec, log.String())
			}
			if !strings.Contains(rec.At, "rpc_test.panickyHandler ") || !strings.Contains(rec.At, "errors_test.go:") {
				t.Errorf("the panic is logged at %q, want panickyHandler's line", rec.At)
			}
			if len(rec.Stack) < 2 || rec.Stack[0] != rec.At {
				t.Errorf("stack %q", rec.Stack)
			}
			for _, f := range rec.Stack {
				if strings.ContainsAny(f, "\n\t") || strings.HasPrefix(f, "runtime.") {
					t.Errorf("frame %q", f)
				}
			}
		})
	}
}
