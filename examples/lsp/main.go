// Command lsp is a small language server written on packages rpc and
// rpc/transport alone. It shows what a Language Server Protocol peer
// needs from a JSON-RPC library, and how each need reads with rpc:
//
//   - Content-Length framing, as LSP clients speak it, detected from the
//     client's first bytes (Options.Framing = rpc.DetectFraming), so that a
//     client writing one JSON message per line is served too;
//   - typed requests and notifications both ways: the client's requests
//     (initialize, textDocument/hover, workspace/executeCommand, shutdown),
//     its notifications (initialized, textDocument/didOpen, didChange,
//     didClose, exit), the server's notifications
//     (textDocument/publishDiagnostics, window/logMessage) and a request
//     of the server's to the client (workspace/configuration), made from
//     a notification handler;
//   - LSP's cancellation ($/cancelRequest answered with RequestCancelled,
//     -32800) with Options.Cancellation = rpc.LSPCancellation();
//   - LSP's life cycle (initialize first, nothing but exit after
//     shutdown) as a serving interceptor (Options.Intercept);
//   - state per connection (the open documents) carried by the Conn's
//     context (Options.BaseContext, set per connection by
//     transport.Server.ConnState);
//   - one process per client on stdio, or many clients of one listener
//     with transport.Server.
//
// Hover shows the word under the cursor (positions count UTF-16 code
// units, as LSP's do); every TODO in a document is reported as a warning;
// the command toy.wait [ms] waits that long, unless cancelled. Two methods
// of its own, toy/add (params by position) and toy/fail (an error with
// data), show the rest of JSON-RPC.
//
//	go run ./examples/lsp                      # one client on stdin/stdout
//	go run ./examples/lsp -listen tcp:127.0.0.1:7000
//	go run ./examples/lsp -listen unix:/tmp/toy-lsp.sock
//
// On stdio, the exit notification ends the process, with status 0 after a
// shutdown request and 1 without one; so does the end of the input. With
// -listen, exit ends that client's connection only, and SIGINT or SIGTERM
// ends the server once the connections have answered what they read.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

// grace bounds how long a connection that has ended (its input closed,
// or the server stopping) still answers what it has read.
const grace = 2 * time.Second

func main() {
	listen := flag.String("listen", "", "serve every client of a listener, `tcp:HOST:PORT or unix:PATH`, instead of stdin/stdout")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("lsp: ")
	if flag.NArg() > 0 {
		log.Fatalf("unexpected arguments %q", flag.Args())
	}
	if *listen == "" {
		os.Exit(serveStdio(os.Stdin, os.Stdout))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serveListener(ctx, *listen, os.Stderr); err != nil {
		log.Fatal(err)
	}
}

// serveStdio serves one client on r and w until exit or the end of the
// input, and returns the status to exit with.
//
// transport.ServeStdio does this for a server without a life cycle of its own;
// an LSP server differs in two ways: its client's leaving (the end of the
// input) cancels the requests still running after a short grace, rather
// than waiting for them, and exit ends the process although the client
// keeps its end of stdin open.
func serveStdio(r io.Reader, w io.Writer) int {
	s := newSession()
	conn := rpc.NewConn(r, w, options(newRegistry(), s))
	conn.Start()
	<-conn.Done() // exit, or the input ended: the client is gone
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	conn.Shutdown(ctx) // answer what was read, briefly; then close
	if errors.Is(conn.Err(), rpc.ErrInputEnded) {
		// The reading has ended: Wait returns once the handlers have.
		// After exit, the input is still open and os.Stdin's Read cannot
		// be interrupted: the process exits with the read in progress.
		conn.Wait()
	}
	return s.ExitCode()
}

// serveListener serves every client that connects to addr, each with a
// session of its own, until ctx ends. It says on logTo where it listens
// (the port chosen, for tcp:HOST:0).
func serveListener(ctx context.Context, addr string, logTo io.Writer) error {
	network, address, _ := strings.Cut(addr, ":")
	if (network != "tcp" && network != "unix") || address == "" {
		return fmt.Errorf("-listen %q: want tcp:HOST:PORT or unix:PATH", addr)
	}
	l, err := net.Listen(network, address)
	if err != nil {
		return err
	}
	srv := &transport.Server{
		Options: sharedOptions(newRegistry()),
		ConnState: func(c *transport.ServerConn, state transport.ConnState) {
			if state == transport.StateNew { // c.Options is this connection's own copy
				c.Options.BaseContext = withSession(c.Options.BaseContext, newSession())
			}
		},
	}
	fmt.Fprintf(logTo, "lsp: listening on %s:%s\n", network, l.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		srv.Close()
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
	}
	if err := <-served; !errors.Is(err, transport.ErrServerClosed) {
		return err
	}
	return nil
}
