package sdkproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linerpc/linerpc/rpc"
)

// This file is the runtime side of the protocol: a Server enforces what is
// the same in every deployment (the newer handshake rules, the order and
// text of the generic checks, image admission, shutdown), and hands what
// is deployment-specific (adapters, routes, agents, attachment storage) to
// a Runtime.

// Runtime is what a Go program implements to act as a DSH runtime. The
// Server calls it only after its own checks have passed, possibly from
// several goroutines at once. An error it returns is answered with -32603
// and the error's text (an *rpc.Error is sent as is), exactly as the
// upstream runtime answers a rejected promise.
type Runtime interface {
	// Initialize checks the route of an initialize request that passed the
	// generic checks (reasoningEffort, maxTokens, cwd), e.g. that an
	// adapter serves the provider and that the model supports the effort.
	// On error nothing changes; on success the Server stores req.Route and
	// hands it to every later prompt. It is the readiness barrier: return
	// once the runtime can take prompts.
	Initialize(ctx context.Context, req InitializeRequest) error
	// Prompt queues a user message on a session, creating the session
	// (with req.Route) on first use, and returns the queued message's id.
	// Notifications it emits with req.Emitter before returning (the
	// receipt, running) are written before the reply; the turn itself runs
	// after Prompt returns. ctx ends when the connection closes.
	Prompt(ctx context.Context, req PromptRequest) (SessionPromptResult, error)
	// Shutdown disposes everything the runtime owns and stops its turns;
	// the Server calls it at most once. Notifications are already
	// silenced when it runs. Returning errors.Join of several failures
	// answers "SDK server teardown failed"; one failure answers its text.
	Shutdown(ctx context.Context) error
}

// SessionOpener is implemented by a Runtime that creates sessions in a
// separate step. The Server then calls OpenSession before it inspects
// the prompt content, as upstream creates the session first (so a
// missing contentBlocks still creates it); its error answers the prompt.
type SessionOpener interface {
	OpenSession(ctx context.Context, sessionID string, route Route) error
}

// Route is what a successful initialize selected for sessions created
// afterwards. Sessions keep the route they were created with.
type Route struct {
	Cwd             string // absolute, resolved like Node's path.resolve
	Provider, Model string
	ReasoningEffort string // "" when absent: the model's default
	MaxTokens       int64  // 0 when absent: the provider's default
}

// InitializeRequest is an initialize request that passed the generic checks.
type InitializeRequest struct {
	Route  Route
	Params InitializeParams // as received, for messages that quote raw values
}

// PromptRequest is a session/prompt request that passed the generic checks.
type PromptRequest struct {
	SessionID string
	// Content is the user message content, in order, with every image
	// upload replaced by a durable image block (see AttachmentStore).
	Content []ContentBlock
	Route   Route               // of the last successful initialize
	Params  SessionPromptParams // as received
	Emitter *Emitter            // the Server's emitter
}

// AttachmentStore admits the image uploads of a prompt. Without one, a
// prompt with an upload fails with ErrNoAttachmentStore.
type AttachmentStore interface {
	// AcceptedMediaTypes lists the mime types admitted (exact match); nil
	// means DefaultMediaTypes.
	AcceptedMediaTypes() []string
	// CheckBatch applies the store's batch limits (count, total size); it
	// runs after the base64 checks and before the media type checks.
	CheckBatch(uploads []Upload) error
	// Store decodes and keeps the uploads, whose base64 and media types
	// were checked, and returns one reference per upload, in order. Its
	// errors (e.g. "Declared image type does not match its bytes.") answer
	// the prompt.
	Store(ctx context.Context, uploads []Upload) ([]ImageAttachmentRef, error)
}

// ServerOptions configure a Server. A nil *ServerOptions means defaults.
type ServerOptions struct {
	// Attachments admits image uploads; nil means the runtime has no
	// attachment store.
	Attachments AttachmentStore
	// Now is the clock of Emitter.Append; nil means time.Now.
	Now func() time.Time
	// OnDrop, when set, is called by Serve for every line of the client's
	// that the connection does not serve (not JSON, a notification, a
	// response to no call, a request read after shutdown began, params
	// that do not decode, ...), with the reason, as rpc.Options.OnDrop
	// is. Most go unanswered, as the runtime's rules have it (Drop.Reply
	// says which one was answered with an error), so this is how a
	// deployment sees them. It runs on the connection's
	// reader and must not block for long; Drop.Line is valid only during
	// the call. A program that serves with Register sets the OnDrop of
	// the rpc.Options it makes its connection with.
	OnDrop func(rpc.Drop)
}

// Server serves a Runtime over JSON-RPC with the newer upstream rules
// (docs/wire.md §5): session/prompt is refused until an initialize succeeded;
// a failed initialize changes nothing; a later initialize replaces the
// route for sessions created afterwards; after shutdown began, prompts are
// refused and notifications stop; unknown methods are answered -32603
// (ErrUnknownMethod); notifications from the client are ignored. A Server
// is meant for one connection at a time and its methods are safe for
// concurrent use.
type Server struct {
	rt      Runtime
	opts    ServerOptions
	emitter *Emitter

	initMu sync.Mutex            // serialises initialize, so the last success wins
	route  atomic.Pointer[Route] // nil until an initialize succeeded
	conn   atomic.Pointer[rpc.Conn]

	closing  atomic.Bool // shutdown began
	shutOnce sync.Once
	shutErr  error

	// done is closed once a shutdown request has succeeded.
	done     chan struct{}
	doneOnce sync.Once
}

