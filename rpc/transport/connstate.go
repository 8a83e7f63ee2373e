package transport

import (
	"fmt"
	"net"

	"github.com/linerpc/linerpc/rpc"
)

// ConnState is a step in the life of a connection of a Server, at which
// Server.ConnState is called.
type ConnState int

const (
	// StateNew is a connection just accepted, whose Conn is not made
	// yet: its ServerConn's Options may still be changed.
	StateNew ConnState = iota
	// StateActive is a connection whose Conn has started and serves it.
	StateActive
	// StateClosed is a connection that has ended: its Conn has ended and
	// its goroutines have exited, its net.Conn is closed, and its
	// ServerConn's Err says why. It is the last state.
	StateClosed
)

var stateNames = [...]string{StateNew: "new", StateActive: "active", StateClosed: "closed"}

// String returns the state's name in lower case ("new", "active",
// "closed"), as logs and test failures show it.
func (s ConnState) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("ConnState(%d)", int(s))
}

// ServerConn is one connection of a Server, as Server.ConnState sees it:
// the same *ServerConn at each of its states. The Server sets its fields;
// ConnState may change Options at StateNew, and nothing else.
type ServerConn struct {
	// NetConn is the connection accepted. The Server closes it once Conn
	// has ended; until then it belongs to Conn, which reads and writes
	// it.
	NetConn net.Conn

	// Options are those the connection's Conn is made with. At StateNew
	// they are the connection's own copy of Server.Options, whose
	// BaseContext is never nil: Server.BaseContext's context, else
	// Server.Options' own, else context.Background(). ConnState may change
	// them there, or set others (nil means all defaults): the Server
	// makes the Conn with what Options holds once ConnState has returned
	// from StateNew.
	Options *rpc.Options

	// Conn serves the connection over NetConn: nil at StateNew, set at
	// StateActive and StateClosed.
	Conn *rpc.Conn

	// Err is why Conn ended, set at StateClosed: rpc.ErrInputEnded when
	// the peer hung up, rpc.ErrClosed after Shutdown or Close (or a
	// handler's Close), a read or write error otherwise (see
	// rpc.Conn.Err).
	Err error

	ended chan struct{} // closed by the watcher once it is done with the connection
}
