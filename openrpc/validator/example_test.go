package validator_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/openrpc/validator"
	"github.com/linerpc/linerpc/rpc"
)

type Operands struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

var Divide = rpc.NewMethod[Operands, float64]("divide")

// A server that checks params against their schema before its handlers
// run: the refusal names the member that failed.
func ExampleValidator_CheckParams() {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Divide, func(_ context.Context, p Operands) (float64, error) { return p.A / p.B, nil })
	doc, err := openrpc.Describe(openrpc.Info{Title: "calc", Version: "1.0.0"}, reg.Methods()...)
	if err != nil {
		panic(err)
	}
	v, err := validator.New(doc)
	if err != nil {
		panic(err)
	}
	fmt.Println(v.CheckParams("divide", json.RawMessage(`{"a":1}`)))
	fmt.Println(v.CheckParams("divide", json.RawMessage(`{"a":1,"b":"2"}`)))
	fmt.Println(v.CheckParams("divide", json.RawMessage(`{"a":1,"b":2}`)))
	// A Conn with rpc.Options{Handler: reg, CheckParams: v.CheckParams}
	// answers the first two with these errors.
	// Output:
	// jsonrpc error -32602: invalid params: missing property 'b'
	// jsonrpc error -32602: invalid params: /b: got string, want number
	// <nil>
}
