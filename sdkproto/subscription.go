package sdkproto

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync"

	"github.com/linerpc/linerpc/internal/wire"
)

// Notification is one notification from the runtime, as received: any
// method, known or not, with params normalised to an object as the
// upstream transport does (a missing or non-object params is {}).
//
// The Notifications a Client hands to its subscriptions share the bytes of
// Params, and so do the values decoded from them (SessionEvent, ...),
// which trust them as the Client checked them: never modify those bytes
// in place (replace Params with a copy to change it). Decoding bytes
// changed in place gives values that make no sense, and encoding such
// values may panic.
type Notification struct {
	Method string
	Params json.RawMessage
	// Index is the notification's position among all the Client received,
	// from 1; it orders notifications seen through different subscriptions.
	Index uint64
	// received is Params as the Client received them: valid JSON, which
	// rpc checked as it read the frame. While Params is that slice, what
	// reads it (the decoders, SessionID, TextDelta) does not check it
	// again.
	received json.RawMessage
}

// checked reports whether n.Params are bytes the Client received, valid,
// and small enough for the members of their objects to be located by
// offsets (wire.MaxSpanned; larger ones are read as any others are).
func (n Notification) checked() bool {
	return sameBytes(n.Params, n.received) && len(n.Params) <= wire.MaxSpanned
}

// member returns the value of the params member key (the last, when
// duplicated), or nil.
func (n Notification) member(key string) json.RawMessage {
	if n.checked() {
		return get(n.Params, key)
	}
	return dig(n.Params, key)
}

func decodeNotification[P any, PP interface {
	*P
	json.Unmarshaler
	validDecoder
}](n Notification, want string) (P, error) {
	var p P
	if n.Method != want {
		return p, fmt.Errorf("%w: %s, not %s", ErrNotificationMethod, n.Method, want)
	}
	if n.checked() {
		return p, PP(&p).decodeValid(n.Params)
	}
	return p, PP(&p).UnmarshalJSON(n.Params)
}

// SessionEvent decodes a session.event notification (leniently: check the
// envelope with CheckEnvelope).
func (n Notification) SessionEvent() (SessionEventParams, error) {
	return decodeNotification[SessionEventParams](n, SessionEvent.Name())
}

// SessionStatus decodes a session.status notification.
func (n Notification) SessionStatus() (SessionStatusParams, error) {
	return decodeNotification[SessionStatusParams](n, SessionStatus.Name())
}

// SubagentStarted decodes a subagent.started notification.
func (n Notification) SubagentStarted() (SubagentStartedParams, error) {
	return decodeNotification[SubagentStartedParams](n, SubagentStarted.Name())
}

// SubagentFinished decodes a subagent.finished notification.
func (n Notification) SubagentFinished() (SubagentFinishedParams, error) {
	return decodeNotification[SubagentFinishedParams](n, SubagentFinished.Name())
}

// SessionID returns params.sessionId when it is a string.
func (n Notification) SessionID() (string, bool) { return n.str("sessionId") }

// TextDelta returns the text of a session.event carrying an
// assistant/chunk text-delta, for rendering a reply as it streams.
func (n Notification) TextDelta() (string, bool) {
	if n.Method != SessionEvent.Name() {
		return "", false
	}
	ev := n.member("event")
	if t, _ := memberString(get(ev, "type")); t != string(EventAssistantChunk) {
		return "", false
	}
	chunk := get(get(ev, "data"), "chunk")
	if t, _ := memberString(get(chunk, "type")); t != string(ChunkTextDelta) {
		return "", false
	}
	return memberString(get(chunk, "text"))
}

// str returns the member key of the params when it is a string.
func (n Notification) str(key string) (string, bool) { return memberString(n.member(key)) }

// received is the Notification of a frame rpc read: params are the
// handler's own copy, checked.
func received(method string, params json.RawMessage) Notification {
	if params = bytes.TrimSpace(params); kindOf(params) == kindObject {
		params = params[:len(params):len(params)] // shared: an append must copy
		return Notification{Method: method, Params: params, received: params}
	}
	return Notification{Method: method, Params: json.RawMessage(`{}`)}
}

// intake is the handler of every notification: the connection runs it
// for one notification at a time, in arrival order (each in its turn). It
// records lineage first (so that a subscription sees the edge that brings
// a child into its tree), then offers the notification to each
// subscription, in arrival order; it never blocks.
func (c *Client) intake(_ context.Context, method string, params json.RawMessage) {
	n := received(method, params)
	c.mu.Lock()
	c.count++
	n.Index = c.count
	if method == SubagentStarted.Name() {
		parent, okP := n.str("parentSessionId")
		child, okC := n.str("childSessionId")
		// Upstream records only edges between two distinct non-empty ids.
		if okP && okC && parent != "" && child != "" && parent != child {
			c.lineage.add(child, parent)
		}
	}
	subs := c.subs
	c.mu.Unlock()
	for _, s := range subs {
		s.offer(n)
	}
}

// Subscription is a queue of the notifications that passed its filter,
// from its creation on, in arrival order. The Client fills it without ever
// waiting for the reader. Close it when done: it stops receiving and frees
// its queue.
type Subscription struct {
	c      *Client
	filter func(Notification) bool
	tree   *sessionTree // of SubscribeSessionTree; touched by intake only

	mu     sync.Mutex
	queue  []Notification
	failed error         // set once: filter panic or overflow
	closed bool          // Close was called
	signal chan struct{} // holds a token while the queue may be non-empty
	done   chan struct{} // closed by Close
}

