package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/linerpc/linerpc/rpc"
)

const (
	serverName    = "toy-lsp"
	serverVersion = "0.1.0"

	// maxFrameSize is the largest message accepted and sent: 64 MiB, set
	// explicitly, so that a large document (tens of MiB) opens.
	maxFrameSize = 64 << 20

	// maxWaiting is how many messages may wait for their turn: LSP clients
	// do not retry a request answered CodeOverloaded (they show it as an
	// error), so a burst of thousands written at once waits rather than
	// fails. Their bytes stay bounded (DefaultMaxWaitingBytes).
	maxWaiting = 1 << 16

	// configTimeout bounds the wait for the client's answer to
	// workspace/configuration: the notifications that come meanwhile
	// wait for it.
	configTimeout = 10 * time.Second
)

// The commands of workspace/executeCommand.
const cmdWait = "toy.wait"

// phase is where a connection is in LSP's life cycle.
type phase int

const (
	phaseNew         phase = iota // before initialize
	phaseInitialized              // after initialize
	phaseShutDown                 // after shutdown: only exit may follow
)

// session is the state of one connection: its life cycle and its open
// documents. The registry is shared by every connection; a handler finds
// its connection's session in its context (Options.BaseContext).
type session struct {
	mu          sync.Mutex
	phase       phase
	wantsConfig bool // the client can answer workspace/configuration
	askedConfig bool
	docs        map[string]*document
	exited      bool
	exitCode    int
}

func newSession() *session {
	return &session{docs: map[string]*document{}}
}

type sessionKey struct{}

func withSession(ctx context.Context, s *session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// sessionOf returns the session of the connection whose handler got ctx.
func sessionOf(ctx context.Context) *session {
	s, ok := ctx.Value(sessionKey{}).(*session)
	if !ok {
		panic("lsp: a handler's context has no session (Options.BaseContext)")
	}
	return s
}

func (s *session) getPhase() phase {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase
}

func (s *session) doc(uri string) *document {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.docs[uri]
}

// ExitCode is the status the process ends with: 0 when shutdown came
// before exit (or before the input ended), 1 otherwise, as LSP asks.
func (s *session) ExitCode() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exited {
		return s.exitCode
	}
	if s.phase == phaseShutDown {
		return 0
	}
	return 1
}

// options returns the Options of a connection whose handlers find s in
// their context. The framing is detected from the client's first bytes:
// LSP clients send Content-Length headers, and a client that writes one
// JSON message per line is answered the same way.
func options(reg *rpc.Registry, s *session) *rpc.Options {
	o := sharedOptions(reg)
	o.BaseContext = withSession(context.Background(), s)
	return o
}

// sharedOptions are the Options of every connection, without its session.
func sharedOptions(reg *rpc.Registry) *rpc.Options {
	return &rpc.Options{
		Handler:      reg,
		Framing:      rpc.DetectFraming,
		MaxFrameSize: maxFrameSize,
		// A burst of requests beyond the handler slots waits.
		MaxWaiting: maxWaiting,
		// $/cancelRequest ends the named request's context; a request so
		// cancelled whose handler returns an error is answered -32800.
		Cancellation: rpc.LSPCancellation(),
		Intercept:    lifecycle,
	}
}

// lifecycle refuses what LSP's life cycle does not allow: before
// initialize, requests are answered ServerNotInitialized and
// notifications dropped; after shutdown, requests are answered
// InvalidRequest and notifications dropped. exit is always let through.
func lifecycle(next rpc.ServeFunc) rpc.ServeFunc {
	return func(ctx context.Context, req *rpc.Request) (any, error) {
		if req.Method == Exit.Name() {
			return next(ctx, req)
		}
		var refuse *rpc.Error
		switch sessionOf(ctx).getPhase() {
		case phaseNew:
			if req.Method != Initialize.Name() {
				refuse = &rpc.Error{Code: CodeServerNotInitialized, Message: "the server is not initialized: initialize comes first"}
			}
		case phaseInitialized:
			if req.Method == Initialize.Name() {
				refuse = &rpc.Error{Code: rpc.CodeInvalidRequest, Message: "initialize was already received"}
			}
		case phaseShutDown:
			refuse = &rpc.Error{Code: rpc.CodeInvalidRequest, Message: "the server is shut down: only exit may follow"}
		}
		switch {
		case refuse == nil:
			return next(ctx, req)
		case req.IsNotification():
			return nil, nil
		}
		return nil, refuse
	}
}

