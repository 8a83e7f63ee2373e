package sdkproto_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/demo"
)

// A runtime's main serves a Runtime on stdin and stdout and exits when
// Serve returns; here the demo runtime is served over pipes and driven by
// a bare rpc client that prints each event of one turn.
func ExampleServer() {
	toServer, clientOut := io.Pipe()
	clientIn, fromServer := io.Pipe()
	srv := sdkproto.NewServer(demo.NewRuntime(nil), nil)
	served := make(chan error, 1)
	go func() {
		served <- srv.Serve(context.Background(), toServer, fromServer)
		fromServer.Close()
	}()

	idle := make(chan struct{})
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, sdkproto.SessionEvent, func(ctx context.Context, p sdkproto.SessionEventParams) {
		fmt.Println(p.Event.Seq, p.Event.Type)
	})
	rpc.HandleNotification(reg, sdkproto.SessionStatus, func(ctx context.Context, p sdkproto.SessionStatusParams) {
		fmt.Println(p.Status)
		if p.Status == sdkproto.StatusIdle {
			close(idle)
		}
	})
	client := rpc.NewConn(clientIn, clientOut, &rpc.Options{Handler: reg})
	client.Start()
	defer client.Close()

	ctx := context.Background()
	info, _ := sdkproto.Initialize.Call(ctx, client, sdkproto.InitializeParams{
		Cwd: "/srv/project", Provider: "deepseek-official", Model: "deepseek-v4-flash"})
	fmt.Println(info.ServerInfo.Name)
	sdkproto.SessionPrompt.Call(ctx, client, sdkproto.SessionPromptParams{
		SessionID: "main", ContentBlocks: []sdkproto.ContentBlock{sdkproto.TextBlock("hi")}})
	<-idle
	res, err := sdkproto.Shutdown.Call(ctx, client, rpc.NoParams{})
	out, _ := json.Marshal(res)
	fmt.Println("shutdown", string(out), err, <-served)
	clientOut.Close()
	// Output:
	// deepseek-harness-sdk-runtime
	// 0 agent/inbox/spliced
	// running
	// 1 turn/start
	// 2 agent/inbox/spliced
	// 3 step/start
	// 4 user/message
	// 5 request/header
	// 6 assistant/chunk
	// 7 assistant/chunk
	// 8 assistant/chunk
	// 9 assistant/chunk
	// 10 assistant/chunk
	// 11 assistant/message
	// 12 step/end
	// 13 turn/end
	// idle
	// shutdown {} <nil> <nil>
}
