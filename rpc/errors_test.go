package rpc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
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