// newRegistry returns the handlers of the server, shared by every
// connection.
func newRegistry() *rpc.Registry {
	reg := rpc.NewRegistry()
	// Handlers start in arrival order, as in a JavaScript server: a
	// notification runs alone, so a hover written after a didChange sees
	// the change, and a didChange written after a hover waits for it.
	// initialize and shutdown run alone too (Exclusive): requests written
	// before them are answered before they start, and those written after
	// them see the phase they set.
	rpc.Handle(reg, Initialize, initialize, rpc.Exclusive)
	rpc.Handle(reg, Shutdown, shutdown, rpc.Exclusive)
	rpc.HandleNotification(reg, Initialized, initialized)
	rpc.HandleNotification(reg, Exit, exit)
	rpc.HandleNotification(reg, DidOpen, didOpen)
	rpc.HandleNotification(reg, DidChange, didChange)
	rpc.HandleNotification(reg, DidClose, didClose)
	rpc.Handle(reg, HoverMethod, hover)
	rpc.Handle(reg, ExecuteCommand, executeCommand)
	rpc.Handle(reg, Add, add)
	rpc.Handle(reg, Fail, fail)
	return reg
}

func initialize(ctx context.Context, p InitializeParams) (InitializeResult, error) {
	s := sessionOf(ctx)
	s.mu.Lock()
	s.phase = phaseInitialized
	s.wantsConfig = p.Capabilities.Workspace.Configuration
	s.mu.Unlock()
	return InitializeResult{
		Capabilities: ServerCapabilities{
			TextDocumentSync:       TextDocumentSyncFull,
			HoverProvider:          true,
			ExecuteCommandProvider: ExecuteCommandOptions{Commands: []string{cmdWait}},
		},
		ServerInfo: ServerInfo{Name: serverName, Version: serverVersion},
	}, nil
}

// initialized asks the client for the "toy" section of its settings,
// once, when the client said it can answer: a call to the client from a
// notification handler, with its context, which lets the messages behind
// it go on while it waits, as an await does in a JavaScript server. What
// the client answered is logged back to it.
func initialized(ctx context.Context, _ rpc.NoParams) {
	s := sessionOf(ctx)
	s.mu.Lock()
	ask := s.wantsConfig && !s.askedConfig
	s.askedConfig = true
	s.mu.Unlock()
	if !ask {
		return
	}
	conn := rpc.ConnFromContext(ctx)
	callCtx, cancel := context.WithTimeout(ctx, configTimeout)
	defer cancel()
	res, err := Configuration.Call(callCtx, conn, ConfigurationParams{Items: []ConfigurationItem{{Section: "toy"}}})
	if err != nil || len(res) != 1 {
		LogMessage.Notify(ctx, conn, LogMessageParams{Type: MessageError, Message: fmt.Sprintf("workspace/configuration: %d items, %v", len(res), err)})
		return
	}
	LogMessage.Notify(ctx, conn, LogMessageParams{Type: MessageInfo, Message: "configuration toy: " + string(res[0])})
}

func shutdown(ctx context.Context, _ rpc.NoParams) (any, error) {
	s := sessionOf(ctx)
	s.mu.Lock()
	s.phase = phaseShutDown
	s.mu.Unlock()
	return nil, nil
}

// exit ends the connection: after shutdown, once what is queued is
// written; without it, at once. The program then ends with the session's
// ExitCode (on stdio), or serves its other connections (-listen).
func exit(ctx context.Context, _ rpc.NoParams) {
	s := sessionOf(ctx)
	s.mu.Lock()
	if s.exited {
		s.mu.Unlock()
		return
	}
	s.exited = true
	s.exitCode = 1
	if s.phase == phaseShutDown {
		s.exitCode = 0
	}
	code := s.exitCode
	s.mu.Unlock()
	conn := rpc.ConnFromContext(ctx)
	if code == 0 {
		conn.Shutdown(ctx) // from a handler: returns at once, closes once drained
	} else {
		conn.Close()
	}
}

func didOpen(ctx context.Context, p DidOpenParams) {
	d := newDocument(p.TextDocument.Text, p.TextDocument.Version)
	s := sessionOf(ctx)
	s.mu.Lock()
	s.docs[p.TextDocument.URI] = d
	s.mu.Unlock()
	publish(ctx, p.TextDocument.URI, d)
}

