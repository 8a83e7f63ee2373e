package rpc_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/linerpc/linerpc/rpc"
)

// Subtraction's params, which a client may send by name or by position.
type SubtractParams struct {
	Minuend    int `json:"minuend"`
	Subtrahend int `json:"subtrahend"`
}

// UnmarshalJSON takes {"minuend":42,"subtrahend":23} and [42,23] alike.
func (p *SubtractParams) UnmarshalJSON(data []byte) error {
	type byName SubtractParams // without this method: decoded member by member
	return rpc.UnmarshalParams(data, (*byName)(p), &p.Minuend, &p.Subtrahend)
}

var Subtract = rpc.NewMethod[SubtractParams, int]("subtract")

// Params by name and by position, into one Go type.
func ExampleUnmarshalParams() {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Subtract, func(_ context.Context, p SubtractParams) (int, error) {
		return p.Minuend - p.Subtrahend, nil
	})
	for _, params := range []string{`{"subtrahend":23,"minuend":42}`, `[42,23]`, `[42,"23"]`} {
		in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"subtract","params":` + params + "}\n")
		var out strings.Builder
		conn := rpc.NewConn(in, &out, &rpc.Options{Handler: reg})
		conn.Start()
		conn.Wait()
		fmt.Print(out.String())
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":19}
	// {"jsonrpc":"2.0","id":1,"result":19}
	// {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: position 1: expected an integer, got a string"}}
}

// A server for clients that follow the JSON-RPC 2.0 specification to the
// letter, and wait for an answer to a frame they got wrong.
func ExampleOptions_answerInvalid() {
	in := strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1`, // cut short
		`{"jsonrpc":"2.0","method":1,"params":"bar"}`,
		`[1,2]`,
	}, "\n") + "\n")
	var out strings.Builder
	conn := rpc.NewConn(in, &out, &rpc.Options{AnswerInvalid: true, Batches: true})
	conn.Start()
	conn.Wait()
	fmt.Print(out.String())
	// Output:
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON at offset 60: unexpected end of input"}}
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: method is not a string"}}
	// [{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not an object"}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not an object"}}]
}