// Subscribe returns a subscription to the notifications for which filter
// returns true (all of them when filter is nil). The filter runs on the
// notification's handler and must be quick; if it panics, only this
// subscription fails.
// A subscription made after Close or after the runtime's output ended
// receives nothing and its Next fails at once.
func (c *Client) Subscribe(filter func(Notification) bool) *Subscription {
	s := newSubscription(c, filter)
	c.mu.Lock()
	c.subs = append(c.subs[:len(c.subs):len(c.subs)], s)
	c.mu.Unlock()
	return s
}

// SubscribeSessionTree returns a subscription to the notifications of the
// session tree rooted at root (docs/wire.md §6.2): subagent.started and
// subagent.finished whose parent is root or a descendant of it, or whose
// child is root; and any other method whose params.sessionId is root or a
// descendant. Descendants are known from the subagent.started edges the
// Client has seen, before or after the subscription was made.
//
// The subscription knows the tree's members as a set that intake
// keeps current, so scoping costs the same for any depth; it is built
// from the Client's lineage when the subscription is made (which costs
// time linear in the lineage, at most ClientOptions.MaxLineage edges). A
// child re-parented out of the tree leaves it, but its own descendants
// stay until they are re-parented too.
func (c *Client) SubscribeSessionTree(root string) *Subscription {
	t := &sessionTree{root: root}
	s := newSubscription(c, t.filter)
	s.tree = t
	c.mu.Lock()
	t.members = c.lineage.descendants(root)
	c.subs = append(c.subs[:len(c.subs):len(c.subs)], s)
	c.mu.Unlock()
	return s
}

func newSubscription(c *Client, filter func(Notification) bool) *Subscription {
	return &Subscription{c: c, filter: filter, signal: make(chan struct{}, 1), done: make(chan struct{})}
}

// forget drops a child the lineage forgot from the trees of the
// subscriptions. Called by intake with c.mu held.
func (c *Client) forget(child string) {
	for _, s := range c.subs {
		if s.tree != nil && s.tree.root != child {
			delete(s.tree.members, child)
		}
	}
}

// offer queues n if the filter accepts it.
func (s *Subscription) offer(n Notification) {
	accept, err := s.accepts(n)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.failed != nil || (!accept && err == nil) {
		return
	}
	switch {
	case err != nil:
		s.failed = err
	case s.c.opts.MaxQueued > 0 && len(s.queue) >= s.c.opts.MaxQueued:
		s.failed = ErrSubscriptionOverflow
	default:
		s.queue = append(s.queue, n)
	}
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

func (s *Subscription) accepts(n Notification) (ok bool, err error) {
	if s.filter == nil {
		return true, nil
	}
	defer func() {
		if p := recover(); p != nil {
			ok, err = false, fmt.Errorf("sdkproto: subscription filter panicked: %v", p)
		}
	}()
	return s.filter(n), nil
}

// TryNext returns the next queued notification without waiting.
func (s *Subscription) TryNext() (Notification, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.popLocked()
}

func (s *Subscription) popLocked() (Notification, bool) {
	if s.closed || len(s.queue) == 0 {
		return Notification{}, false
	}
	n := s.queue[0]
	s.queue[0] = Notification{}
	s.queue = s.queue[1:]
	if len(s.queue) == 0 {
		s.queue = nil // let the backing array go
	}
	return n, true
}

// Next returns the next notification, waiting for one. Queued
// notifications are returned even after the runtime's output ended; then
// Next fails with a *TransportClosedError (cause ErrRuntimeClosed, or
// ErrClientClosed after Close). It fails with ErrSubscriptionClosed after
// Close of the subscription, with the filter's panic or
// ErrSubscriptionOverflow once the queue is drained, and with ctx.Err().
func (s *Subscription) Next(ctx context.Context) (Notification, error) {
	for {
		s.mu.Lock()
		n, ok := s.popLocked()
		closed, failed := s.closed, s.failed
		s.mu.Unlock()
		switch {
		case closed:
			return Notification{}, ErrSubscriptionClosed
		case ok:
			return n, nil
		case failed != nil:
			return Notification{}, failed
		}
		select {
		case <-s.signal:
			continue
		case <-s.done:
			continue
		case <-ctx.Done():
			return Notification{}, ctx.Err()
		case <-s.c.conn.Done():
		}
		// The end of the input takes its turn after every notification
		// read before it was handled, so one last look at the queue
		// suffices.
		s.mu.Lock()
		n, ok = s.popLocked()
		s.mu.Unlock()
		if ok {
			return n, nil
		}
		return Notification{}, s.c.endedErr()
	}
}

// All returns an iterator over the notifications, as Next returns them;
// it ends after yielding the first error (with a zero Notification) or
// when the loop breaks. It does not close the subscription.
func (s *Subscription) All(ctx context.Context) iter.Seq2[Notification, error] {
	return func(yield func(Notification, error) bool) {
		for {
			n, err := s.Next(ctx)
			if !yield(n, err) || err != nil {
				return
			}
		}
	}
}

// Close ends the subscription: it receives nothing more, its queue is
// dropped and Next fails with ErrSubscriptionClosed. It is idempotent.
func (s *Subscription) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed, s.queue = true, nil
	close(s.done)
	s.mu.Unlock()
	c := s.c
	c.mu.Lock()
	subs := make([]*Subscription, 0, len(c.subs))
	for _, o := range c.subs {
		if o != s {
			subs = append(subs, o)
		}
	}
	c.subs = subs
	c.mu.Unlock()
}

// endedErr is the error of a subscription whose connection ended.
func (c *Client) endedErr() error {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return c.transportErr(ErrClientClosed, false)
	}
	return c.transportErr(fmt.Errorf("%w: %w", ErrRuntimeClosed, c.conn.Err()), true)
}
