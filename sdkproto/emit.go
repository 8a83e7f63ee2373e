package sdkproto

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/linerpc/linerpc/rpc"
)

// ErrNotServing is returned by an Emitter whose Server has no connection
// yet (no request arrived and Serve was not called).
var ErrNotServing = errors.New("sdkproto: the server is not serving a connection")

// Emitter sends the four server notifications to the connection its
// Server serves. It is safe for use from any goroutine, and notifications
// are written in the order the calls were made: one mutex covers both the
// seq assignment of Append and the write, so concurrent appends to one
// session can never be written out of seq order.
//
// Once shutdown began, every method writes nothing and returns
// ErrShuttingDown, as upstream removes its subscriptions before it tears
// the runtime down.
type Emitter struct {
	s *Server

	mu       sync.Mutex
	silenced bool
	next     map[string]int64 // next seq per session
}

func newEmitter(s *Server) *Emitter {
	return &Emitter{s: s, next: map[string]int64{}}
}

// silence stops every later notification.
func (e *Emitter) silence() {
	e.mu.Lock()
	e.silenced = true
	e.mu.Unlock()
}

// send writes one notification under the lock.
func send[P any](e *Emitter, n rpc.Notification[P], params P) error {
	if e.silenced {
		return ErrShuttingDown
	}
	c := e.s.conn.Load()
	if c == nil {
		return ErrNotServing
	}
	return n.Notify(context.Background(), c, params)
}

// Append appends an event of type typ with data (encoded with
// encoding/json; a json.RawMessage is used as is) to the session's log
// and sends it: see AppendEvent.
func (e *Emitter) Append(sessionID string, typ EventType, data any) (Event, error) {
	raw, ok := data.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(data); err != nil {
			return Event{}, err
		}
	}
	return e.AppendEvent(sessionID, Event{Type: typ, Data: raw})
}

// AppendEvent assigns ev the session's next seq (contiguous per session,
// from 0) and, when ev.Time is zero, the current time in epoch
// milliseconds, then sends it as session.event. It returns the event as
// sent. A seq is consumed only when the event was written, so that the
// seqs a client sees have no gaps.
func (e *Emitter) AppendEvent(sessionID string, ev Event) (Event, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ev.Seq = e.next[sessionID]
	if ev.Time == 0 {
		ev.Time = e.now().UnixMilli()
	}
	if err := send(e, SessionEvent, SessionEventParams{SessionID: sessionID, Event: ev}); err != nil {
		return ev, err
	}
	e.next[sessionID] = ev.Seq + 1
	return ev, nil
}

// Event sends ev as it is (its seq and time are the caller's) as
// session.event, for a runtime that keeps its own session logs.
func (e *Emitter) Event(sessionID string, ev Event) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return send(e, SessionEvent, SessionEventParams{SessionID: sessionID, Event: ev})
}

// Status sends session.status: the session's agent entered status.
func (e *Emitter) Status(sessionID string, status Status) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return send(e, SessionStatus, SessionStatusParams{SessionID: sessionID, Status: status})
}

// SubagentStarted sends subagent.started: child was created with parent
// as its parent session. Send it before the child's first event.
func (e *Emitter) SubagentStarted(parentSessionID, childSessionID string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return send(e, SubagentStarted, SubagentStartedParams{ParentSessionID: parentSessionID, ChildSessionID: childSessionID})
}

// SubagentFinished sends subagent.finished for a local subagent run.
func (e *Emitter) SubagentFinished(p SubagentFinishedParams) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return send(e, SubagentFinished, p)
}

func (e *Emitter) now() time.Time {
	if e.s.opts.Now != nil {
		return e.s.opts.Now()
	}
	return time.Now()
}
