package rpc_test

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// peer is the far end of a Conn under test (see rpctest.Peer), with the
// Conn.
type peer struct {
	*rpctest.Peer
	conn *rpc.Conn
}

// newPeer starts a Conn with opts and returns its peer (rpctest.Start).
func newPeer(t *testing.T, opts *rpc.Options) *peer {
	t.Helper()
	c, p := rpctest.Start(t, opts)
	return &peer{Peer: p, conn: c}
}

// The echo fixtures these tests use throughout, shared with the other
// packages' tests in linetest, under short names.
type (
	echoParams = linetest.EchoParams
	echoResult = linetest.EchoResult
)

var (
	echo         = linetest.Echo
	echoRegistry = linetest.EchoRegistry
	call         = linetest.Call
)

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
