package rpc

import (
	"encoding/json"

	"github.com/linerpc/linerpc/internal/wire"
)

// A preempter is a protocol's rule that acts on frames outside the core:
// it claims notification methods, and sees each such notification on the
// read loop before anything is queued, in place of a handler; and it
// learns of this side's calls that their context abandoned after their
// request was written. It acts through two primitives of the Conn's:
// retire, which ends a request of the peer's, and the frames it sends
// (fromPolicy). The core knows nothing else of it. CancelPolicy is the one
// there is (cancel.go).
type preempter interface {
	// claims reports whether the preempter takes notifications of method.
	claims(method []byte) bool
	// preempt acts on such a notification, with its params (valid JSON,
	// nil when absent; valid during the call only). What it returns is
	// reported as the notification's drop: 0 when it took it.
	preempt(c *Conn, params json.RawMessage) (DropReason, error)
	// abandoned learns that the call with id was forgotten because its
	// context ended with cause, after its request was written.
	abandoned(c *Conn, id uint64, cause error)
}

// retirement is how a request the peer cancelled is answered (see retire).
type retirement struct {
	reply      *Error // the answer; nil: none at all
	keepResult bool   // a result its handler returned is sent instead
}

// answer returns the answer of a retired request whose handler returned
// the response f or the error err: nil and nil when it is not answered.
func (r *retirement) answer(f *frame, err error) (*frame, error) {
	if r.keepResult && err == nil {
		return f, nil
	}
	putFrame(f)
	if r.reply == nil {
		return nil, nil
	}
	return nil, r.reply
}

// retire ends every request of the peer's in hand whose id has the match
// key id (wire.KeyOfID: the same rule by which responses match calls): its
// context ends with cause, and it is answered as r says. A request still
// waiting for its turn never runs: it is answered at once. It reports
// whether any request had that id. Called on the read loop.
func (c *Conn) retire(id wire.IDKey, cause error, r *retirement) bool {
	var found bool
	var running, waiting []*job
	c.update(func(s *state) {
		in := &s.in
		for j := in.byID.m[id]; j != nil; j = j.sameID {
			found = true
			if !j.retired.CompareAndSwap(nil, r) {
				continue // retired already
			}
			if j.started {
				running = append(running, j)
				continue
			}
			switch {
			case in.waiting.remove(j), in.held.remove(j):
				in.bytes -= j.size
			case in.barrier == j:
				in.lift()
			}
			waiting = append(waiting, j)
		}
		for _, j := range waiting {
			in.byID.remove(j)
		}
		c.startWaiting(s, false) // a barrier retired may let others start
	})
	for _, j := range running {
		j.end(cause)
	}
	for _, j := range waiting {
		j.end(cause)
		j.discard()
		if r.reply != nil {
			c.answerJob(j, r.reply, fromReadLoop)
		} else {
			c.unanswered(j, fromReadLoop)
		}
	}
	return found
}
