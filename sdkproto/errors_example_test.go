package sdkproto_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
)

// A runtime that serves no method at all answers each request as the DSH
// runtime answers an unknown one; the Client's error says so to errors.Is.
func ExampleErrUnknownMethod() {
	toRuntime, clientOut := io.Pipe()
	clientIn, fromRuntime := io.Pipe()
	reg := rpc.NewRegistry()
	reg.HandleUnknown(func(ctx context.Context, method string, _ json.RawMessage) (any, error) {
		return nil, &rpc.Error{Code: rpc.CodeInternalError, Message: "unknown DeepSeek Harness SDK runtime method: " + method}
	})
	runtime := rpc.NewConn(toRuntime, fromRuntime, &rpc.Options{Handler: reg})
	runtime.Start()
	defer runtime.Close()

	c := sdkproto.NewClient(clientIn, clientOut, nil)
	defer c.Close()
	_, err := c.Initialize(context.Background(), sdkproto.InitializeParams{Cwd: "/srv", Provider: "deepseek-official", Model: "m"})
	fmt.Println(err)
	fmt.Println(errors.Is(err, sdkproto.ErrUnknownMethod))
	// Output:
	// initialize: unknown DeepSeek Harness SDK runtime method: initialize (code -32603)
	// true
}
