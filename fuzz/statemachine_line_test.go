package fuzz

// The model of the line (rpc/line.go) that connMachine checks a Conn
// against, written from the rule as its doc comment states it, not from
// its code: the entries the peer wrote, each with its place and its state,
// and the one question the rule answers, whether an entry may start now.

// smKind is what an entry of the model's line is.
type smKind uint8

const (
	smRequest      smKind = iota // a request of the peer's: ordinary, Exclusive or Async
	smNotification               // a notification of the peer's: ordinary or Async
	smResponse                   // a response to one of the Conn's calls, waiting for its turn
	smEnd                        // the end of the input
)

// smState is where an entry is in the model's line.
type smState uint8

const (
	smQueued  smState = iota // waiting for its turn
	smRunning                // started (or resumed), not yielded
	smYielded                // started, yielded, not returned
	smGone                   // returned, answered without running, delivered, withdrawn or dropped
)

// smEntry is an entry of the model's line. A request's or notification's
// entry is also its handler: it keeps its place while the handler lives,
// and takes the place of the response to its call when that resumes it
// (its own place would tell the same: the response starts only once
// what is before it has yielded, so nothing between the two places
// waits).
type smEntry struct {
	kind        smKind
	pos         int // its place: the order in which the Conn read it
	solo, async bool
	state       smState
	size        int // its line's length, which the room counts

	// A request or notification.
	label   string // the request's id, the notification's params
	method  string
	started bool
	indexed bool       // a request in hand: a cancellation naming it matches
	retired bool       // the peer cancelled it
	ctxDone bool       // its handler's context has ended
	call    *smCall    // the call its handler waits in
	cmds    chan smCmd // what the test tells its handler to do

	// A response: the call it settles.
	settles *smCall
}

func (e *smEntry) waiting() bool { return e.state == smQueued }

// holds reports whether e is solo and has not yielded: nothing placed
// after it starts.
func (e *smEntry) holds() bool { return e.solo && (e.state == smQueued || e.state == smRunning) }

// resumes reports whether the handler e, in a call with its context,
// takes its turn again when the response comes: it yielded, and it is not
// Async (an Async handler holds nothing, ever).
func (e *smEntry) resumes() bool { return e.state == smYielded && !e.async }

// smLine is the line: the entries not gone, and the bounds. The rule, in
// the terms of its doc comment: an entry starts once the entries before
// it have yielded; a solo entry (a notification, an Exclusive request, a
// response that resumes a solo handler) runs alone, so nothing placed
// after it starts until it yields, and it starts once everything placed
// before it has yielded; a request is shared: it starts beside the shared
// entries running, while fewer than slots run unyielded, after the
// requests before it that wait for a slot; a shared response, or the end
// of the input, starts once the solo entries before it have yielded.
type smLine struct {
	slots     int // MaxConcurrentRequests
	room      int // MaxWaiting (0: none may wait)
	roomBytes int // MaxWaitingBytes
	entries   []*smEntry
	alive     int // handlers started, not returned
	last      int // the last place given
}

// place gives e the next place in the line; add puts it there.
func (l *smLine) place(e *smEntry) { l.last++; e.pos = l.last }
func (l *smLine) add(e *smEntry)   { l.entries = append(l.entries, e) }

// capAlive is the cap on handlers alive.
func (l *smLine) capAlive() int { return 2 * l.slots }

// heldBefore reports whether a solo entry placed before pos has not
// yielded.
func (l *smLine) heldBefore(pos int) bool {
	for _, e := range l.entries {
		if e.pos < pos && e.holds() {
			return true
		}
	}
	return false
}

// busyBefore reports whether an entry placed before pos has not yielded:
// a shared entry running, or a request waiting for a slot.
func (l *smLine) busyBefore(pos int) bool {
	for _, e := range l.entries {
		if e.pos < pos && (e.state == smRunning || e.state == smQueued && e.kind == smRequest) {
			return true
		}
	}
	return false
}

// requestBefore reports whether a request placed before pos waits.
func (l *smLine) requestBefore(pos int) bool {
	for _, e := range l.entries {
		if e.pos < pos && e.state == smQueued && e.kind == smRequest {
			return true
		}
	}
	return false
}

// sharedRunning counts the shared entries running: the slots taken.
func (l *smLine) sharedRunning() int {
	n := 0
	for _, e := range l.entries {
		if e.state == smRunning && !e.solo {
			n++
		}
	}
	return n
}

// mayStart reports whether e, waiting (or just read), may start now.
func (l *smLine) mayStart(e *smEntry) bool {
	switch {
	case l.heldBefore(e.pos):
		return false
	case e.solo:
		return !l.busyBefore(e.pos)
	case e.kind == smRequest:
		return !l.requestBefore(e.pos) && l.sharedRunning() < l.slots
	}
	return true
}

// next returns the earliest entry waiting that may start, or nil.
func (l *smLine) next() *smEntry {
	var first *smEntry
	for _, e := range l.entries {
		if e.waiting() && (first == nil || e.pos < first.pos) && l.mayStart(e) {
			first = e
		}
	}
	return first
}

// head returns the earliest solo entry that has not yielded, or nil: it
// waits outside the room.
func (l *smLine) head() *smEntry {
	var h *smEntry
	for _, e := range l.entries {
		if e.holds() && (h == nil || e.pos < h.pos) {
			h = e
		}
	}
	return h
}

// waitingRoom returns how many requests and notifications wait in the
// room, and the length of their lines: all that wait but the head.
func (l *smLine) waitingRoom() (n, bytes int) {
	h := l.head()
	for _, e := range l.entries {
		if e.waiting() && e.kind <= smNotification && e != h {
			n++
			bytes += e.size
		}
	}
	return n, bytes
}

// roomFor reports whether the room has a place for e, not in the line.
func (l *smLine) roomFor(e *smEntry) bool {
	n, bytes := l.waitingRoom()
	return n < l.room && bytes+e.size <= l.roomBytes
}

// prune forgets the entries gone.
func (l *smLine) prune() {
	kept := l.entries[:0]
	for _, e := range l.entries {
		if e.state != smGone {
			kept = append(kept, e)
		}
	}
	clear(l.entries[len(kept):])
	l.entries = kept
}
