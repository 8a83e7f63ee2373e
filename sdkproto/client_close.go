package sdkproto

import (
	"context"
	"fmt"

	"github.com/linerpc/linerpc/internal/bounded"
	"github.com/linerpc/linerpc/rpc"
)

// Close shuts the runtime down and releases everything the Client holds;
// it is idempotent and returns the same result every time. The steps, each
// bounded by its own timer whatever the runtime does (docs/wire.md §6.4):
//
//  1. new requests are refused with ErrClientClosed;
//  2. if the runtime is still reachable, shutdown is sent and awaited for
//     at most ShutdownTimeout, also when the request cannot even be
//     written because the runtime stopped reading (a failure is not an
//     error of Close: it is added to the stderr tail, as its last line,
//     "shutdown request failed: <msg>");
//  3. the runtime's stdin is closed, which also ends a Write stuck on it;
//     for a launched child: wait EOFGrace, SIGTERM, wait KillGrace,
//     SIGKILL, wait KillGrace, stopping as soon as the child is reaped (the
//     error says when even SIGKILL did not help). On unix the signals go
//     to the child's whole process group, and once the child is reaped,
//     whatever is left of its group (grandchildren) gets SIGTERM and, after
//     KillGrace, SIGKILL; elsewhere only the child is signalled;
//  4. the connection is closed (pending calls fail with a
//     *TransportClosedError caused by ErrClientClosed, subscriptions fail
//     the same way once drained) and its streams are closed;
//  5. Close waits, for at most KillGrace each, for the goroutines of calls
//     still in flight and for those of the connection, then, for a
//     launched child, for at most 500ms for its stderr reader.
//
// Close therefore returns within ShutdownTimeout + EOFGrace + 5×KillGrace
// + 500ms. When it gives up a wait of step 5 it says so in its error: that
// happens only when the writer given to NewClient is not an io.Closer
// whose Close ends a Write in progress, or the reader's Close does not end
// a Read (io.Pipe, os.Pipe and net.Conn do both); the goroutine concerned
// then ends when that Write or Read returns.
func (c *Client) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.close() })
	return c.closeErr
}

func (c *Client) close() error {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()

	if c.conn.Err() == nil && (c.child == nil || !waitExit(c.child, 0)) {
		// callWithin returns when its timer fires even if the request is
		// stuck in Write.
		_, err := callWithin(context.Background(), c, shutdownRaw, rpc.NoParams{}, c.opts.ShutdownTimeout, true)
		if err != nil && c.child != nil {
			c.mu.Lock()
			c.shutdownFailed = "shutdown request failed: " + err.Error()
			c.mu.Unlock()
		}
	}
	if c.child != nil {
		// Steps 3 to 5 for a launched child: transport.Child.Close, whose bounds
		// are those of ClientOptions, set by Launch.
		return runtimeCloseErr(c.child.Close())
	}
	if c.stdin != nil {
		c.stdin.Close()
	}
	c.conn.Close()
	for _, s := range c.streams {
		s.Close()
	}
	var err error
	if !bounded.Wait(func() { c.conn.Wait() }, c.opts.KillGrace) {
		err = fmt.Errorf("sdkproto: the connection's goroutines had not stopped after %v (a read or a write of its streams cannot be interrupted)", c.opts.KillGrace)
	}
	return err
}