// NewServer returns a Server for rt. Register it on a registry, or call
// Serve.
func NewServer(rt Runtime, opts *ServerOptions) *Server {
	s := &Server{rt: rt, done: make(chan struct{})}
	if opts != nil {
		s.opts = *opts
	}
	s.emitter = newEmitter(s)
	return s
}

// Emitter returns the Server's emitter, which sends notifications to the
// connection being served. It is the same value for the Server's life.
func (s *Server) Emitter() *Emitter { return s.emitter }

// Route returns the route of the last successful initialize; ok is false
// before one.
func (s *Server) Route() (r Route, ok bool) {
	if p := s.route.Load(); p != nil {
		return *p, true
	}
	return Route{}, false
}

// ShuttingDown reports whether shutdown began (a request, or the end of
// Serve's input or context).
func (s *Server) ShuttingDown() bool { return s.closing.Load() }

// Done returns a channel closed when a shutdown request has succeeded; its
// {} reply is being written. Serve returns once it has been. A program that
// serves with Register instead ends its connection with rpc.Conn.Shutdown,
// which lets the reply reach the client first.
func (s *Server) Done() <-chan struct{} { return s.done }

// Register adds the three request methods and the runtime's answer to
// unknown methods to reg. Notifications are left unhandled, so the
// connection drops them, as the runtime does. The emitter follows the
// connection of the latest request.
//
// initialize and shutdown are exclusive (rpc.Exclusive): each starts once
// what was read before it has yielded, and what is read after it waits
// until it has returned, as in the runtime, whose handlers start in
// arrival order. So a prompt written before initialize is refused ("not
// initialized") every time, and one written after a successful
// initialize is accepted every time. A prompt's handler returns once the
// message is queued; its turn runs after it, on a goroutine of the
// Runtime's, so nothing read after a prompt waits for its turn.
func (s *Server) Register(reg *rpc.Registry) {
	rpc.Handle(reg, Initialize, func(ctx context.Context, p InitializeParams) (InitializeResult, error) {
		s.enter(ctx)
		return s.initialize(ctx, p)
	}, rpc.Exclusive)
	rpc.Handle(reg, SessionPrompt, func(ctx context.Context, p SessionPromptParams) (SessionPromptResult, error) {
		s.enter(ctx)
		return s.prompt(ctx, p)
	})
	rpc.Handle(reg, Shutdown, func(ctx context.Context, _ rpc.NoParams) (ShutdownResult, error) {
		s.enter(ctx)
		if err := s.shutdown(ctx); err != nil {
			return ShutdownResult{}, err
		}
		s.doneOnce.Do(func() { close(s.done) })
		return ShutdownResult{}, nil
	}, rpc.Exclusive)
	reg.HandleUnknown(func(ctx context.Context, method string, _ json.RawMessage) (any, error) {
		return nil, unknownMethod(method)
	})
}

// enter binds the emitter to the request's connection.
func (s *Server) enter(ctx context.Context) {
	if c := rpc.ConnFromContext(ctx); c != nil {
		s.conn.Store(c)
	}
}

func (s *Server) initialize(ctx context.Context, p InitializeParams) (InitializeResult, error) {
	if err := p.Validate(); err != nil {
		return InitializeResult{}, err
	}
	cwd, err := resolveCwd(p)
	if err != nil {
		return InitializeResult{}, err
	}
	route := Route{Cwd: cwd, Provider: p.Provider, Model: p.Model}
	route.ReasoningEffort, _ = p.ReasoningEffort.String()
	route.MaxTokens, _ = p.MaxTokens.Int64()

	s.initMu.Lock()
	defer s.initMu.Unlock()
	if err := s.rt.Initialize(ctx, InitializeRequest{Route: route, Params: p}); err != nil {
		return InitializeResult{}, err
	}
	s.route.Store(&route)
	return DefaultInitializeResult(), nil
}

// resolveCwd resolves cwd as Node's path.resolve does, failing like it
// when the member received is missing or not a string (params built in Go
// have no received members).
func resolveCwd(p InitializeParams) (string, error) {
	if raw := p.Member("cwd"); p.k.raw != nil && kindOf(raw) != kindString {
		return "", fmt.Errorf("The \"paths[0]\" argument must be of type string. Received %s", nodeReceived(raw))
	}
	return filepath.Abs(p.Cwd) // "" resolves to the working directory, as in Node
}

