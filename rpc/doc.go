// Package rpc is typed JSON-RPC 2.0 over byte streams: the stdio of a
// child process, a pipe, a socket. A frame is one compact JSON value on
// one LF-terminated line (NewlineFraming, the default, as DeepSeek Harness
// and MCP speak it), or a body after a Content-Length header
// (ContentLengthFraming, as LSP and DAP speak it); DetectFraming serves
// either, as the peer's first bytes show.
//
// # The core
//
// A Conn is eight concepts, each in the file named after it:
//
//	framer.go, newline.go, the framer: frames cut from the input, and
//	contentlength.go,      delimited on the output, in the framing of the
//	detect.go              Conn (framing.go)
//	read.go, parse.go      the read loop: read, parse (validate, classify,
//	                       find the handler, decode params), route
//	state.go               the state: the phase (an enum, forward only) and
//	                       every table and count, under one lock, changed
//	                       between lock and unlock, which applies the rules
//	                       that follow from any change (done, the quiet
//	                       close, the invariants)
//	inbox.go               the inbox: handler slots, the waiting room,
//	                       exclusive requests, slot lending, the
//	                       notification queue
//	serve.go, request.go   serving: one path that runs a handler (through
//	                       the interceptors, panics recovered once) with
//	                       its request's context, and answers
//	call.go                calls: the call table and the path of this
//	                       side's calls and notifications
//	writer.go              the writer: the bounded write queue, and who
//	                       writes (sender)
//	preempt.go, cancel.go  preempters: protocol rules outside the core
//	                       (cancellation), acting through retire
//
// with workers.go for the goroutines that do the work, batch.go for
// JSON-RPC batches (each element goes the path of a lone frame), and the
// API around them (method.go, registry.go, options.go, errors.go,
// drop.go, intercept.go). A request's path:
//
//	readLoop → framer.next → parse → admit (inbox) → worker: runRequests
//	  → serve → handler → send (writer) → flush → Write
//
// and a call's: doCall → sendWith (registers it in the call table, queues
// its frame) → flush → Write … readLoop → parse → settle → the caller's
// wait ends. The sections below are the tour, in the order a user meets
// the package.
//
// # Define methods
//
// A method is a descriptor whose type parameters carry its payload types.
// Declare it once, as a package-level variable, and use it on both ends:
//
//	type AddParams struct{ A, B int }
//	type AddResult struct{ Sum int }
//
//	type ProgressParams struct{ Percent int }
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
// Notifications are handled in the order they were read, one at a time,
// on a goroutine of the Conn (the notification runner), never on the read
// loop: a notification handler may call its peer, and the response is
// read meanwhile. As in the TypeScript transport, a call returns only once
// the notifications the peer wrote ahead of its response have been handled,
// and Done is closed only once those read before the end of the input
// have been; a call made from a notification handler, with the handler's
// context, does not wait for the handler it is made from. (Made with
// another context, it would wait for that handler until the context ends.)
// A request's handler starts once the notifications read before it have
// been handled, as in a JavaScript peer, whose handlers start in arrival
// order: a document opened by a notification is open for the request
// about it that follows (a notification handler that must not hold the
// requests behind it hands its work to a goroutine). While the handler
// running waits for a call of its own to the peer, the requests go on, as
// a JavaScript handler's do at an await: the peer may need one of them
// answered to answer it. A notification does not wait for the requests
// read before it. Requests are handled on goroutines of the Conn, at most
// Options.MaxConcurrentRequests at once; further requests wait in arrival
// order, in a waiting room bounded by Options.MaxWaiting and
// Options.MaxWaitingBytes, while reading goes on, so the responses to this
// side's own calls are never held behind them. Responses may leave in
// another order than the requests came; peers match them by id.
//
// A method registered with HandleExclusive runs alone: it starts once
// every request read before it has finished, and the requests read after
// it start once it has returned. That is how a handshake reads in a
// JavaScript server, whose handlers start in arrival order: a request
// written before "initialize" is served before it, and one written after
// is served after it, every time.
//
// A caller's goroutine never does the peer's work: it encodes its frame,
// queues it and waits, while goroutines of the Conn write the frames, read
// the input and run the handlers. So every wait ends with its context or
// with Close, whatever the peer does. Frames never interleave: each Write
// carries whole frames, one when the stream keeps up, several when frames
// queue up behind a slow Write (one system call for many frames under
// load).
//
// A handler that calls its own peer back and waits lends its slot to a
// waiting request meanwhile, and when every slot is held by a handler
// waiting for the peer, requests are answered CodeOverloaded instead of
// waiting: two ends calling each other back under load never deadlock.
//
// # Bounds
//
// Every queue of a Conn has a bound, and a policy at the bound:
//   - requests beyond the handler slots and the waiting room are answered
//     at once with CodeOverloaded (a JSON-RPC server error the peer may
//     retry), and reading goes on; the requests held behind an exclusive
//     one count against the waiting room;
//   - notifications wait for their handler in a room of the same bounds
//     as the requests' (a room of their own); when it is full, reading
//     waits until the notification handler has taken one;
//   - frames wait to be written in a queue of Options.MaxWriteQueue bytes
//     (a larger frame goes alone). A caller waits for room with its
//     context. A handler's reply waits with its slot taken. The read loop,
//     which answers on its own only what needs no handler (method not
//     found, invalid params, overloaded), waits before it reads on. That
//     is the backpressure rule: a peer that sends requests without reading
//     the replies fills the slots, then the waiting room, and is then read
//     no further until it reads. Responses to this side's calls keep
//     flowing until then, so two ends calling each other do not stall
//     while either has slots left. Two ends that both flood each other
//     beyond their limits can each wait for the other to read: set
//     Options.WriteTimeout to end such a connection with ErrWriteTimeout;
//   - frames longer than Options.MaxFrameSize are skipped without being
//     held (a Content-Length body is skipped by its length; a header
//     block longer than MaxHeaderBytes is dropped); frames to send that
//     are longer are refused (ErrFrameTooLarge,
//     or a CodeInternalError reply). A response that is too long fails the
//     call it answers with ErrFrameTooLarge when its id shows in its first
//     bytes, as peers write it.
//
// So the memory a peer can make a Conn hold is at most about
//
//	MaxFrameSize (the line being read, 4× that while a line of invalid
//	  UTF-8 is repaired)
//	+ MaxWriteQueue + MaxFrameSize (the write queue, and a frame alone)
//	+ 2 × MaxWaitingBytes (the waiting and held requests, and the waiting
//	  notifications, as decoded params)
//	+ MaxConcurrentRequests × (a running handler's params, reply and
//	  whatever the handler itself holds), twice that count while handlers
//	  wait for the peer, plus one notification being handled
//	+ MaxFrameSize (with Options.Batches: the responses held until their
//	  batch's last is ready)
//
// with the defaults 64 MiB, 1 MiB, 16 MiB and 256 handlers. An idle Conn
// holds about 7 KiB: its read buffer rests at 4 KiB and grows only with
// traffic, and its workers (the goroutines that run handlers and write)
// exit after 2 seconds without work.
//
// # Request contexts
//
// Each request handler's context is its own, derived from the Conn's. It
// ends when the peer cancels the request (see Cancellation), when Close
// ends the connection or writing fails, and when the handler returns; its
// context.Cause says which: ErrPeerCancelled (wrapped with the peer's
// reason), ErrClosed, or the write error. The end of the input does not
// end it: a peer that closes its output after its last request, as a
// shell pipe does, still reads the answers, and the TypeScript transport
// answers after its input ended too. A program that wants its handlers
// stopped then calls Close once Done is closed.
//
// RequestFromContext tells a handler its request's method and raw id; a
// notification handler's context says it is a notification. A
// notification handler's context is the Conn's: Close ends it.
//
// # Cancellation
//
// JSON-RPC 2.0 has no cancellation; protocols built on it add a
// notification for it. Options.Cancellation sets one, for both ways:
//
//	conn := rpc.NewConn(r, w, &rpc.Options{Handler: tools, Cancellation: rpc.MCPCancellation()})
//
// The peer's cancel notification then ends the context of the request it
// names (a request still waiting for a handler slot is settled at once),
// and a call of this side whose context ends before its response sends
// one, once, and forgets the call. MCPCancellation ("notifications/cancelled",
// no response for a cancelled request) and LSPCancellation
// ("$/cancelRequest", answered CodeRequestCancelled unless the handler
// returned a result) are ready; a CancelPolicy of one's own describes
// another. Without a policy, the default, nothing on the wire changes: the
// DeepSeek Harness peers have no cancellation.
//
// # Interceptors
//
// Options.Intercept wraps the serving of every request and notification
// (method, id, decoded params, outcome; it may refuse a request with an
// *Error), and Options.InterceptCall every call and notification this side
// sends, in the manner of net/http middleware: for access logs, metrics,
// tracing, authorisation. The examples of ServeFunc show a log/slog access
// log and OpenTelemetry-style spans. Without interceptors, nothing is
// called or allocated for them.
//
// # Errors
//
// A handler's error is answered with CodeInternalError and its text,
// unless it is (or wraps) an *Error, which is sent as is. Params that do
// not decode into the handler's type are answered with CodeInvalidParams
// and a message in the peer's terms (which member, what was expected, what
// came), while the decoder's error, which names the program's Go types,
// goes to Options.OnDrop and Options.Logger only (DropInvalidParams); a
// panicking handler is recovered and answered with CodeInternalError. A
// call that the peer answers with an error returns an *Error, which keeps
// the peer's code (or that it had none), message and raw data. A call ends
// in exactly one way: its response, its context (nothing more is sent, a
// late response is dropped), Close (ErrClosed), the end of the input
// (ErrInputEnded), a read error, or a failed write.
//
// # Wire rules
//
// Lines (and Content-Length bodies) are trimmed as JavaScript's String.prototype.trim
// does; blank lines are skipped; invalid UTF-8 is replaced by U+FFFD as the
// WHATWG decoder does. A line must be exactly one JSON value. An object with
// a string or number id and a string method is a request; with an id only,
// a response; with a method only, a notification. The envelope's member
// names match exactly; params and results are decoded with go-json's
// struct rules (member names matched case-insensitively, unknown members
// ignored, as encoding/json does). Ids are echoed byte for byte. The params of a method with a
// typed handler are validated by the decoder as it decodes them, and all
// other bytes by the envelope scanner, with the same outcome as validating
// the whole line first: when params are the frame's last member, as they
// usually are, the scanner stops at them, and the decoder's success
// confirms that nothing follows; when it fails, the line is scanned again
// in full, so that members after params still count (and, for a peer seen
// to write members after params, the scanner stops guessing until a frame
// ends with them again). Anything else — malformed JSON,
// non-objects, batches (unless Options.Batches), oversize or too deeply
// nested frames — is dropped
// and reported to Options.OnDrop and Options.Logger, never to the peer.
// These are the rules of the DeepSeek Harness TypeScript transport, so a
// Conn interoperates with it both ways; docs/wire.md in the repository
// states them in full.
//
// # Framings and batches
//
// Options.Framing chooses how frames are laid out. ContentLengthFraming
// reads a header block ("Name: value" lines, names in any case, ended by a
// blank line; Content-Length required, Content-Type optional and checked
// for JSON in UTF-8, a mismatch logged, not fatal) and a body of exactly
// that many bytes, and writes "Content-Length: N\r\n\r\n" before each
// body, in the same buffer and the same Write. A header block that is not
// one (DropBadHeader) is dropped with what follows it up to the next
// "Content-Length", where reading resumes, so no good frame is lost after
// garbage that ends its last line; a stream cut inside a frame ends as an unterminated line does.
// DetectFraming reads the first bytes of the stream, chooses (a header
// line, or a JSON value), and keeps that framing for the Conn's life, both
// ways; Conn.Framing says which. Every other rule is the same in every
// framing.
//
// Options.Batches serves JSON-RPC 2.0 batches: each element of an array is
// served as a lone frame would be, under the same bounds, and the
// responses to its requests are written in one array once the last is
// ready (nothing for notifications only; an empty array is answered
// CodeInvalidRequest). A Batch sends this side's calls and notifications
// in one frame and matches their responses by id:
//
//	b := rpc.NewBatch(conn)
//	sum := Add.InBatch(b, AddParams{A: 1, B: 2})
//	Progress.InBatch(b, ProgressParams{Percent: 50})
//	if err := b.Send(ctx); err != nil { … }
//	r, err := sum.Result()
//
// # Listeners, dialers, stdio and child processes
//
// A Conn runs over any reader and writer, and never closes them. Package
// rpc/transport makes Conns over the usual transports and owns what it
// opens: a Server for every connection of a net.Listener, Dial and
// StartConn for a net.Conn, ServeStdio for the process's own stdin and
// stdout, and StartChild for a child process's, with its bounded teardown.
//
// # Shutdown
//
// Close stops dispatching, fails the pending calls, cancels the context of
// running handlers (with ErrClosed as the cause), drops what waits and
// the frames not yet written, and writes nothing more. It never closes
// the streams, which belong to the caller. Shutdown first lets the
// requests and notifications already read be handled and the queued
// frames be written, for as long as its context allows; a handler may
// call it with its own context, to have the Conn close once it has
// answered. A connection also ends when its input ends (calls fail with
// ErrInputEnded; the notifications read before are still handled, and
// Done is closed once they are; running handlers still answer, and the
// Conn closes once they have) and when a write fails (Err says why). Wait
// returns once the Conn is closed and every goroutine of the Conn has
// exited; on a stream without SetReadDeadline or SetWriteDeadline, that
// includes a read or a Write in progress, which Close cannot interrupt.
//
// # Limits
//
// Frames longer than Options.MaxFrameSize (64 MiB by default) are skipped
// without being held in memory, header blocks longer than MaxHeaderBytes
// (8 KiB) dropped; frames nested deeper than MaxDepth are dropped before
// any decoder sees them. Params that are not objects are decoded into the
// handler's type as they are, where the TypeScript peer would replace
// them with {}. Batches are served only with Options.Batches, as the
// DeepSeek Harness and MCP peers send none; a batch's invalid elements
// are dropped as lone frames are, where the specification would answer
// each with CodeInvalidRequest.
package rpc
