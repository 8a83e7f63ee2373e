// Command turn drives the demo runtime (package sdkproto/demo) with the sdkproto client:
// one streamed turn, then one run to its end. Swap demo.Serve for
// sdkproto.Launch to drive a real runtime.
//
//	go run ./examples/turn
package main

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/demo"
)

func main() {
	ctx := context.Background()

	// A runtime: here the built-in demo, served in-process over two pipes.
	// For a real one: sdkproto.Launch(exec.Command("dsh", "--profile", "sdk"), nil).
	toRuntime, clientOut := io.Pipe()
	clientIn, fromRuntime := io.Pipe()
	go func() {
		demo.Serve(ctx, toRuntime, fromRuntime)
		fromRuntime.Close()
	}()
	client := sdkproto.NewClient(clientIn, clientOut, nil)
	defer client.Close() // shutdown, then the teardown ladder

	if _, err := client.Initialize(ctx, sdkproto.InitializeParams{
		Cwd: "/srv/project", Provider: "deepseek-official", Model: "deepseek-v4-flash",
		MaxTokens: sdkproto.Tokens(4096),
	}); err != nil {
		log.Fatal(err)
	}

	// Stream a turn: text deltas as they arrive.
	for n, err := range client.Stream(ctx, "main", sdkproto.TextBlock("/think hello there")) {
		if err != nil {
			log.Fatal(err)
		}
		if delta, ok := n.TextDelta(); ok {
			fmt.Print(delta)
		}
	}
	fmt.Println()

	// Or run a turn to its end and read the result.
	res, err := client.Run(ctx, "main", sdkproto.TextBlock("/subagent count to three"))
	if err != nil {
		log.Fatal(err) // the turn could not be followed
	}
	if err := res.Err(); err != nil {
		log.Fatal(err) // the turn ended, but did not complete
	}
	fmt.Printf("%s (%s, %d events)\n", res.FinalResponse, res.FinishReason, len(res.Events))
}
