package rpc_test

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// peer is the far end of a Conn under test (see rpctest.Peer), with the
// Conn.
type peer struct {
	*rpctest.Peer
	conn *rpc.Conn
}

// newPeer starts a Conn with opts and returns its peer (rpctest.NewConn).
func newPeer(t *testing.T, opts *rpc.Options) *peer {
	t.Helper()
	c, p := rpctest.NewConn(t, opts)
	return &peer{Peer: p, conn: c}
}

// waitBound bounds every wait of these tests for an event: a failure
// report after a generous time, never a pace.
const waitBound = time.Minute

// within returns what ch yields, or fails the test, saying what it
// waited for, when nothing comes within waitBound.
func within[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(waitBound)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("waited %v for %s", waitBound, what)
		panic("unreachable")
	}
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