// nodeReceived describes a value as Node's ERR_INVALID_ARG_TYPE does.
func nodeReceived(raw json.RawMessage) string {
	switch kindOf(raw) {
	case kindAbsent:
		return "undefined"
	case kindNull:
		return "null"
	case kindArray:
		return "an instance of Array"
	case kindObject:
		return "an instance of Object"
	case kindNumber:
		return "type number (" + Interpolate(raw) + ")"
	}
	return "type boolean (" + Interpolate(raw) + ")"
}

func (s *Server) prompt(ctx context.Context, p SessionPromptParams) (SessionPromptResult, error) {
	if s.closing.Load() {
		return SessionPromptResult{}, ErrShuttingDown
	}
	route, ok := s.Route()
	if !ok {
		return SessionPromptResult{}, ErrNotInitialized
	}
	if o, ok := s.rt.(SessionOpener); ok {
		if err := o.OpenSession(ctx, p.SessionID, route); err != nil {
			return SessionPromptResult{}, err
		}
	}
	content, err := s.admit(ctx, p)
	if err != nil {
		return SessionPromptResult{}, err
	}
	if s.closing.Load() { // admission may have taken a while
		return SessionPromptResult{}, ErrShuttingDown
	}
	return s.rt.Prompt(ctx, PromptRequest{
		SessionID: p.SessionID, Content: content, Route: route, Params: p, Emitter: s.emitter,
	})
}

// admit checks the content and replaces every upload, in place and in
// order, by a durable image block; the durable message never holds the
// base64 bytes.
func (s *Server) admit(ctx context.Context, p SessionPromptParams) ([]ContentBlock, error) {
	store := s.opts.Attachments
	policy := ImagePolicy{NoAttachmentStore: store == nil}
	if store != nil {
		policy.AcceptedMediaTypes = store.AcceptedMediaTypes()
		policy.CheckBatch = store.CheckBatch
	}
	uploads, err := p.Validate(policy)
	if err != nil || len(uploads) == 0 {
		return p.ContentBlocks, err
	}
	refs, err := store.Store(ctx, uploads)
	if err != nil {
		return nil, err
	}
	if len(refs) != len(uploads) {
		return nil, fmt.Errorf("attachment store returned %d references for %d images", len(refs), len(uploads))
	}
	content := slices.Clone(p.ContentBlocks)
	for i, u := range uploads {
		content[u.Index] = ImageBlock(refs[i])
	}
	return content, nil
}

// shutdown runs the shutdown task once; concurrent and later callers share
// its outcome. Notifications stop before the runtime is torn down, as
// upstream removes its subscriptions first.
func (s *Server) shutdown(ctx context.Context) error {
	s.shutOnce.Do(func() {
		s.closing.Store(true)
		s.emitter.silence()
		s.shutErr = teardownError(s.rt.Shutdown(context.WithoutCancel(ctx)))
	})
	return s.shutErr
}

// teardownError maps the runtime's teardown failures to upstream's reply:
// several give ErrTeardownFailed, one gives itself.
func teardownError(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		switch errs := j.Unwrap(); len(errs) {
		case 0:
			return nil
		case 1:
			return errs[0]
		default:
			return ErrTeardownFailed
		}
	}
	return err
}

// Serve serves the runtime on one connection reading r and writing w (a
// runtime process passes os.Stdin and os.Stdout) until one of:
//
//   - a shutdown request succeeded: Serve returns nil once the {} reply
//     has been written, and Done is closed; the process should then exit 0;
//   - the input ended: the client can send nothing more, so Serve lets
//     the requests read be answered, then shuts the runtime down as a
//     shutdown request would (notifications stop, turns in flight are cut
//     off), and returns nil. (The real runtime keeps running after EOF
//     until a signal; a Go runtime ends cleanly instead.);
//   - ctx ended: the same teardown, then it returns ctx.Err();
//   - the input failed: the same teardown, then it returns that error.
//
// In every case the requests already read are answered first (for at most
// 10 seconds), and the requests read after are not (rpc.Conn.Shutdown). A
// failed shutdown request does not end Serve (upstream does not exit then
// either). Serve does not wait for a Read blocked in r that cannot be
// interrupted (an os.Stdin pipe): that goroutine ends when r yields. Serve
// must not be called twice.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	reg := rpc.NewRegistry()
	s.Register(reg)
	conn := rpc.NewConn(r, w, &rpc.Options{Handler: reg, OnDrop: s.opts.OnDrop})
	s.conn.Store(conn)
	conn.Start()

	// Answer what was read (the shutdown request among it), then close.
	drain, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
	defer cancel()
	var err error
	select {
	case <-s.done:
		conn.Shutdown(drain)
	case <-conn.Done():
		if e := conn.Err(); !errors.Is(e, rpc.ErrInputEnded) && !errors.Is(e, rpc.ErrClosed) {
			err = e
		}
		// The requests read before the end are answered first, as they
		// would have been had the input gone on.
		conn.Shutdown(drain)
		s.shutdown(ctx)
	case <-ctx.Done():
		err = ctx.Err()
		s.shutdown(ctx)
		conn.Shutdown(drain)
	}
	return err
}

// drainTimeout bounds how long Serve waits, at its end, for handlers still
// running to answer.
const drainTimeout = 10 * time.Second
