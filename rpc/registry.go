package rpc

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/linerpc/linerpc/internal/wire"
)

// Registry maps method names to handlers. It is safe for concurrent use,
// may be shared by many connections, and may gain handlers while they run.
// Registering a name twice is a programming error and panics, as
// http.ServeMux does.
type Registry struct {
	mu      sync.Mutex                   // serialises registrations
	entries atomic.Pointer[registryView] // copied on write: lookups take no lock
}

// registryView is an immutable snapshot of a Registry.
type registryView struct {
	methods             map[string]*entry
	unknown             func(ctx context.Context, method string, params json.RawMessage) (any, error)
	unknownNotification func(ctx context.Context, method string, params json.RawMessage)
}

// entry knows how to decode one method's frames into tasks. The functions
// run on the reader; params aliases the frame, so they decode it before
// they return. Their errors are those of decodeParamsOf.
type entry struct {
	name         string
	info         MethodInfo // what Registry.Methods reports
	exclusive    bool       // registered Exclusive: it runs alone
	async        bool       // registered Async: it yields as it starts
	request      func(params paramsIn) (task, error)
	notification func(params paramsIn) (task, error)
}

// decoder returns the function that decodes a frame of class for e, or nil
// when e has no handler of that class (or e is nil).
func (e *entry) decoder(class wire.Class) func(paramsIn) (task, error) {
	switch {
	case e == nil:
		return nil
	case class == wire.Request:
		return e.request
	case class == wire.Notification:
		return e.notification
	}
	return nil
}

// nameOr returns the name of e's method, or method when e is nil (an
// unknown method), so that a registered name costs no allocation.
func (e *entry) nameOr(method []byte) string {
	if e != nil {
		return e.name
	}
	return string(method)
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	r := &Registry{}
	r.entries.Store(&registryView{methods: map[string]*entry{}})
	return r
}

func (r *Registry) view() *registryView {
	if r == nil {
		return nil
	}
	return r.entries.Load()
}

// update applies change to a copy of the current view and publishes it.
func (r *Registry) update(change func(v *registryView)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.entries.Load()
	v := &registryView{
		methods:             make(map[string]*entry, len(old.methods)+1),
		unknown:             old.unknown,
		unknownNotification: old.unknownNotification,
	}
	for k, e := range old.methods {
		v.methods[k] = e
	}
	change(v)
	r.entries.Store(v)
}

func (r *Registry) add(name string, e *entry) {
	if r == nil {
		panic(fmt.Sprintf("rpc: handler for %q registered on a nil *Registry (use NewRegistry)", name))
	}
	r.update(func(v *registryView) {
		if _, dup := v.methods[name]; dup {
			panic(fmt.Sprintf("rpc: method %q registered twice", name))
		}
		v.methods[name] = e
	})
}

// HandleOption sets how a handler takes its turn in the line (see
// "Order" in the package documentation). The options are Exclusive and
// Async; they may not be combined.
type HandleOption uint8

const (
	// Exclusive makes a request run alone, as a notification does: it
	// starts once everything read before it has yielded, and nothing read
	// after it starts until it yields (returns, calls its peer with its
	// context, or calls Yield). It is how a handshake ("initialize") or a
	// "shutdown" reads as it does in a JavaScript server: a request
	// written before it is served before it, and one written after it
	// sees what it did. For requests only.
	Exclusive HandleOption = 1 << iota
	// Async makes a handler yield as it starts: it still starts in its
	// turn, but nothing behind it waits for it, as with jsonrpc2.Async in
	// x/tools. For a handler that does not depend on what follows it, and
	// that waits or works long (a timer, a long computation, a stream).
	// One exception, the cap of handlers alive (2 × MaxConcurrentRequests):
	// an Async notification that starts past it holds the line until it
	// returns, as any notification's yield is refused there, so one that
	// waits for a later message must not count on the cap being far.
	Async
)

// options returns the options opts set, refusing a misuse with a panic at
// the registration that made it.
func options(name string, notification bool, opts []HandleOption) (exclusive, async bool) {
	var o HandleOption
	for _, x := range opts {
		o |= x
	}
	switch {
	case o&^(Exclusive|Async) != 0:
		panic(fmt.Sprintf("rpc: %q registered with an unknown HandleOption %d", name, o))
	case o == Exclusive|Async:
		panic(fmt.Sprintf("rpc: %q registered both Exclusive and Async: an exclusive handler holds what follows it, an Async one holds nothing", name))
	case notification && o&Exclusive != 0:
		panic(fmt.Sprintf("rpc: notification %q registered Exclusive: a notification runs alone already", name))
	}
	return o&Exclusive != 0, o&Async != 0
}

