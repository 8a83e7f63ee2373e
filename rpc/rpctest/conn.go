package rpctest

import (
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
)

// Start starts a Conn made with opts, for a test of a server or a
// client written with package rpc, and returns it with its Peer: the far
// end of its streams, scripted from the test's goroutine (send a frame,
// expect one, answer a request). The Conn speaks newline framing to its
// peer, whatever opts.Framing says.
//
// When the test ends, the Conn is closed, the streams too, every
// goroutine of the Conn has exited, and none outlived the test (see
// CheckNoLeak).
func Start(t testing.TB, opts *rpc.Options) (*rpc.Conn, *Peer) {
	t.Helper()
	CheckNoLeak(t)
	p := NewPeer(t)
	if opts != nil && opts.Framing != rpc.NewlineFraming {
		o := *opts
		o.Framing = rpc.NewlineFraming
		opts = &o
	}
	c := rpc.NewConn(interruptible{p.ConnIn}, p.ConnOut, opts)
	t.Cleanup(func() {
		c.Close()
		p.Close() // a Write blocked on the pipe ends only so
		c.Wait()
	})
	c.Start()
	return c, p
}

// Pair starts two Conns connected to each other over an in-memory
// connection (net.Pipe), made with the options given (nil for defaults),
// for a test that runs both ends in process: a client and the server it
// calls. When the test ends, both are closed, every goroutine of theirs
// has exited, and none outlived the test (see CheckNoLeak).
func Pair(t testing.TB, a, b *rpc.Options) (*rpc.Conn, *rpc.Conn) {
	t.Helper()
	CheckNoLeak(t)
	x, y := net.Pipe()
	ca, cb := rpc.NewConn(x, x, a), rpc.NewConn(y, y, b)
	t.Cleanup(func() {
		ca.Close()
		cb.Close()
		x.Close()
		y.Close()
		ca.Wait()
		cb.Wait()
	})
	ca.Start()
	cb.Start()
	return ca, cb
}

// interruptible gives the Conn's input the SetReadDeadline of the streams
// whose blocked reads Close can interrupt (net.Conn, os.Pipe), as far as
// a Conn uses it: a deadline that has passed ends the pipe.
type interruptible struct{ *io.PipeReader }

func (p interruptible) SetReadDeadline(t time.Time) error {
	if !t.IsZero() && !t.After(time.Now()) {
		p.CloseWithError(os.ErrDeadlineExceeded)
	}
	return nil
}
