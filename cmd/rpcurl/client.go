package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/linerpc/linerpc/rpc"
)

// errDeadline is the error of a read or write interrupted by a deadline.
var errDeadline = os.ErrDeadlineExceeded

// shutdownGrace bounds the writing of what is queued (a notification) at
// the end.
const shutdownGrace = 3 * time.Second

// client is the connection of one command to the server.
type client struct {
	e *env
	o *options

	conn *rpc.Conn // nil for a failed start

	child *childTarget // a '-- CMD' target
	nc    net.Conn     // a tcp or unix target
	http  *httpTarget  // an http target's

	// answered is set once the server answered a request of ours.
	answered bool
	// probing is set while the answer to the framing probe, sent by
	// connect, is to be the next request's.
	probing     bool
	probeMethod string
	replies     chan probeReply // the answer to the probe (onDrop)
	echoed      chan struct{}   // closed when the server sent our probe back
	echoOnce    sync.Once
}

// connect reaches the server: starts the child, dials, or prepares the
// HTTP exchange, and makes the Conn. On a stream with --framing auto it
// sends the first request of the exchange (firstRequest) as the framing
// probe, and reads the server's first bytes to make the Conn with its
// framing; request then waits for the answer. With an error, the client
// returned, if any, is to be closed, and tells how a child ended.
func connect(ctx context.Context, e *env, o *options) (*client, error) {
	c := &client{e: e, o: o, replies: make(chan probeReply, 1), echoed: make(chan struct{})}
	switch o.target.kind {
	case "exec":
		return c, c.startChild(ctx)
	case "tcp", "unix":
		var d net.Dialer
		nc, err := d.DialContext(ctx, o.target.kind, o.target.address)
		if err != nil {
			if ctx.Err() != nil {
				return nil, &waitError{awaited: "the connection to " + o.target.String(), err: ctx.Err()}
			}
			return nil, &startError{fmt.Errorf("cannot connect to %s: %w", o.target, unwrapOp(err))}
		}
		c.nc = nc
		c.verbosef("connected to %s", o.target)
		conn, err := c.open(ctx, nc, nc)
		if err != nil {
			return c, err
		}
		c.conn = conn
		conn.Start()
	case "http":
		conn, t, err := dialHTTP(o.target.address, o.target.header, c.connOptions(rpc.NewlineFraming))
		if err != nil {
			return nil, &startError{err}
		}
		c.conn, c.http = conn, t
		c.verbosef("one HTTP POST per message to %s", o.target)
	}
	return c, nil
}

// open returns the Conn, not started, over a stream to the server (r its
// output, w its input) with the framing of --framing; with auto, once
// the framing probe has told it (see probe.go). Its error is a
// *waitError for the probe's answer.
func (c *client) open(ctx context.Context, r io.Reader, w io.Writer) (*rpc.Conn, error) {
	switch c.o.framing {
	case framingNewline:
		c.verbosef("framing: newline (--framing)")
		return rpc.NewConn(r, w, c.connOptions(rpc.NewlineFraming)), nil
	case framingContentLength:
		c.verbosef("framing: Content-Length (--framing)")
		return rpc.NewConn(r, w, c.connOptions(rpc.ContentLengthFraming)), nil
	}
	method, params := c.o.firstRequest()
	c.probing, c.probeMethod = true, method
	c.verbosef("framing: auto: %s sent as a Content-Length frame whose body ends with a newline", method)
	failed := func(err error) error {
		if errors.Is(err, io.EOF) {
			err = errHungUp
		}
		return &waitError{awaited: "the answer to " + method, err: err}
	}
	if err := writeAll(ctx, w, probeFrame(method, params)); err != nil {
		return nil, failed(err)
	}
	f, peeked, err := readFraming(ctx, r)
	if err != nil {
		return nil, failed(err)
	}
	how := "not a header"
	if f == rpc.ContentLengthFraming {
		how = "a header"
	}
	c.verbosef("framing: %s (the server's first bytes are %s)", f, how)
	return rpc.NewConn(&prefixReader{rest: peeked, r: r}, w, c.connOptions(f)), nil
}

// unwrapOp drops the *net.OpError's repetition of the address.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		var sys *os.SyscallError
		if errors.As(op.Err, &sys) {
			return sys.Err
		}
		return op.Err
	}
	return err
}