// Handle registers h as the handler of the request method m. The params of
// each request are decoded into P as it is read; h then runs on a
// goroutine of the Conn once its turn has come (see "Order" in the
// package documentation, and opts: Exclusive, Async), with a context of
// the request's own (see RequestFromContext) that ends when the peer
// cancels the request (Options.Cancellation), when Close ends the
// connection, or when h returns, and its result is sent as the response.
// A returned *Error is sent as is; any other error is sent as
// CodeInternalError with the error's text. Params that do not decode into
// P are answered with CodeInvalidParams without calling h. A panic in h,
// or in the encoding of its result, is recovered and answered with
// CodeInternalError; the connection lives on.
func Handle[P, R any](reg *Registry, m Method[P, R], h func(ctx context.Context, params P) (R, error), opts ...HandleOption) {
	if h == nil {
		panic(fmt.Sprintf("rpc: nil handler for method %q", m.name))
	}
	exclusive, async := options(m.name, false, opts)
	pool := &sync.Pool{New: func() any { return new(handlerTask[P, R]) }}
	reg.add(m.name, &entry{name: m.name, info: m.Info(), exclusive: exclusive, async: async, request: func(params paramsIn) (task, error) {
		t := pool.Get().(*handlerTask[P, R])
		if err := decodeParamsOf(params, &t.p, m.omitParams); err != nil {
			t.p = *new(P)
			pool.Put(t)
			return nil, err
		}
		t.h, t.omit, t.pool, t.method = h, m.omitParams, pool, m.name
		return t, nil
	}})
}

// HandleNotification registers h as the handler of the notification n.
// A notification runs alone, in its turn (see "Order" in the package
// documentation): it starts once everything read before it has yielded,
// and nothing read after it starts until it yields (returns, calls its
// peer with its context, or calls Yield), as in a JavaScript peer. With
// Async, it yields as it starts (not past the cap of handlers alive: see
// Async). A handler may call its peer, with its
// context (or one derived from it): that is a yield, and the response is
// its turn again. A call made with another context is a wait the Conn
// cannot see: the response to it waits for this very handler, which
// holds the line, so such a handler must Yield first. Its context is the
// Conn's (Close ends it), and RequestFromContext reports the
// notification. The params of a notification are decoded into P as it is
// read; params that do not decode drop the notification (reported as
// DropInvalidParams). A panic in h is recovered and logged.
func HandleNotification[P any](reg *Registry, n Notification[P], h func(ctx context.Context, params P), opts ...HandleOption) {
	if h == nil {
		panic(fmt.Sprintf("rpc: nil handler for notification %q", n.name))
	}
	_, async := options(n.name, true, opts)
	handler := func(ctx context.Context, p P) (struct{}, error) {
		h(ctx, p)
		return struct{}{}, nil
	}
	pool := &sync.Pool{New: func() any { return new(handlerTask[P, struct{}]) }}
	reg.add(n.name, &entry{name: n.name, info: n.Info(), async: async, notification: func(params paramsIn) (task, error) {
		t := pool.Get().(*handlerTask[P, struct{}])
		if err := decodeParamsOf(params, &t.p, n.omitParams); err != nil {
			t.p = *new(P)
			pool.Put(t)
			return nil, err
		}
		t.h, t.omit, t.note, t.pool, t.method = handler, n.omitParams, true, pool, n.name
		return t, nil
	}})
}

// HandleUnknown registers h as the handler of requests whose method has no
// handler of its own; without it they are answered with CodeMethodNotFound
// and the message "method not found: <method>". h receives the raw params
// (nil when absent): valid JSON, checked as the frame was read, in a copy
// of its own that h may keep. It runs like a request handler; its result
// is encoded with JSON and sent, and its error is answered as Handle
// describes.
func (r *Registry) HandleUnknown(h func(ctx context.Context, method string, params json.RawMessage) (any, error)) {
	if r == nil {
		panic("rpc: HandleUnknown on a nil *Registry (use NewRegistry)")
	}
	if h == nil {
		panic("rpc: nil handler for unknown methods")
	}
	r.update(func(v *registryView) {
		if v.unknown != nil {
			panic("rpc: handler for unknown methods registered twice")
		}
		v.unknown = h
	})
}

// HandleUnknownNotification registers h as the handler of notifications
// whose method has no handler of its own; without it they are dropped
// (reported as DropUnhandledNotification). Its params are as HandleUnknown
// describes. It takes its turn as the other notification handlers do
// (see HandleNotification).
func (r *Registry) HandleUnknownNotification(h func(ctx context.Context, method string, params json.RawMessage)) {
	if r == nil {
		panic("rpc: HandleUnknownNotification on a nil *Registry (use NewRegistry)")
	}
	if h == nil {
		panic("rpc: nil handler for unknown notifications")
	}
	r.update(func(v *registryView) {
		if v.unknownNotification != nil {
			panic("rpc: handler for unknown notifications registered twice")
		}
		v.unknownNotification = h
	})
}

// Handles reports whether r has a handler of its own for method, a request
// or a notification (the handlers of unknown methods do not count). It
// lets a caller that must own a method check before registering, rather
// than recover the panic of a second registration.
func (r *Registry) Handles(method string) bool {
	v := r.view()
	return v != nil && v.methods[method] != nil
}

// HandlesUnknownNotifications reports whether r has a handler of
// notifications without one of their own (HandleUnknownNotification).
func (r *Registry) HandlesUnknownNotifications() bool {
	v := r.view()
	return v != nil && v.unknownNotification != nil
}
