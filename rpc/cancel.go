package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/linerpc/linerpc/internal/wire"
)

// CancelPolicy is how requests are cancelled across the wire: the
// notification that cancels a request, both ways, and what becomes of a
// request the peer cancelled. JSON-RPC 2.0 has no cancellation of its own;
// MCPCancellation and LSPCancellation return the policies of the Model
// Context Protocol and of the Language Server Protocol, and a protocol of
// one's own fills in the fields. A Conn uses a policy only when
// Options.Cancellation is set; without one, nothing on the wire changes
// (the DeepSeek Harness peers have no cancellation).
//
// With a policy, a Conn
//   - ends the context of the peer's request that a cancel notification
//     names (its cause is ErrPeerCancelled, with the peer's reason); a
//     request still waiting for a handler slot is not run, and is
//     answered with Reply at once, or not at all; a notification naming no
//     request that is running or waiting (unknown, or finished) is ignored,
//     and reported as DropUnmatchedCancel;
//   - sends a cancel notification when the context of one of its own
//     calls ends before the response came, once, for a request the peer
//     may have read (one that was never written is just withdrawn), and
//     forgets the call: a late response is dropped.
//
// Ids match as responses do (docs/wire.md §2.4): a string never matches a
// number, and numbers match by value (1, 1.0 and 1e0 alike), as the
// JavaScript peers compare them.
//
// The policy's notification is handled by the Conn: a handler registered
// for its method is not called.
type CancelPolicy struct {
	// Method is the method of the cancel notification.
	Method string

	// ParseParams reads the params of a cancel notification received (the
	// raw JSON, nil when absent): the id of the request it cancels, as raw
	// JSON, and the reason, if the protocol carries one. An error drops
	// the notification (DropInvalidParams).
	ParseParams func(params json.RawMessage) (id json.RawMessage, reason string, err error)

	// Params returns the params of the cancel notification sent for the
	// call whose request had the id given (raw JSON) and whose context
	// ended with cause (context.Cause).
	Params func(id json.RawMessage, cause error) any

	// Reply answers a cancelled request whose handler returned an error
	// (or that never ran); a result its handler returned anyway is sent.
	// Nil means that a cancelled request is not answered at all, its
	// result neither.
	Reply *Error
}

// CodeRequestCancelled answers, under LSPCancellation, a request that the
// peer cancelled (LSP's RequestCancelled).
const CodeRequestCancelled Code = -32800

// MCPCancellation returns the cancellation of the Model Context Protocol:
// the notification "notifications/cancelled" with params
// {"requestId": id, "reason": text} (the reason may be absent), and a
// cancelled request gets no response (the receiver should not respond).
// The reason sent is the text of the call's context.Cause.
func MCPCancellation() *CancelPolicy {
	return &CancelPolicy{
		Method: "notifications/cancelled",
		ParseParams: func(params json.RawMessage) (json.RawMessage, string, error) {
			m, err := members(params)
			if err != nil {
				return nil, "", err
			}
			var reason string
			if r, ok := m["reason"]; ok && wire.KindOf(r) == wire.String {
				decode(r, &reason)
			}
			return m["requestId"], reason, nil
		},
		Params: func(id json.RawMessage, cause error) any {
			return mcpCancelled{RequestID: id, Reason: cause.Error()}
		},
	}
}

type mcpCancelled struct {
	RequestID json.RawMessage `json:"requestId"`
	Reason    string          `json:"reason,omitempty"`
}

// LSPCancellation returns the cancellation of the Language Server
// Protocol: the notification "$/cancelRequest" with params {"id": id},
// and a cancelled request is still answered: with its handler's result
// when it returned one, and with CodeRequestCancelled otherwise.
func LSPCancellation() *CancelPolicy {
	return &CancelPolicy{
		Method: "$/cancelRequest",
		ParseParams: func(params json.RawMessage) (json.RawMessage, string, error) {
			m, err := members(params)
			if err != nil {
				return nil, "", err
			}
			return m["id"], "", nil
		},
		Params: func(id json.RawMessage, cause error) any {
			return lspCancelRequest{ID: id}
		},
		Reply: &Error{Code: CodeRequestCancelled, Message: "request cancelled"},
	}
}

type lspCancelRequest struct {
	ID json.RawMessage `json:"id"`
}

