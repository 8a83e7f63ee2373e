// Package rpc is typed JSON-RPC 2.0 over newline-delimited byte streams:
// the stdio of a child process, a pipe, a socket. Each frame is one compact
// JSON value on one LF-terminated line.
//
// # Define methods
//
// A method is a descriptor whose type parameters carry its payload types.
// Declare it once, as a package-level variable, and use it on both ends:
//
//	type AddParams struct{ A, B int }
//	type AddResult struct{ Sum int }
//
//	var Add = rpc.NewMethod[AddParams, AddResult]("math/add")
//	var Progress = rpc.NewNotification[ProgressParams]("progress")
//
// A call or a handler with the wrong types does not compile. NoParams is
// the params type of a method that takes none (the member is omitted).
//
// # Serve
//
// A Registry maps method names to handlers; Handle and HandleNotification
// take the descriptor, so the handler's types come from it:
//
//	reg := rpc.NewRegistry()
//	rpc.Handle(reg, Add, func(ctx context.Context, p AddParams) (AddResult, error) {
//		return AddResult{Sum: p.A + p.B}, nil
//	})
//	conn := rpc.NewConn(os.Stdin, os.Stdout, &rpc.Options{Handler: reg})
//	conn.Start()
//	<-conn.Done() // the input ended
//	conn.Wait()   // the running handlers have answered
//
// Registering a name twice panics, as http.ServeMux does. A Registry can
// serve many connections; HandleUnknown and HandleUnknownNotification catch
// the methods without a handler of their own.
//
// # Call
//
//	res, err := Add.Call(ctx, conn, AddParams{A: 2, B: 3})
//	err = Progress.Notify(ctx, conn, ProgressParams{Percent: 50})
//
// Conn.Call and Conn.Notify are the untyped forms, for names known only at
// run time. Both ends are alike: a Conn serves and calls at the same time,
// so a server can call its client, and a handler reaches the peer that
// called it through ConnFromContext.
//
// # Notifications and concurrency
//
// Notifications are delivered in the order they were read, one at a time,
// on the read loop: a notification handler must not wait for the peer.
// Requests are handled concurrently, at most Options.MaxConcurrentRequests
// at once; further requests wait in arrival order while reading goes on, so
// the responses to this side's own calls are never held behind them.
// Responses may therefore leave in another order than the requests came;
// peers match them by id. Frames written by concurrent goroutines never
// interleave: each Write carries whole frames, one when the stream keeps up,
// several when frames queue up behind a slow Write (one system call for
// many frames under load).
//
// The read loop moves between goroutines rather than handing frames from
// one to another. A request runs on the goroutine that read it; if its
// handler (or a Write) holds that goroutine up for longer than about
// 100 µs, reading passes to another goroutine of the Conn. A caller whose
// context cannot end (context.Background) on a stream whose reads Close can
// interrupt (net.Conn, os.Pipe) waits for its response by reading it itself
// when nobody else is reading; after its call the read loop may rest for
// up to about 100 µs before a goroutine of the Conn resumes it. So a lone
// call costs no goroutine switch on the calling side, and a burst of
// requests none on the serving side.
//
// # Errors
//
// A handler's error is answered with CodeInternalError and its text,
// unless it is (or wraps) an *Error, which is sent as is. Params that do
// not decode into the handler's type are answered with CodeInvalidParams;
// a panicking handler is recovered and answered with CodeInternalError. A
// call that the peer answers with an error returns an *Error, which keeps
// the peer's code (or that it had none), message and raw data. A call ends
// in exactly one way: its response, its context (nothing more is sent, a
// late response is dropped), Close (ErrClosed), the end of the input
// (ErrInputEnded), a read error, or a failed write.
//
// # Wire rules
//
// Lines are cut at LF only and trimmed as JavaScript's String.prototype.trim
// does; blank lines are skipped; invalid UTF-8 is replaced by U+FFFD as the
// WHATWG decoder does. A line must be exactly one JSON value. An object with
// a string or number id and a string method is a request; with an id only,
// a response; with a method only, a notification. Member names match
// exactly. Ids are echoed byte for byte. The params of a method with a
// typed handler are validated by the decoder as it decodes them, and all
// other bytes by the envelope scanner, with the same outcome as validating
// the whole line first: when params are the frame's last member, as they
// usually are, the scanner stops at them, and the decoder's success
// confirms that nothing follows; when it fails, the line is scanned again
// in full, so that members after params still count (and, for a peer seen
// to write members after params, the scanner stops guessing until a frame
// ends with them again). Anything else — malformed JSON,
// non-objects, batches, oversize or too deeply nested lines — is dropped
// and reported to Options.OnDrop and Options.Logger, never to the peer.
// These are the rules of the DeepSeek Harness TypeScript transport, so a
// Conn interoperates with it both ways.
//
// # Shutdown
//
// Close stops dispatching, fails the pending calls, cancels the context of
// running handlers and writes nothing more. It never closes the streams,
// which belong to the caller. Wait returns once every goroutine of the Conn
// has exited.
//
// # Limits
//
// Lines longer than Options.MaxFrameSize (64 MiB by default) are skipped
// without being held in memory; frames nested deeper than MaxDepth are
// dropped before any decoder sees them. Params that are not objects are
// decoded into the handler's type as they are, where the TypeScript peer
// would replace them with {}; JSON-RPC batches are not supported, as the
// peers do not support them either.
package rpc
