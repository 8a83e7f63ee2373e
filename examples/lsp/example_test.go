package main

import (
	"context"
	"fmt"
	"os"

	"github.com/linerpc/linerpc/rpc"
)

// A client of the server, written with rpc too, over a pair of pipes in
// place of the server's stdin and stdout: Content-Length framing, as
// editors speak it (the server detects it), a document, its diagnostics,
// and a hover.
func Example() {
	toServer, clientOut, _ := os.Pipe()
	clientIn, fromServer, _ := os.Pipe()
	status := make(chan int)
	go func() {
		status <- serveStdio(toServer, fromServer)
		fromServer.Close()
	}()

	diagnostics := make(chan PublishDiagnosticsParams, 1)
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, PublishDiagnostics, func(_ context.Context, p PublishDiagnosticsParams) {
		diagnostics <- p
	})
	conn := rpc.NewConn(clientIn, clientOut, &rpc.Options{Handler: reg, Framing: rpc.ContentLengthFraming})
	conn.Start()
	ctx := context.Background()

	init, _ := Initialize.Call(ctx, conn, InitializeParams{})
	fmt.Println("server:", init.ServerInfo.Name, init.ServerInfo.Version)
	Initialized.Notify(ctx, conn, rpc.NoParams{})

	DidOpen.Notify(ctx, conn, DidOpenParams{TextDocument: TextDocumentItem{
		URI: "file:///notes.txt", LanguageID: "plaintext", Version: 1,
		Text: "🚀 launch_day: TODO",
	}})
	for _, d := range (<-diagnostics).Diagnostics { // published once the document is open
		fmt.Printf("warning at %d:%d-%d: %s\n", d.Range.Start.Line, d.Range.Start.Character, d.Range.End.Character, d.Message)
	}
	// 🚀 is two UTF-16 code units: character 5 is inside launch_day.
	h, _ := HoverMethod.Call(ctx, conn, HoverParams{
		TextDocument: TextDocumentIdentifier{URI: "file:///notes.txt"},
		Position:     Position{Line: 0, Character: 5},
	})
	fmt.Printf("hover: %s at %d:%d-%d\n", h.Contents.Value, h.Range.Start.Line, h.Range.Start.Character, h.Range.End.Character)

	Shutdown.Call(ctx, conn, rpc.NoParams{})
	Exit.Notify(ctx, conn, rpc.NoParams{})
	fmt.Println("exit status:", <-status)
	conn.Close()
	clientOut.Close()
	conn.Wait()
	toServer.Close()
	clientIn.Close()
	// Output:
	// server: toy-lsp 0.1.0
	// warning at 0:15-19: TODO: something is left to do
	// hover: **launch_day** at 0:3-13
	// exit status: 0
}
