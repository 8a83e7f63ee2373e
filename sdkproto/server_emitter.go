package sdkproto

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linerpc/linerpc/rpc"
)

// Emitter sends the four server notifications to the connection its
// Server serves. It is safe for use from any goroutine.
//
// Each session has an order of its own: the notifications of one session
// (its events and statuses, and the subagent notifications whose parent it
// is) are written one at a time, in the order the calls were made, and
// the seq that AppendEvent assigns is taken and written under that
// session's turn, so concurrent appends to one session are never written
// out of seq order. Sessions do not wait for each other's turn, and no
// lock is held across a write other than that session's.
//
// Every method takes a context: it bounds the wait for the session's turn
// and for room in the connection's write queue, so that a client that
// stopped reading makes calls fail with ctx.Err() once the queue is full,
// instead of freezing the runtime. A call that returns nil has its
// notification queued, in order; one that returns an error sent nothing,
// so AppendEvent's seqs stay contiguous.
//
// Once shutdown began, every method writes nothing and returns
// ErrShuttingDown, as upstream removes its subscriptions before it tears
// the runtime down.
type Emitter struct {
	s        *Server
	silenced atomic.Bool

	mu       sync.Mutex // guards sessions only; never held across a write
	sessions map[string]*emitSession
}

// emitSession is one session's turn (a one-slot semaphore, so that waiting
// for it can honour a context) and its next seq, guarded by the turn.
type emitSession struct {
	turn chan struct{}
	next int64
}

func newEmitter(s *Server) *Emitter {
	return &Emitter{s: s, sessions: map[string]*emitSession{}}
}

// silence stops every later notification.
func (e *Emitter) silence() { e.silenced.Store(true) }

// acquire waits for sessionID's turn.
func (e *Emitter) acquire(ctx context.Context, sessionID string) (*emitSession, error) {
	e.mu.Lock()
	st := e.sessions[sessionID]
	if st == nil {
		st = &emitSession{turn: make(chan struct{}, 1)}
		e.sessions[sessionID] = st
	}
	e.mu.Unlock()
	select {
	case st.turn <- struct{}{}:
		return st, nil
	default:
	}
	select {
	case st.turn <- struct{}{}:
		return st, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (st *emitSession) release() { <-st.turn }

// send sends one notification during st's turn, then runs written (when
// not nil) with the outcome, still during the turn, and gives the turn up.
// The Conn's Notify returns once the frame is queued, in order with the
// Conn's other frames, or with ctx.Err() when ctx ended while it waited
// for room, in which case nothing was queued: so the outcome says whether
// the notification will be written, and a session's seqs stay contiguous.
func send[P any](ctx context.Context, e *Emitter, st *emitSession, n rpc.Notification[P], params P, written func(error)) error {
	defer st.release()
	var err error
	switch c := e.s.conn.Load(); {
	case e.silenced.Load():
		err = ErrShuttingDown
	case c == nil:
		err = ErrNotServing
	default:
		err = n.Notify(ctx, c, params)
	}
	if written != nil {
		written(err)
	}
	return err
}

// Append appends an event of type typ with data (encoded with
// encoding/json; a json.RawMessage is used as is) to the session's log
// and sends it: see AppendEvent.
func (e *Emitter) Append(ctx context.Context, sessionID string, typ EventType, data any) (Event, error) {
	raw, ok := data.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(data); err != nil {
			return Event{}, err
		}
	}
	return e.AppendEvent(ctx, sessionID, Event{Type: typ, Data: raw})
}

// AppendEvent assigns ev the session's next seq (contiguous per session,
// from 0) and, when ev.Time is zero, the current time in epoch
// milliseconds, then sends it as session.event. It returns the event as
// sent. A seq is used up only when the event was queued, so that the
// seqs a client sees have no gaps.
func (e *Emitter) AppendEvent(ctx context.Context, sessionID string, ev Event) (Event, error) {
	st, err := e.acquire(ctx, sessionID)
	if err != nil {
		return ev, err
	}
	ev.Seq = st.next
	if ev.Time == 0 {
		ev.Time = e.now().UnixMilli()
	}
	err = send(ctx, e, st, SessionEvent, SessionEventParams{SessionID: sessionID, Event: ev}, func(err error) {
		if err == nil {
			st.next = ev.Seq + 1
		}
	})
	return ev, err
}

// Event sends ev as it is (its seq and time are the caller's) as
// session.event, for a runtime that keeps its own session logs.
func (e *Emitter) Event(ctx context.Context, sessionID string, ev Event) error {
	st, err := e.acquire(ctx, sessionID)
	if err != nil {
		return err
	}
	return send(ctx, e, st, SessionEvent, SessionEventParams{SessionID: sessionID, Event: ev}, nil)
}

// Status sends session.status: the session's agent entered status.
func (e *Emitter) Status(ctx context.Context, sessionID string, status Status) error {
	st, err := e.acquire(ctx, sessionID)
	if err != nil {
		return err
	}
	return send(ctx, e, st, SessionStatus, SessionStatusParams{SessionID: sessionID, Status: status}, nil)
}

// SubagentStarted sends subagent.started, in the parent session's order:
// child was created with parent as its parent session. Send it before the
// child's first event.
func (e *Emitter) SubagentStarted(ctx context.Context, parentSessionID, childSessionID string) error {
	st, err := e.acquire(ctx, parentSessionID)
	if err != nil {
		return err
	}
	return send(ctx, e, st, SubagentStarted, SubagentStartedParams{ParentSessionID: parentSessionID, ChildSessionID: childSessionID}, nil)
}

// SubagentFinished sends subagent.finished for a local subagent run, in
// the parent session's order.
func (e *Emitter) SubagentFinished(ctx context.Context, p SubagentFinishedParams) error {
	st, err := e.acquire(ctx, p.ParentSessionID)
	if err != nil {
		return err
	}
	return send(ctx, e, st, SubagentFinished, p, nil)
}

func (e *Emitter) now() time.Time {
	if e.s.opts.Now != nil {
		return e.s.opts.Now()
	}
	return time.Now()
}