func didChange(ctx context.Context, p DidChangeParams) {
	s := sessionOf(ctx)
	uri := p.TextDocument.URI
	s.mu.Lock()
	d := s.docs[uri]
	if d != nil {
		d = d.apply(p.ContentChanges, p.TextDocument.Version)
		s.docs[uri] = d
	}
	s.mu.Unlock()
	if d == nil {
		LogMessage.Notify(ctx, rpc.ConnFromContext(ctx), LogMessageParams{Type: MessageError, Message: "didChange of a document not open: " + uri})
		return
	}
	publish(ctx, uri, d)
}

func didClose(ctx context.Context, p DidCloseParams) {
	s := sessionOf(ctx)
	s.mu.Lock()
	delete(s.docs, p.TextDocument.URI)
	s.mu.Unlock()
	// A closed document's diagnostics are cleared.
	PublishDiagnostics.Notify(ctx, rpc.ConnFromContext(ctx), PublishDiagnosticsParams{URI: p.TextDocument.URI, Diagnostics: []Diagnostic{}})
}

// publish sends the diagnostics of d: a warning for each TODO.
func publish(ctx context.Context, uri string, d *document) {
	diags := []Diagnostic{}
	for _, r := range d.todos() {
		diags = append(diags, Diagnostic{Range: r, Severity: SeverityWarning, Source: serverName, Message: "TODO: something is left to do"})
	}
	version := d.version
	PublishDiagnostics.Notify(ctx, rpc.ConnFromContext(ctx), PublishDiagnosticsParams{URI: uri, Version: &version, Diagnostics: diags})
}

// hover shows the word under the position, or null off a word (and in a
// document that is not open). It starts once the notifications read
// before it have yielded, and those read after it wait for it: a hover
// written right after a didChange sees the change, and one written right
// before does not.
func hover(ctx context.Context, p HoverParams) (*Hover, error) {
	d := sessionOf(ctx).doc(p.TextDocument.URI)
	if d == nil {
		return nil, nil
	}
	word, rng, ok := d.wordAt(p.Position)
	if !ok {
		return nil, nil
	}
	return &Hover{Contents: MarkupContent{Kind: "markdown", Value: "**" + word + "**"}, Range: &rng}, nil
}

// executeCommand runs toy.wait [ms]: it waits that long and answers null.
// It honours its context: when the client cancels it ($/cancelRequest),
// it returns the context's error, which LSPCancellation answers with
// RequestCancelled (-32800). It says on window/logMessage that it started,
// so a client can cancel a wait that is known to be under way.
func executeCommand(ctx context.Context, p ExecuteCommandParams) (any, error) {
	if p.Command != cmdWait {
		return nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: "unknown command: " + p.Command}
	}
	var ms float64
	if len(p.Arguments) != 1 || json.Unmarshal(p.Arguments[0], &ms) != nil || ms < 0 {
		return nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: cmdWait + " takes one argument: the milliseconds to wait"}
	}
	LogMessage.Notify(ctx, rpc.ConnFromContext(ctx), LogMessageParams{Type: MessageLog, Message: fmt.Sprintf("%s: waiting %g ms", cmdWait, ms)})
	// The wait is one the Conn cannot see: yield, so that what the client
	// writes meanwhile (shutdown, a cancellation) is not held behind it.
	rpc.Yield(ctx)
	t := time.NewTimer(time.Duration(ms * float64(time.Millisecond)))
	defer t.Stop()
	select {
	case <-t.C:
		return nil, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// add answers the sum of its params, which come by position: [1, 2, 3].
func add(_ context.Context, nums []float64) (float64, error) {
	sum := 0.0
	for _, n := range nums {
		sum += n
	}
	return sum, nil
}

// fail always fails, with an error whose data echoes the params.
func fail(_ context.Context, params json.RawMessage) (any, error) {
	if params == nil {
		params = json.RawMessage("null")
	}
	data, err := json.Marshal(map[string]any{"params": params, "hint": "toy/fail fails on purpose"})
	if err != nil {
		return nil, err
	}
	return nil, &rpc.Error{Code: CodeToyFailure, Message: "toy/fail failed as asked", Data: data}
}
