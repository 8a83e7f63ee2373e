package transport

import (
	"context"
	"net"

	"github.com/linerpc/linerpc/rpc"
)

// Dial connects to address on the named network (as net.Dialer does:
// "tcp", "unix", …) and returns a started Conn over the connection, as
// StartConn does: the net.Conn is closed once the Conn has ended. ctx
// bounds the dialing only; once Dial has returned, the Conn lives until
// it is closed or the peer hangs up. opts may be nil for defaults.
func Dial(ctx context.Context, network, address string, opts *rpc.Options) (*rpc.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return StartConn(nc, opts), nil
}

// StartConn returns a Conn over nc, started, that owns nc: nc is closed
// once the Conn has ended and every goroutine of the Conn has exited (see
// rpc.Conn.Wait), whatever ended it — Close, Shutdown, the peer hanging
// up, a failed write. Dial uses it, and a Server keeps the same rule for
// each connection it accepts. A Conn's Close interrupts a read or a write of nc in progress (through
// its deadlines), so nc is closed soon after Close.
//
// Besides the Conn's own goroutines, one goroutine waits for the Conn to
// end; it exits once it has closed nc. opts may be nil for defaults.
//
// Unlike net/rpc.ServeConn, StartConn does not block: wait for the
// connection with the Conn's Done or Wait.
func StartConn(nc net.Conn, opts *rpc.Options) *rpc.Conn {
	c := rpc.NewConn(nc, nc, opts)
	c.Start()
	go closeWhenEnded(c, nc)
	return c
}

// closeWhenEnded is the one rule of the Conns this package makes over a
// net.Conn: it waits until c has ended and its goroutines have exited,
// then closes nc, and returns c's error. It waits for Wait rather than
// Done because Done is closed when the input ends while the running
// handlers still answer through nc; they must be let finish.
func closeWhenEnded(c *rpc.Conn, nc net.Conn) error {
	err := c.Wait()
	nc.Close()
	return err
}
