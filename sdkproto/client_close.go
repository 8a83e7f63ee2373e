package sdkproto

import (
	"context"
	"errors"
	"time"
)

// Close shuts the runtime down and releases everything the Client holds;
// it is idempotent and returns the same result every time. The steps, each
// bounded (WIRE.md §6.4):
//
//  1. new requests are refused with ErrClientClosed;
//  2. if the runtime is still reachable, shutdown is sent and awaited for
//     at most ShutdownTimeout (a failure is not an error of Close: it is
//     added to the stderr tail as "shutdown request failed: <msg>");
//  3. the runtime's stdin is closed; for a launched child: wait EOFGrace,
//     SIGTERM, wait KillGrace, SIGKILL, wait KillGrace, stopping as soon as
//     the child is reaped (the error says when even SIGKILL did not help);
//  4. the connection is closed (pending calls fail with a
//     *TransportClosedError caused by ErrClientClosed, subscriptions fail
//     the same way once drained) and its streams are closed;
//  5. Close waits for every goroutine of the Client and its connection.
func (c *Client) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.close() })
	return c.closeErr
}

func (c *Client) close() error {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()

	if c.conn.Err() == nil && (c.proc == nil || !c.proc.waitExit(0)) {
		err := c.callTimeout(context.Background(), Shutdown.Name(), nil, nil, c.opts.ShutdownTimeout, true)
		if err != nil && c.proc != nil {
			c.proc.tail.add("shutdown request failed: " + err.Error())
		}
	}
	var err error
	switch {
	case c.proc != nil:
		err = c.proc.stop(c.stdin, c.opts.EOFGrace, c.opts.KillGrace)
	case c.stdin != nil:
		c.stdin.Close()
	}
	c.conn.Close()
	for _, s := range c.streams {
		s.Close()
	}
	if !c.waitConn(c.opts.KillGrace) {
		err = errors.Join(err, errors.New("sdkproto: the connection's read loop did not stop (its reader cannot be interrupted)"))
	}
	if c.proc != nil {
		if c.proc.waitExit(0) {
			c.proc.release()
		} else {
			c.proc.stderr.Close() // the child is unreapable; at least stop reading
		}
	}
	return err
}

// waitConn waits up to d for the connection's goroutines to return.
func (c *Client) waitConn(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		c.conn.Wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