// connOptions are the Options of the Conn: no methods served (the
// server's requests are answered -32601, its notifications shown with
// -v), and every frame not served reported to onDrop.
func (c *client) connOptions(f rpc.Framing) *rpc.Options {
	reg := rpc.NewRegistry()
	reg.HandleUnknown(c.serverRequest)
	reg.HandleUnknownNotification(c.serverNotification)
	return &rpc.Options{Handler: reg, Framing: f, OnDrop: c.onDrop}
}

// prefixReader reads rest, then r; its deadline is r's, so that Close
// can interrupt the Conn's reading.
type prefixReader struct {
	rest []byte
	r    io.Reader
}

func (p *prefixReader) Read(b []byte) (int, error) {
	if len(p.rest) > 0 {
		n := copy(b, p.rest)
		p.rest = p.rest[n:]
		return n, nil
	}
	return p.r.Read(b)
}

// SetReadDeadline sets r's; a stream without one has none (rpc.NewConn
// then sees none).
func (p *prefixReader) SetReadDeadline(t time.Time) error {
	if d, ok := p.r.(readDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return os.ErrNoDeadline
}

// request sends a request for method with params (nil: none) and returns
// its result: the first of the exchange on a stream with --framing auto
// was sent by connect, as the framing probe, and only its answer is
// awaited; the others are calls of the Conn's. A JSON-RPC error answer is
// an *rpc.Error; any other error a *waitError.
func (c *client) request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var res json.RawMessage
	var err error
	if c.probing {
		c.probing = false
		if method != c.probeMethod { // firstRequest does not say what exchange does
			return nil, fmt.Errorf("rpcurl: internal error: %s requested first, but the probe sent was %s", method, c.probeMethod)
		}
		res, err = c.probeAnswer(ctx)
	} else {
		var p any
		if params != nil {
			p = params
		}
		err = c.conn.Call(ctx, method, p, &res)
		if err == nil && res == nil {
			res = json.RawMessage("null")
		}
	}
	var re *rpc.Error
	switch {
	case err == nil:
		c.answered = true
		return res, nil
	case errors.As(err, &re):
		if c.http != nil {
			if failed := c.http.failure(re); failed != nil {
				return nil, &waitError{awaited: "the answer to " + method, err: failed}
			}
		}
		c.answered = true
		return nil, re
	}
	return nil, &waitError{awaited: "the answer to " + method, err: err}
}

// probeAnswer waits for the answer to the framing probe, which the Conn
// hands to onDrop.
func (c *client) probeAnswer(ctx context.Context) (json.RawMessage, error) {
	var r probeReply
	select {
	case r = <-c.replies:
	case <-c.echoed:
	case <-c.conn.Done():
		select { // the answer may have come just before the end
		case r = <-c.replies:
		default:
			return nil, c.conn.Err()
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-c.echoed: // a peer that echoes also echoes our answer to our request
		return nil, errEchoed
	default:
		return r.result, r.errOrNil()
	}
}

func (r probeReply) errOrNil() error {
	if r.err == nil {
		return nil
	}
	return r.err
}

// notify sends the notification method with params (nil: none).
func (c *client) notify(ctx context.Context, method string, params json.RawMessage) error {
	var p any
	if params != nil {
		p = params
	}
	if err := c.conn.Notify(ctx, method, p); err != nil {
		return &waitError{awaited: "room to write " + method, err: err}
	}
	return nil
}

// The errors of the exchange, besides the server's *rpc.Error.
var (
	errHungUp = errors.New("the server hung up")
	errEchoed = errors.New("the server sent our request back: is it a JSON-RPC server (not cat, tee or a shell)?")
)

// serverRequest answers a request of the server's: rpcurl serves none.
func (c *client) serverRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if req := rpc.RequestFromContext(ctx); req != nil && string(req.ID) == probeID && method == c.probeMethod {
		c.echoOnce.Do(func() { close(c.echoed) })
	}
	c.verbosef("the server called %s%s: answered -32601 (rpcurl serves no methods)", method, showParams(params))
	return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: "method not found: " + method + " (rpcurl serves no methods)"}
}

