package scripted_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/scripted"
)

// params are the initialize params of the recorded transcripts
// (testdata/transcripts).
var params = sdkproto.InitializeParams{Cwd: "/srv/project", Provider: "deepseek-official", Model: "deepseek-v4-flash", MaxTokens: sdkproto.Tokens(4096)}

// serve serves script on two pipes and returns a Client of it; stop
// closes the Client and returns what Close and Serve returned.
func serve(script scripted.Script, opts *sdkproto.ClientOptions) (c *sdkproto.Client, stop func() (error, error)) {
	toRuntime, clientOut := io.Pipe()
	clientIn, fromRuntime := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- scripted.Serve(context.Background(), script, toRuntime, fromRuntime)
		fromRuntime.Close()
	}()
	c = sdkproto.NewClient(clientIn, clientOut, opts)
	return c, func() (error, error) { return c.Close(), <-served }
}

// A script of three turns drives Client.Run as a real runtime would:
// reasoning and text in deltas, a tool call and its result before the
// answer, and a model that fails. (In a test, sdktest.NewRuntime(t,
// script) serves it, connects rt.Client() and closes everything at the
// end.)
func ExampleServe() {
	c, stop := serve(scripted.Script{Turns: []*scripted.Turn{
		scripted.NewTurn().Reasoning("The user ", "greets me.").Text("Hel", "lo!"),
		scripted.NewTurn().
			ToolCall(scripted.ToolCall{Name: "bash", Arguments: `{"command":"date +%A"}`, Output: "Monday\n"}).
			Text("It is ", "Monday."),
		scripted.NewTurn().ModelError(sdkproto.LLMFailure{Message: "rate limited", Code: "RATE_LIMIT"}),
	}}, nil)
	ctx := context.Background()
	if _, err := c.Initialize(ctx, params); err != nil {
		fmt.Println(err)
		return
	}
	for _, prompt := range []string{"hi", "what day is it?", "and tomorrow?"} {
		var deltas []string
		res, err := c.RunFunc(ctx, "main", func(n sdkproto.Notification) error {
			if d, ok := n.TextDelta(); ok {
				deltas = append(deltas, d)
			}
			return nil
		}, sdkproto.TextBlock(prompt))
		fmt.Printf("%-17q %-9s %-15q deltas %q, %d events, %v\n", prompt, res.FinishReason, res.FinalResponse, deltas, len(res.Events), err)
	}
	fmt.Println(stop())
	// Output:
	// "hi"              completed "Hello!"        deltas ["Hel" "lo!"], 22 events, <nil>
	// "what day is it?" completed "It is Monday." deltas ["It is " "Monday."], 24 events, <nil>
	// "and tomorrow?"   error     ""              deltas [], 8 events, <nil>
	// <nil> <nil>
}

// A client that answers its runtime: the turn asks for an approval
// before it answers, and the Client's responder decides. A request the
// Client has no responder for gets -32601, as the TypeScript client
// answers every request.
func ExampleTurn_Ask() {
	type ask struct {
		Tool    string `json:"tool"`
		Command string `json:"command"`
	}
	type decision struct {
		Approved bool `json:"approved"`
	}
	approval := rpc.NewMethod[ask, decision]("approval/request")

	c, stop := serve(scripted.Script{Turns: []*scripted.Turn{
		scripted.NewTurn().
			Ask("approval/request", ask{Tool: "bash", Command: "rm -rf build"}).
			Ask("elicitation/create", map[string]string{"message": "your name?"}).
			Text("Asked."),
	}}, &sdkproto.ClientOptions{Responders: []sdkproto.Responder{
		sdkproto.Respond(approval, func(ctx context.Context, p ask) (decision, error) {
			fmt.Printf("asked to run %s: %s\n", p.Tool, p.Command)
			return decision{Approved: !strings.Contains(p.Command, "rm ")}, nil
		}),
	}})
	ctx := context.Background()
	if _, err := c.Initialize(ctx, params); err != nil {
		fmt.Println(err)
		return
	}
	res, err := c.Run(ctx, "main", sdkproto.TextBlock("clean up"))
	fmt.Println(res.FinalResponse, err)
	fmt.Println(stop())
	// Output:
	// asked to run bash: rm -rf build
	// Asked. <nil>
	// <nil> <nil>
}
