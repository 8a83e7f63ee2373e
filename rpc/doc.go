// Package rpc is typed JSON-RPC 2.0 over byte streams: the stdio of a
// child process, a pipe, a socket. A frame is one compact JSON value on
// one LF-terminated line (NewlineFraming, the default, as DeepSeek Harness
// and MCP speak it), or a body after a Content-Length header
// (ContentLengthFraming, as LSP and DAP speak it); DetectFraming serves
// either, as the peer's first bytes show.
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
// # Order
//
// A Conn serves what the peer sends in the order every JavaScript peer
// does (vscode-jsonrpc, the MCP SDK, the DeepSeek Harness transport), by
// one rule:
//
// Every message the peer sends takes its place in one line, in the order
// it was read: requests, notifications, responses to this side's calls,
// and the end of the input. An entry starts once the entries before it
// have yielded. A handler yields when it returns, when it calls its peer
// with its own context (a JavaScript handler's await), when it calls
// Yield, and, registered Async, as it starts. A notification, and a
// request registered Exclusive, runs alone: nothing behind it starts
// until it yields. Requests next to requests share the turn, up to
// Options.MaxConcurrentRequests at once. A response to a call is
// delivered once the notifications (and exclusive requests) read before
// it have yielded, so a call returns after the events the peer wrote
// ahead of its answer were handled; the response to a handler's own call
// is that handler's turn again, and it holds what is behind it until it
// yields again (the responses to its other calls come in that turn).
//
// So a language server sees what its editor saw. An editor that writes
//
//	didChange "a" → hover → didChange "b"
//
// has the hover answered from "a": it starts once the first change's
// handler has returned, and the second change waits for the hover. A
// notification handler that asks its peer for something (initialized
// asking the client for its configuration) yields while it waits, and the
// didOpen and the hover behind it go on.
//
// A handler that waits for something the Conn cannot see (a timer, a
// lock, a channel, its context's end, a call made with another context)
// holds back what is behind it until it returns, as a synchronous
// JavaScript handler does: it calls Yield before it waits, or is
// registered Async when it does not depend on what follows it. A
// goroutine a handler leaves behind changes nothing once the handler has
// returned.
//
// Handlers run on goroutines of the Conn, never on a caller's goroutine:
// a caller encodes its frame and waits, and its wait ends with its context
// or with Close. A request or notification whose turn comes as it is read
// runs on the goroutine that read it, which reads on once the handler
// returns; a follower reads meanwhile when the handler yields, and at
// most two watchdog periods (1 ms) after a handler that does not. A lone caller
// whose context cannot end reads its own response on a stream Close can
// interrupt. So a lone call costs no goroutine hand-off on either side.
// Responses may leave in another order than the requests came; peers
// match them by id. Frames never interleave: each Write carries whole
// frames, one when the stream keeps up, several when frames queue up (one
// system call for many frames under load).
//
// A handler that has yielded holds no slot. Handlers alive, yielded or
// not, are capped at twice MaxConcurrentRequests: a request whose turn
// comes at the cap is answered CodeOverloaded, and a notification
// handler's yield is refused (an Async one's too: past the cap it holds
// the line until it returns), so that two ends calling each other back
// under load never wait for each other for ever.
//
// # Bounds
//
// Every queue of a Conn has a bound, and a policy at the bound:
//   - requests and notifications wait for their turn in the line, at most
//     Options.MaxWaiting of them and MaxWaitingBytes of their lines (one
//     notification or exclusive request next in line waits outside these
//     bounds). A request that finds no room is answered at once with
//     CodeOverloaded (a JSON-RPC server error the peer may retry), and
//     reading goes on; a notification that finds no room holds the reading
//     back until there is room;
//   - at most MaxConcurrentRequests handlers run without having yielded,
//     and twice that many are alive (see Order): a request whose turn
//     comes at the cap is answered CodeOverloaded;
//   - frames wait to be written in a queue of Options.MaxWriteQueue bytes
//     (a larger frame goes alone). A caller waits for room with its
//     context. A handler's reply waits with its handler counted alive. The
//     reader, which answers on its own only what needs no handler (method
//     not found, invalid params, overloaded), waits before it reads on.
//     That is the backpressure rule: a peer that sends requests without
//     reading the replies fills the handlers, then the line, and is then
//     read no further until it reads. Responses to this side's calls keep
//     flowing until then. Two ends that both flood each other beyond their
//     limits can each wait for the other to read: set Options.WriteTimeout
//     to end such a connection with ErrWriteTimeout;
//   - frames longer than Options.MaxFrameSize are skipped without being
//     held (a Content-Length body is skipped by its length; a header
//     block longer than MaxHeaderBytes is dropped); frames to send that
//     are longer are refused (ErrFrameTooLarge, or a CodeInternalError
//     reply). A response that is too long fails the call it answers with
//     ErrFrameTooLarge when its id shows in its first bytes, as peers
//     write it.
//
// So the memory a peer can make a Conn hold is at most about
//
//	MaxFrameSize (the line being read, 4× that while a line of invalid
//	  UTF-8 is repaired)
//	+ 2 × MaxWriteQueue + MaxFrameSize (the write queue, the buffer that
//	  joins its frames into one Write, and a frame alone)
//	+ MaxWaitingBytes (the requests and notifications waiting for their
//	  turn, as decoded params)
//	+ 2 × MaxConcurrentRequests × (a handler's params, reply and whatever
//	  the handler itself holds), plus one notification handler
//	+ MaxFrameSize (with Options.Batches: the responses held until their
//	  batch's last is ready)
//
// with the defaults 64 MiB, 1 MiB, 16 MiB and 256 handlers. An idle Conn
// holds about 8 KiB: its read buffer rests at 4 KiB and grows only with
// traffic, its workers but the one that reads exit after one to two
// seconds without work, and the buffer that joins frames is let go with
// them.
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
// names (a request still waiting for its turn never runs: it is answered
// at once, as the policy says),
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
// nested frames — is dropped and reported to Options.OnDrop and
// Options.Logger, and by default never to the peer. These are the rules of
// the DeepSeek Harness TypeScript transport, so a Conn interoperates with
// it both ways; docs/wire.md in the repository states them in full.
//
// A peer that follows the JSON-RPC 2.0 specification to the letter waits
// for an answer to a frame it got wrong. Options.AnswerInvalid gives it
// one, as the specification's examples show: CodeParseError with a null
// id for a frame that is not JSON, CodeInvalidRequest for one that is not
// a valid request (one per invalid element of a batch), and a request
// whose id is null is served. With Options.Batches as well, a Conn
// answers all fifteen examples of the specification as it does.
// Responses are never answered, so two ends under the option never answer
// each other's answers.
//
// Params may come by name (an object) or by position (an array). A params
// type takes both with an UnmarshalJSON method that calls
// UnmarshalParams (see its example).
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
// stdout, StartChild for a child process's, with its bounded teardown, and
// HTTPHandler and DialHTTP for JSON-RPC over HTTP POST.
//
// # Descriptions and validation
//
// Method.Describe attaches an optional Doc (summary, errors, examples) to
// a descriptor; Registry.Methods reports every registered method's name,
// Go types and Doc. Package openrpc writes an OpenRPC document from them
// and serves it as rpc.discover; package openrpc/validator checks params
// against it through Options.CheckParams, which a Conn calls once params
// have decoded, before the handler's turn. rpc imports neither.
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
// answered. A connection also ends when its input ends: the end takes its
// turn in the line, after the notifications read before it have yielded;
// then calls fail with ErrInputEnded and Done is closed; running handlers
// still answer, and the Conn closes once they have. It ends too when a
// write fails (Err says why). Wait
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
//
// # Inside a Conn
//
// The internals, for whoever reads or changes them; docs/architecture.md
// in the repository has the whole map (types, the fields under the lock,
// the goroutines, a request's path):
//
//	line.go                the rule: the line, its bounds and the cap
//	state.go               the state under the Conn's one lock, changed
//	                       between lock and unlock (the phase, the reading
//	                       role, the rules every change ends with)
//	worker.go              the goroutines: workers that read, run handlers
//	                       and write, the lent reading role and its watchdog
//	read.go, parse.go      reading a frame and doing what it asks
//	serve.go, request.go   running a handler, answering; the job (an entry
//	                       of the line, and a handler's context)
//	call.go                this side's calls: register, wait, settle
//	writer.go              the bounded write queue, and who writes
//	batch.go, cancel.go    batches both ways; cancellation policies
//	framer.go, newline.go, the framings: frames cut from the input and
//	contentlength.go,      delimited on the output
//	detect.go, framing.go
package rpc
