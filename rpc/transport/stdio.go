package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/linerpc/linerpc/rpc"
)

// StdioShutdownGrace is how long ServeStdio lets the connection answer
// what it has read once its context has ended, before it closes it.
const StdioShutdownGrace = 5 * time.Second

// ServeStdio serves the process's standard input and output with a Conn
// made with opts: it is a program that is the child of its peer (an
// editor's language server, an MCP server, a DeepSeek Harness runtime in
// Go) in one line:
//
//	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//	defer stop()
//	if err := transport.ServeStdio(ctx, &rpc.Options{Handler: reg}); err != nil {
//		log.Fatal(err)
//	}
//
// It returns once the connection is over:
//   - when the input ends, once the handlers running have answered (as a
//     shell pipe's peer expects): nil;
//   - when ctx ends, ServeStdio shuts the connection down (rpc.Conn.Shutdown:
//     what was read is answered, what is queued written) and returns nil;
//     if that takes longer than StdioShutdownGrace, it closes the
//     connection and says so in its error;
//   - when reading or writing fails, or a handler closes the Conn: the
//     Conn's error (nil for a handler's Shutdown or Close, a clean end).
//
// os.Stdin is usually a blocking file, whose Read cannot be interrupted:
// when ServeStdio returns for another reason than the end of the input,
// the Conn's read loop may stay blocked in its Read until the input ends
// or the process exits, which is what a program does next.
func ServeStdio(ctx context.Context, opts *rpc.Options) error {
	return serveStream(ctx, os.Stdin, os.Stdout, opts, StdioShutdownGrace)
}

// serveStream is ServeStdio over r and w, with the grace given.
func serveStream(ctx context.Context, r io.Reader, w io.Writer, opts *rpc.Options, grace time.Duration) error {
	c := rpc.NewConn(r, w, opts)
	c.Start()

	// shutdownCtx ends grace after ctx does: timers only, so that no
	// goroutine of ours outlives the return.
	shutdownCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	stopAfter := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(grace, func() { cancel(context.DeadlineExceeded) })
		context.AfterFunc(shutdownCtx, func() { t.Stop() })
	})
	defer stopAfter()

	select {
	case <-c.Done(): // the input ended (the handlers still answer), or the Conn failed
	case <-ctx.Done():
	}
	// Shutdown waits for the work in hand; after the end of the input it
	// only waits (the input ended is as far as a Conn goes before closed).
	if err := c.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("transport: ServeStdio: the connection had not finished its work %v after its context ended, and was closed: %w", grace, context.DeadlineExceeded)
	}
	switch err := c.Err(); {
	case errors.Is(err, rpc.ErrInputEnded):
		// The read loop has ended: waiting is safe, and leaves nothing.
		c.Wait()
		return nil
	case errors.Is(err, rpc.ErrClosed):
		return nil // by ctx's end, or by a handler
	default:
		return err
	}
}
