// Package sdkproto is the DeepSeek Harness (DSH) SDK protocol in Go: the
// wire types of its three requests and four notifications, their rpc
// descriptors and validation, a client that drives a runtime, and a server
// side for programs that implement (or fake) one.
//
// # The protocol
//
// A client starts the runtime as a child process and speaks JSON-RPC 2.0
// on its stdin and stdout, one frame per line (package rpc). The client
// sends initialize, session/prompt and shutdown (the descriptors
// Initialize, SessionPrompt and Shutdown); the runtime streams
// session.event, session.status, subagent.started and subagent.finished
// (SessionEvent, SessionStatus, SubagentStarted, SubagentFinished).
//
// # Drive a runtime
//
//	c, err := sdkproto.Launch(exec.Command("dsh", "--profile", "sdk"), nil)
//	if err != nil { ... }
//	defer c.Close() // shutdown, then the teardown ladder: stdin, SIGTERM, SIGKILL
//
//	_, err = c.Initialize(ctx, sdkproto.InitializeParams{
//		Cwd: dir, Provider: "deepseek-official", Model: "deepseek-v4-flash",
//		MaxTokens: sdkproto.Tokens(4096),
//	})
//	res, err := c.Run(ctx, "main", sdkproto.TextBlock("say hi"))
//	if err != nil { ... }                   // the run could not be followed
//	if err := res.Err(); err != nil { ... } // the turn did not complete
//	fmt.Println(res.FinalResponse)
//
// Run does what the TypeScript client's run() does: it subscribes to the
// session tree before prompting, waits for the receipt of the prompt,
// collects the root session's events and the whole tree's notifications in
// order, and stops at the root session's idle status. Stream and RunFunc
// hand each notification over as it arrives, for rendering text deltas
// (Notification.TextDelta). A turn that ran and failed (a model error, an
// abort, the output cap) is reported as the runtime reports it, in the
// turn/end event of a turn whose session/prompt succeeded, so it is no
// error of Run's, as in the TypeScript and Python clients: RunResult.Err
// says it, a *TurnFailedError with the kind and the reason, and
// Notification.TurnErr finds it in a Stream. A prompt needs at least one
// content block: without any, nothing is sent and the call fails with
// ErrEmptyPrompt. Subscribe and SubscribeSessionTree observe
// notifications without Run; NewClient and AttachConn drive a runtime over
// any stream or an existing rpc.Conn.
//
// Errors are typed: *ResponseError (the runtime answered with an error
// object), *TimeoutError (ClientOptions.RequestTimeout), *ProtocolError (a
// malformed result or event, with the TypeScript client's texts) and
// *TransportClosedError (the runtime went away, with its exit status and
// the last lines of its stderr). A runtime's refusal of a method it does
// not serve matches errors.Is(err, ErrUnknownMethod): on the wire it has
// no code of its own (-32603, like any failure), so its text is matched
// once, here, rather than by every caller. A peer that echoes what the
// Client writes (cat where a runtime was expected) sends the Client its
// own request, which a runtime never does: the Client's requests then
// fail with an error matching ErrEchoingPeer, that says so.
//
// AttachConn shares an existing rpc.Conn with handlers of the caller's own.
// The Client must see every notification, so AttachConn refuses, with an
// error naming the conflict, a registry that already handles unknown
// notifications or any of the four notification methods.
//
// # Requests from the runtime
//
// The runtime may send its client requests (the approval flows to come).
// ClientOptions.Responders answers them with typed handlers, made with
// Respond on an rpc.Method; a request without a responder is answered
// -32601 "method not found: <method>", as the TypeScript client answers
// every request.
//
// # Test a program that drives a runtime
//
// Package sdkproto/sdktest is a scriptable runtime: a test declares each
// prompt's turn (text, reasoning, tool calls, a subagent, a model error,
// usage, pauses on the test's clock, requests to the client) and gets a
// connected Client, every frame recorded. Package sdkproto/replay serves
// a recorded conversation (a transcript, a tap log, raw frames) as a
// runtime, and fails clearly, naming the frame, when the client departs
// from it.
//
// # Wire types
//
// Every payload has a Go type with the exact JSON names. ContentBlock is one
// union of the five block kinds and the prompt-side image upload; Event is
// the session-log envelope, with typed accessors for the event types a
// client reads (AssistantMessage, AssistantChunk, TurnEnd, ToolCall, ...).
// Nothing is lost: decoding keeps the raw JSON, so unknown block types,
// unknown event types and unknown members survive a decode and encode byte
// for byte, and a program can forward what it does not understand.
// OptionalInt and OptionalString tell an absent member from null. Printed
// (fmt's %v, %+v, %s), a wire value shows its JSON text, as it encodes,
// rather than the bytes it keeps; a Notification shows its index, method
// and params.
//
// Validation reproduces the runtime's checks and messages:
// InitializeParams.Validate (reasoningEffort, then maxTokens as a
// JavaScript safe integer), ValidatePromptBlocks (image uploads: canonical
// base64, accepted media types).
//
// # The protocol described
//
// OpenRPCDocument returns the protocol's OpenRPC 1.3 document: the three
// requests and, as methods without a result marked with
// DirectionExtension, the four notifications, with the JSON Schema of
// every payload (the wire types' JSONSchema methods), the errors the
// runtime answers with and examples recorded from the real runtime.
// openrpc/validator checks params and results against it; dshrpc
// schema prints it. docs/sdkproto.md lists what it states and the rules of
// the contract that no schema can state.
//
// # Implement a runtime
//
// A Runtime has one method per request. NewServer wraps it with what every
// deployment shares: the newer handshake rules (a prompt before a
// successful initialize is refused with "SDK server is not initialized", a
// failed initialize changes nothing, prompts are refused once shutdown
// began), the generic validation and its exact texts, image admission, the
// runtime's answer to unknown methods (ErrUnknownMethod), and shutdown. An Emitter writes the
// four notifications from any goroutine, in call order, giving each
// session's events contiguous seq numbers.
//
//	srv := sdkproto.NewServer(myRuntime, nil)
//	err := srv.Serve(ctx, os.Stdin, os.Stdout)
//
// The runtime answers nothing to a line it ignores (not JSON, a
// notification, ...); ServerOptions.OnDrop sees each of them, as
// ClientOptions.OnDrop does on the client's side.
//
// A scripted runtime for demos and tests (no model, no network) is package
// sdkproto/demo: it stands to sdkproto as net/http/httptest to net/http,
// a peer to drive rather than part of the protocol, so it lives apart and
// this package holds the protocol alone.
//
// # Revisions
//
// The package follows the newer upstream revision of the protocol (initialize
// takes reasoningEffort, prompts may carry encoded images, prompts wait for a
// successful initialize). The client copes with runtimes of the older
// revision as well, which accept prompts before initialize.
//
// # Sources
//
// The contract is docs/wire.md in the linerpc repository; comments here cite
// it by section ("docs/wire.md §6.3"). Some comments also name files such as
// packages/core/session/src/known-event-types.ts: those are files of the
// upstream TypeScript monorepo of DeepSeek Harness (deepseek-ai/deepseek-harness),
// relative to its root, where the vocabulary in question is defined. They
// tell a reader where to check a rule against the reference implementation
// (docs/wire.md §0 lists them); nothing here depends on them, and the
// package's behaviour is pinned by the wire vectors (testdata/vectors) and
// the transcripts recorded from a real runtime (testdata/transcripts).
package sdkproto
