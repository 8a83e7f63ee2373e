package openrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/rpc"
)

type Operands struct {
	A float64 `json:"a"`
	B float64 `json:"b" jsonschema:"the divisor, not zero"`
}

var Divide = rpc.NewMethod[Operands, float64]("divide").Describe(rpc.Doc{
	Summary: "Divides a by b.",
	Errors:  []rpc.ErrorDoc{{Code: 1, Message: "division by zero"}},
})

// A document from descriptors: each member of the params struct is a
// param by name.
func ExampleDescribe() {
	doc, err := openrpc.Describe(openrpc.Info{Title: "calc", Version: "1.0.0"}, Divide.Info())
	if err != nil {
		panic(err)
	}
	m := doc.Methods[0]
	fmt.Println(m.Name, m.ParamStructure, "-", m.Summary)
	for _, p := range m.Params {
		schema, _ := json.Marshal(p.Schema)
		fmt.Printf(" param %s %s\n", p.Name, schema)
	}
	result, _ := json.Marshal(m.Result.Schema)
	fmt.Printf(" result %s\n", result)
	fmt.Println(" error", m.Errors[0].Code, m.Errors[0].Message)
	// Output:
	// divide by-name - Divides a by b.
	//  param a {"type":"number"}
	//  param b {"description":"the divisor, not zero","type":"number"}
	//  result {"type":"number"}
	//  error 1 division by zero
}

// A server that answers rpc.discover, asked by a client.
func ExampleHandleDiscover() {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Divide, func(_ context.Context, p Operands) (float64, error) { return p.A / p.B, nil })
	if err := openrpc.HandleDiscover(reg, openrpc.Info{Title: "calc", Version: "1.0.0"}); err != nil {
		panic(err)
	}
	client := connect(reg)
	defer client.Close()

	doc, err := openrpc.Discover.Call(context.Background(), client, rpc.NoParams{})
	if err != nil {
		panic(err)
	}
	for _, m := range doc.Methods {
		fmt.Println(doc.Info.Title, "serves", m.Name)
	}
	// Output:
	// calc serves divide
}

// connect returns a client Conn connected to a server Conn of reg over
// pipes; closing the client ends both.
func connect(reg *rpc.Registry) *rpc.Conn {
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	server := rpc.NewConn(serverIn, serverOut, &rpc.Options{Handler: reg})
	server.Start()
	go func() { <-server.Done(); serverOut.Close() }()
	client := rpc.NewConn(clientIn, clientOut, nil)
	client.Start()
	go func() { <-client.Done(); clientOut.Close() }()
	return client
}
