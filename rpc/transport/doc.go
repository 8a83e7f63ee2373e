// Package transport runs the Conns of package rpc over the usual
// transports — a listener's connections, a dialled connection, the
// process's own stdin and stdout, a child process's — and owns what it
// opens. An rpc.Conn runs over any reader and writer and never closes
// them; here each helper closes the connection, pipe or process it made
// once the Conn is done with it, and says how long that can take. In this
// documentation a Conn is an *rpc.Conn, and Options are *rpc.Options.
//
// The package uses rpc's exported API alone. Its files, one per
// transport: server.go and connstate.go (Server), dial.go (Dial,
// StartConn), stdio.go (ServeStdio), child.go with child_unix.go and
// child_other.go (StartChild), http.go (HTTPHandler) and httpclient.go
// (DialHTTP).
//
// # Listener: Server
//
// A Server serves every connection a net.Listener accepts, each with a
// Conn of its own, in the shape of http.Server:
//
//	srv := &transport.Server{Options: &rpc.Options{Handler: reg}}
//	go srv.Serve(l) // or srv.ListenAndServe("unix", path)
//	…
//	srv.Shutdown(ctx) // stop accepting, answer what was read, close
//
// It owns each net.Conn it accepts: a connection's watcher (one goroutine
// besides the Conn's own) closes it once the Conn has ended and every
// goroutine of the Conn has exited. Its bounds:
//   - MaxConns connections at once over every listener (DefaultMaxConns,
//     10,000, when zero; none when negative). At the bound the Server stops
//     accepting until a connection ends: clients wait in the kernel's
//     backlog, and past it the kernel refuses them.
//   - An Accept error that passes (too many open files, a connection
//     aborted before it was accepted) is logged to Logger and retried
//     after a pause of 5ms, doubled after each failure in a row up to 1s,
//     as http.Server does; any other ends Serve with it.
//   - Shutdown closes the listeners, then shuts every connection down at
//     once (rpc.Conn.Shutdown: what was read is answered, what is queued
//     written) and waits until each has ended; when its context ends
//     first, it closes those left and returns the context's error at
//     once. Close closes every connection at once and, unlike
//     http.Server's, returns only once each has ended, so that no
//     goroutine of the Server outlives it.
//
// One hook, ConnState, is told of each state of each connection (see
// ServerConn): at StateNew, before its Conn is made, it may change the
// connection's own copy of the Options (values in its BaseContext for the
// handlers, such as a session or the peer's identity, or a Handler of its
// own); at StateActive the Conn has started; at StateClosed it has ended,
// and the ServerConn says why. BaseContext gives every connection of a
// listener the context it starts from.
//
// # Dialer: Dial and StartConn
//
// Dial connects to an address and returns a started Conn that owns its
// net.Conn; StartConn does the same for a net.Conn made elsewhere (a TLS
// connection, one end of net.Pipe). The net.Conn is closed once the Conn
// has ended and its goroutines have exited — at Wait, not at Done, since
// the handlers running when the input ends still answer through it —
// whatever ended it: Close, Shutdown, the peer hanging up, a failed
// write. One goroutine waits for that besides the Conn's own.
//
// # Stdio: ServeStdio
//
// ServeStdio is a program that is the child of its peer (a language
// server, an MCP server, a DeepSeek Harness runtime), serving its own
// stdin and stdout until the connection is over. It returns nil at the
// end of the input, once the running handlers have answered. When its
// context ends (SIGTERM, say) it shuts the connection down, and if that
// takes longer than StdioShutdownGrace (5s) it closes it and says so in
// its error. os.Stdin is usually a blocking file whose Read cannot be
// interrupted, so the read loop may outlive ServeStdio until the process
// exits, which is what a program does next.
//
// # Child process: StartChild
//
// StartChild starts a command and speaks to it over its stdin and stdout
// with a Conn; the Child owns the process and its three pipes (made with
// os.Pipe, so that closing them interrupts a read or a write in
// progress). The child's stderr is read all along, so that it never
// blocks on it: StderrTail keeps its last lines (ChildOptions.StderrLines,
// DefaultChildStderrLines, 100, when zero; a line longer than 4 KiB is
// cut), and what it writes is copied to cmd.Stderr when that was set. On
// unix the child leads a process group of its own, so that the ladder
// reaches what it started too; elsewhere only the child is signalled.
//
// Child.Close ends the child with a teardown ladder that stops at the
// first step after which the child is reaped, each step bounded
// (ChildOptions.EOFGrace, DefaultChildEOFGrace, 5s; KillGrace,
// DefaultChildKillGrace, 3s):
//
//  1. its stdin is closed, and Close waits EOFGrace for it to exit; the
//     Conn goes on reading its stdout meanwhile;
//  2. SIGTERM (to its process group on unix), and Close waits KillGrace;
//  3. SIGKILL, and Close waits KillGrace; a child still not reaped makes
//     the error a *ChildNotReapedError;
//  4. on unix, once the child is reaped, what is left of its process group
//     (grandchildren) gets SIGTERM and, after at most KillGrace, SIGKILL;
//  5. the Conn and the stdout pipe are closed; Close waits up to KillGrace
//     for the Conn's goroutines, then up to 500ms for the stderr reader (a
//     grandchild may hold the pipe open), and closes the stderr pipe.
//
// Close therefore returns within EOFGrace + 4×KillGrace + 500ms: 17.5s
// with the defaults. It sends nothing on the Conn first: a protocol whose
// peer expects a shutdown request (LSP, the DeepSeek Harness protocol,
// whose sdkproto.Launch does so) sends it before Close. Once the Conn has
// ended (a caller that shut it down first), Close reads and discards what
// the child still writes, so that its last words do not block its exit.
// Terminate is the same ladder without step 1's wait, for a child that is
// abandoned (an interrupt, a timeout) rather than done with.
//
// ChildOptions.Connect makes the Conn in StartChild's place, for a
// protocol that speaks on the raw pipes first: it is called once the
// child has started, with its stdout and stdin as they are (their
// deadlines still work), writes and reads them as it needs to (a greeting,
// a probe whose answer tells the child's framing, as cmd/rpcurl's does),
// and returns the Conn, what it read already put back in front; StartChild
// starts it. When Connect fails, the child is ended with the usual ladder
// and StartChild returns a *ChildConnectError: Connect's error, the
// child's ProcessState and the tail of its stderr. StartChildContext
// bounds Connect with a context: when it ends, Connect's reads and writes
// are interrupted and the child is ended as by Terminate.
//
// # HTTP: HTTPHandler and DialHTTP
//
// An HTTPHandler serves a Registry over HTTP POST, as jrpc2's jhttp and
// go-ethereum's HTTP server do: one frame, or a batch, per body, read by a
// Conn of its own with Batches and AnswerInvalid on, the answer in the
// response's body:
//
//	http.Handle("/rpc", transport.NewHTTPHandler(&rpc.Options{Handler: reg}))
//
// It answers 200 with the response (or the batch's array, or the error of
// a body that is not JSON-RPC, with a null id); 204 when there is nothing
// to answer (notifications); 413 for a body longer than MaxFrameSize,
// whose rest is not read; 408 for a body that did not arrive within
// ReadTimeout (DefaultHTTPReadTimeout, 30s); 400 for a body cut short;
// 405 for a method other than POST; 415 for a Content-Type other than
// application/json in UTF-8. The request's context is the Conn's
// BaseContext, so its values reach the handlers, and its end closes the
// Conn. A handler cannot call its client over HTTP: its calls fail with
// ErrHTTPCallback. Each POST's Conn has the Options' bounds;
// http.Server bounds how many run at once.
//
// DialHTTP returns a Conn whose calls and notifications are each POSTed
// (at most HTTPClientOptions.MaxInFlight at once, DefaultHTTPMaxInFlight,
// 64), so that a typed Method is called over HTTP as over any stream; the
// responses settle the calls, a call whose context ends cancels its POST,
// and a call its POST leaves unanswered (a 503 without a body, a refused
// connection) ends with an *rpc.Error of CodeHTTPError.
package transport
