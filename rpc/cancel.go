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
// Ids match as responses do, by one rule (docs/wire.md §2.4): a string
// never matches a number, strings match by content, and numbers by their
// exact value (1, 1.0 and 1e0 alike; 2^53 and 2^53+1 apart).
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
			b := append([]byte(`{"requestId":`), id...)
			if reason := cause.Error(); reason != "" {
				b = wire.AppendJSString(append(b, `,"reason":`...), reason)
			}
			return json.RawMessage(append(b, '}'))
		},
	}
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
			return json.RawMessage(append(append([]byte(`{"id":`), id...), '}'))
		},
		Reply: &Error{Code: CodeRequestCancelled, Message: "request cancelled"},
	}
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

// cancelling is a CancelPolicy at work in a Conn. It acts on frames
// outside the line: it claims the policy's notification method, whose
// frames the reader hands it as they are read, before anything is queued
// (preempt), as every JavaScript peer handles a cancellation at once; and
// it learns of this side's calls that their context abandoned after their
// request was written (abandoned). It acts through two primitives of the
// Conn's: retire, which ends a request of the peer's, and the frames it
// sends (fromPolicy). The line knows nothing else of it.
type cancelling struct {
	p CancelPolicy
}

func newCancelling(p CancelPolicy) *cancelling {
	if p.Method == "" || p.ParseParams == nil || p.Params == nil {
		panic("rpc: a CancelPolicy needs Method, ParseParams and Params")
	}
	return &cancelling{p: p}
}

// claims reports whether x takes notifications of method.
func (x *cancelling) claims(method []byte) bool { return x != nil && string(method) == x.p.Method }

// preempt acts on a cancel notification, with its params (valid JSON, nil
// when absent; valid during the call only). What it returns is reported
// as the notification's drop: 0 when it took it.
func (x *cancelling) preempt(c *Conn, params json.RawMessage) (DropReason, error) {
	id, reason, err := x.p.ParseParams(params)
	if err != nil {
		return DropInvalidParams, err
	}
	k := wire.KindOf(id)
	if k != wire.String && k != wire.Number {
		return DropUnmatchedCancel, nil
	}
	cause := ErrPeerCancelled
	if reason != "" {
		cause = fmt.Errorf("%w: %s", ErrPeerCancelled, reason)
	}
	if !c.retire(wire.KeyOfID(wire.Value{Raw: id, Kind: k}), cause) {
		return DropUnmatchedCancel, nil
	}
	return 0, nil
}

// abandoned learns that the call with id was forgotten because its
// context ended with cause, after its request was written: the peer is
// sent the policy's notification.
func (x *cancelling) abandoned(c *Conn, id uint64, cause error) {
	if cause == nil {
		cause = context.Canceled
	}
	raw := strconv.AppendUint(nil, id, 10)
	f := c.newFrame()
	f.notification(x.p.Method)
	f.raw(`,"params":`)
	if err := appendValue(f, x.p.Params(raw, cause)); err != nil {
		putFrame(f)
		c.logError("encoding the cancel notification failed", x.p.Method, err)
		return
	}
	c.seal(f)
	if _, err := c.send(f, fromPolicy, nil); err != nil {
		putFrame(f)
	}
}

// answer returns the answer of a request the peer cancelled, whose
// handler returned the response f or the error err: nil and nil when it
// is not answered (the policy has no Reply); the result when the handler
// returned one and the policy has a Reply; else the Reply.
func (x *cancelling) answer(f *frame, err error) (*frame, error) {
	switch {
	case x.p.Reply == nil:
		putFrame(f)
		return nil, nil
	case err == nil:
		return f, nil
	}
	putFrame(f)
	return nil, x.p.Reply
}

// retire ends every request of the peer's in hand whose id has the match
// key id (wire.KeyOfID: the same rule by which responses match calls): its
// context ends with cause, and it is answered as the policy says (see
// answer). A request still waiting for its turn never runs: it is taken
// out of the line and answered at once. It reports whether any request had
// that id. Called by the reader.
func (c *Conn) retire(id wire.IDKey, cause error) bool {
	var same, ended []*job
	c.lock()
	s := &c.st
	for j := s.line.byID[id]; j != nil; j = j.sameID {
		same = append(same, j) // first: removing one may change the chain
	}
	for _, j := range same {
		if j.retired.CompareAndSwap(false, true) {
			ended = append(ended, j)
			if c.remove(s, j) {
				c.answerNow(s, j, c.preempt.p.Reply)
			}
		}
	}
	c.unlock()
	for _, j := range ended {
		j.end(cause)
	}
	return len(same) > 0
}