// serverNotification shows a notification of the server's, with -v.
func (c *client) serverNotification(_ context.Context, method string, params json.RawMessage) {
	c.verbosef("notification %s%s", method, showParams(params))
}

// onDrop takes the answer to the probe, which the Conn reads as a
// response to none of its calls, and reports the other frames it does not
// serve with -v: a newline server's answer to the probe's header line
// among them.
func (c *client) onDrop(d rpc.Drop) {
	if d.Reason == rpc.DropUnmatchedResponse {
		if r, ok := parseProbeReply(d.Line); ok {
			select {
			case c.replies <- r:
			default:
			}
			return
		}
	}
	switch {
	case d.Line == nil:
		c.verbosef("ignored a message of the server's (%s, %d bytes)", d.Reason, d.Size)
	case nullIDError(d.Line):
		// A newline server's answer to the probe's header line, likely.
		c.verbosef("ignored an error with a null id (the server could not read a line of ours): %s", excerpt(d.Line))
	case d.Reason == rpc.DropUnmatchedResponse:
		c.verbosef("ignored a response to none of our requests: %s", excerpt(d.Line))
	default:
		c.verbosef("ignored a message of the server's (%s): %s", d.Reason, excerpt(d.Line))
	}
}

// nullIDError reports whether line is an error response with a null id.
func nullIDError(line []byte) bool {
	var r struct {
		ID    json.RawMessage `json:"id"`
		Error json.RawMessage `json:"error"`
	}
	return json.Unmarshal(line, &r) == nil && string(r.ID) == "null" && r.Error != nil
}

// showParams returns " " and params compacted, or "" without params.
func showParams(params json.RawMessage) string {
	if params == nil {
		return ""
	}
	return " " + excerpt(params)
}

// excerpt returns b compacted when it is JSON, cut to 200 bytes.
func excerpt(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) == nil {
		b = buf.Bytes()
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// close tears the connection down: graceful, it writes what is queued
// first (a notification), and gives a child its time to exit at the end
// of its input; otherwise (Ctrl-C, --timeout) it closes at once, and a
// child gets SIGTERM at once. Every goroutine of the client has ended
// when it returns.
func (c *client) close(graceful bool) {
	if c.conn != nil {
		if graceful {
			ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
			c.conn.Shutdown(ctx)
			cancel()
		} else {
			c.conn.Close()
		}
		c.conn.Wait() // Close interrupted its reading (a deadline, or DialHTTP's own end)
	}
	switch {
	case c.child != nil:
		if err := c.child.close(graceful); err != nil {
			fmt.Fprintf(c.e.stderr, "rpcurl: %v\n", err)
		}
	case c.nc != nil:
		c.nc.Close()
	case c.http != nil:
		c.http.end()
	}
}

// silence returns a hint for a server that answered nothing at all, for a
// message that says what was awaited: its framing may not be ours.
func (c *client) silence() string {
	switch {
	case c == nil || c.answered || c.http != nil:
		return ""
	case c.o.framing == framingAuto:
		return " (the server answered nothing: if it does not answer the framing probe, give --framing newline or content-length)"
	}
	return fmt.Sprintf(" (the server answered nothing: does it speak another framing than %s? --framing auto detects it)", c.o.framing)
}

// verbosef says what happens, with -v.
func (c *client) verbosef(format string, args ...any) {
	if c.o.verbose {
		fmt.Fprintf(c.e.stderr, "rpcurl: "+format+"\n", args...)
	}
}

// startError is a failure to reach the server: exit status 3.
type startError struct{ err error }

func (e *startError) Error() string { return e.err.Error() }

// waitError is a failure while waiting for the server: what was awaited,
// and why it did not come (the context's end, the connection's).
type waitError struct {
	awaited string
	err     error
}

func (e *waitError) Error() string { return e.awaited + ": " + e.err.Error() }
func (e *waitError) Unwrap() error { return e.err }

// hangUp says how the server ended the exchange, before awaited came,
// once the client is closed: a child's exit status and the end of its
// stderr.
func (c *client) hangUp(err error, awaited string) string {
	if c.child != nil {
		return c.child.hangUp(awaited, !c.o.verbose) // -v showed its stderr as it came
	}
	return "the server closed the connection before " + awaited
}
