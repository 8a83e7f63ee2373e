package sdkproto_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/linerpc/linerpc/sdkproto"
)

// exampleRuntime is a tiny scripted runtime over pipes: it answers
// initialize, answers each prompt with one streamed text turn (writing the
// receipt before the result, as the real runtime does), and shutdown.
func exampleRuntime(in io.ReadCloser, out io.WriteCloser) {
	defer out.Close()
	defer in.Close()
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(sc.Bytes(), &req)
		switch req.Method {
		case "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}}`+"\n", req.ID)
		case "session/prompt":
			fmt.Fprintln(out, clReceipt("main", "m-1", 0))
			fmt.Fprintln(out, clStatus("main", "running"))
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"messageId":"m-1"}}`+"\n", req.ID)
			fmt.Fprintln(out, clDelta("main", "Hello, ", 1))
			fmt.Fprintln(out, clDelta("main", "world.", 2))
			fmt.Fprintln(out, clAssistant("main", "Hello, world.", 3))
			fmt.Fprintln(out, clTurnEnd("main", "completed", 4))
			fmt.Fprintln(out, clStatus("main", "idle"))
		case "shutdown":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", req.ID)
			return
		}
	}
}

// exampleClient connects a Client to exampleRuntime. A real program would
// use Launch(exec.Command(...), nil) instead.
func exampleClient() *sdkproto.Client {
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	go exampleRuntime(c2sR, s2cW)
	return sdkproto.NewClient(s2cR, c2sW, nil)
}

func ExampleClient_Run() {
	ctx := context.Background()
	c := exampleClient()
	defer c.Close()
	if _, err := c.Initialize(ctx, sdkproto.InitializeParams{Cwd: "/srv/project", Provider: "deepseek-official", Model: "deepseek-v4-flash"}); err != nil {
		fmt.Println(err)
		return
	}
	res, err := c.Run(ctx, "main", sdkproto.TextBlock("say hello"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.FinalResponse)
	fmt.Println(res.FinishReason, len(res.Events), "events")
	// Output:
	// Hello, world.
	// completed 5 events
}

func ExampleClient_Stream() {
	ctx := context.Background()
	c := exampleClient()
	defer c.Close()
	if _, err := c.Initialize(ctx, sdkproto.InitializeParams{Cwd: "/srv/project", Provider: "deepseek-official", Model: "deepseek-v4-flash"}); err != nil {
		fmt.Println(err)
		return
	}
	for n, err := range c.Stream(ctx, "main", sdkproto.TextBlock("say hello")) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if delta, ok := n.TextDelta(); ok {
			fmt.Printf("%q\n", delta) // render as it arrives
		}
	}
	// Output:
	// "Hello, "
	// "world."
}

func ExampleClient_SubscribeSessionTree() {
	ctx := context.Background()
	c := exampleClient()
	defer c.Close()
	tree := c.SubscribeSessionTree("main") // before prompting: nothing is lost
	defer tree.Close()
	if _, err := c.Prompt(ctx, "main", sdkproto.TextBlock("say hello")); err != nil {
		fmt.Println(err)
		return
	}
	for n, err := range tree.All(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(n.Method)
		if st, err := n.SessionStatus(); err == nil && st.Status == sdkproto.StatusIdle {
			break
		}
	}
	// Output:
	// session.event
	// session.status
	// session.event
	// session.event
	// session.event
	// session.event
	// session.status
}