// members decodes params that must be an object, matching member names
// exactly (as the envelope's are).
func members(params json.RawMessage) (map[string]json.RawMessage, error) {
	if wire.KindOf(params) != wire.Object {
		return nil, errors.New("rpc: cancel params are not an object")
	}
	var m map[string]json.RawMessage
	if err := decodeAny(params, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// ErrPeerCancelled is the cause (context.Cause) of a request handler's
// context that the peer's cancel notification ended (see CancelPolicy). It
// is wrapped with the peer's reason when the peer gave one.
var ErrPeerCancelled = errors.New("rpc: request cancelled by the peer")

// idKey is the key by which a request of the peer's matches the id
// of a cancel notification: the string's content for a string id, the
// number's value for a number (as JavaScript reads it).
type idKey struct {
	str      string
	num      float64
	isString bool
}

// keyOf returns the key of the raw id; ok is false for anything but a
// string or a number, which no request has as its id.
func keyOf(raw []byte) (key idKey, ok bool) {
	switch wire.KindOf(raw) {
	case wire.String:
		if s, ok := wire.StringContent(raw); ok {
			return idKey{str: string(s), isString: true}, true
		}
		return idKey{str: string(wire.AppendUnquote(nil, raw)), isString: true}, true
	case wire.Number:
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return idKey{}, false
		}
		if f == 0 {
			f = 0 // -0 is 0
		}
		return idKey{num: f}, true
	}
	return idKey{}, false
}

// track records the admitted request rc among those a cancel notification
// may name. Called in update, with a policy.
func (s *connState) track(rc *requestContext) {
	if s.requests == nil {
		s.requests = make(map[idKey]*requestContext)
	}
	rc.next = s.requests[rc.key]
	s.requests[rc.key] = rc
}

// forget removes rc from the requests a cancel notification may name, if
// it is among them. Called in update.
func (s *connState) forget(rc *requestContext) {
	for p := s.requests[rc.key]; p != nil; p = p.next {
		if p != rc {
			continue
		}
		// Unlink rc: rebuild the chain without it (chains are one request
		// long unless the peer reuses ids).
		var head *requestContext
		for q := s.requests[rc.key]; q != nil; {
			next := q.next
			if q != rc {
				q.next, head = head, q
			}
			q = next
		}
		if head == nil {
			delete(s.requests, rc.key)
		} else {
			s.requests[rc.key] = head
		}
		rc.next = nil
		return
	}
}

// handleCancel acts on the policy's cancel notification with params,
// read on the read loop.
func (c *Conn) handleCancel(params json.RawMessage, line []byte, size int64) {
	p := c.cancellation
	id, reason, err := p.ParseParams(params)
	if err != nil {
		c.drop(Drop{Reason: DropInvalidParams, Line: line, Size: size, Method: p.Method, Err: err})
		return
	}
	key, ok := keyOf(id)
	if !ok {
		c.drop(Drop{Reason: DropUnmatchedCancel, Line: line, Size: size, Method: p.Method})
		return
	}
	cause := ErrPeerCancelled
	if reason != "" {
		cause = fmt.Errorf("%w: %s", ErrPeerCancelled, reason)
	}
	var found bool
	var running, settled []*requestContext
	c.update(func(s *connState) {
		for rc := s.requests[key]; rc != nil; rc = rc.next {
			found = true
			if rc.cancelled != nil {
				continue
			}
			rc.cancelled = cause
			if rc.waiting {
				s.waiting.remove(rc)
				settled = append(settled, rc)
			} else {
				running = append(running, rc)
			}
		}
		for _, rc := range settled {
			s.forget(rc)
		}
	})
	if !found {
		c.drop(Drop{Reason: DropUnmatchedCancel, Line: line, Size: size, Method: p.Method})
		return
	}
	for _, rc := range running {
		rc.end(cause)
	}
	for _, rc := range settled {
		if p.Reply != nil {
			c.replyError(rc.req.ID, p.Reply, false)
		}
		rc.t.discard()
	}
}

// sendCancel sends the policy's cancel notification for this side's call
// id, abandoned with cause. It does not wait for room in the write queue:
// the frame is small, and follows a request that left the queue.
func (c *Conn) sendCancel(id uint64, cause error) {
	p := c.cancellation
	if cause == nil {
		cause = context.Canceled
	}
	raw := strconv.AppendUint(nil, id, 10)
	f := getFrame()
	f.notification(p.Method)
	f.raw(`,"params":`)
	if err := appendValue(f, p.Params(raw, cause)); err != nil {
		putFrame(f)
		c.logError("encoding the cancel notification failed", p.Method, err)
		return
	}
	f.end()
	if err := c.out.push(c, f); err != nil {
		putFrame(f)
	}
}
