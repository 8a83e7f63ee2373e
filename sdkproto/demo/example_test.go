package demo_test

import (
	"context"
	"fmt"
	"io"

	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/demo"
)

// A Client drives the demo runtime served over a pair of pipes, as it
// would drive a real runtime launched as a child process: each command of
// the script is one prompt.
func ExampleServe() {
	toRuntime, clientOut := io.Pipe()
	clientIn, fromRuntime := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- demo.Serve(context.Background(), toRuntime, fromRuntime)
		fromRuntime.Close()
	}()

	c := sdkproto.NewClient(clientIn, clientOut, nil)
	ctx := context.Background()
	if _, err := c.Initialize(ctx, sdkproto.InitializeParams{
		Cwd: "/srv/project", Provider: "deepseek-official", Model: "deepseek-v4-flash"}); err != nil {
		fmt.Println(err)
		return
	}
	for _, prompt := range []string{"hello", "/think why", "/tool ping", "/subagent count to three", "/fail no model here"} {
		res, err := c.Run(ctx, "main", sdkproto.TextBlock(prompt))
		fmt.Printf("%-26q %-9s %q %v\n", prompt, res.FinishReason, res.FinalResponse, err)
	}
	fmt.Println(c.Close(), <-served)
	// Output:
	// "hello"                    completed "hello" <nil>
	// "/think why"               completed "why" <nil>
	// "/tool ping"               completed "tool said: ping" <nil>
	// "/subagent count to three" completed "subagent said: count to three" <nil>
	// "/fail no model here"      error     "" <nil>
	// <nil> <nil>
}

// A Runtime of the caller's own Server, with an option: initialize names
// a provider the runtime must have an adapter for.
func ExampleNewRuntime() {
	toRuntime, clientOut := io.Pipe()
	clientIn, fromRuntime := io.Pipe()
	srv := sdkproto.NewServer(demo.NewRuntime(&demo.Options{Providers: []string{"local"}}), nil)
	go func() {
		srv.Serve(context.Background(), toRuntime, fromRuntime)
		fromRuntime.Close()
	}()

	c := sdkproto.NewClient(clientIn, clientOut, nil)
	defer c.Close()
	_, err := c.Initialize(context.Background(), sdkproto.InitializeParams{Cwd: "/srv", Provider: "deepseek-official", Model: "m"})
	fmt.Println(err)
	_, err = c.Initialize(context.Background(), sdkproto.InitializeParams{Cwd: "/srv", Provider: "local", Model: "m"})
	fmt.Println(err)
	// Output:
	// initialize: no adapter registered for provider "deepseek-official" (code -32603)
	// <nil>
}
