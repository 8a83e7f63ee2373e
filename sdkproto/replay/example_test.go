package replay_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/replay"
)

// A turn recorded from the real runtime, served to a Go client: the
// client picks its own session id and cwd, and gets the recorded turn.
func Example() {
	ctx := context.Background()
	f, err := os.Open("../../testdata/transcripts/text-turn.ndjson")
	if err != nil {
		log.Fatal(err)
	}
	rec, err := replay.Load(f)
	f.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rec.Format(), len(rec.Frames()), "frames,", len(rec.ClientFrames()), "from the client")

	// The replay is the runtime, here over two pipes; a runtime process
	// would serve os.Stdin and os.Stdout (dshrpc serve-replay FILE).
	toRuntime, clientOut := io.Pipe()
	clientIn, fromRuntime := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- rec.Serve(ctx, toRuntime, fromRuntime)
		fromRuntime.Close()
	}()
	client := sdkproto.NewClient(clientIn, clientOut, nil)

	params, _ := rec.InitializeParams() // the recorded route
	params.Cwd = "/srv/project"         // the cwd is the client's to choose
	if _, err := client.Initialize(ctx, params); err != nil {
		log.Fatal(err)
	}
	res, err := client.Run(ctx, "session-1", sdkproto.TextBlock("say hi"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %q (%s)\n", res.SessionID, res.FinalResponse, res.FinishReason)
	client.Close() // shutdown: the recording's last client frame
	fmt.Println("serve:", <-served)
	// Output:
	// transcript 30 frames, 3 from the client
	// session-1: "hello from the fake model" (completed)
	// serve: <nil>
}

// A client that departs from the recording gets an error naming the line
// of the recording and what differed, and so does the replay.
func Example_departure() {
	ctx := context.Background()
	f, err := os.Open("../../testdata/transcripts/text-turn.ndjson")
	if err != nil {
		log.Fatal(err)
	}
	rec, err := replay.Load(f)
	f.Close()
	if err != nil {
		log.Fatal(err)
	}
	toRuntime, clientOut := io.Pipe()
	clientIn, fromRuntime := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- rec.Serve(ctx, toRuntime, fromRuntime)
		fromRuntime.Close()
	}()
	client := sdkproto.NewClient(clientIn, clientOut, nil)
	defer client.Close()

	params, _ := rec.InitializeParams()
	if _, err := client.Initialize(ctx, params); err != nil {
		log.Fatal(err)
	}
	_, err = client.Run(ctx, "main", sdkproto.TextBlock("say bye"))
	var refused *sdkproto.ResponseError
	if errors.As(err, &refused) {
		fmt.Println(refused.Code, refused.Message)
	}
	var d *replay.Departure
	if errors.As(<-served, &d) {
		fmt.Printf("line %d, %s: %s\n", d.Line, d.Expected, d.Reason)
	}
	// Output:
	// -32603 replay: the client departed from the recording at line 3 (a c2s session/prompt request): params.contentBlocks[0].text: recorded "say hi", got "say bye"
	// line 3, c2s session/prompt request: params.contentBlocks[0].text: recorded "say hi", got "say bye"
}
