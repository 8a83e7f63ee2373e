// Package transcript checks transcripts of the DSH SDK protocol, the
// frames a client and a runtime exchanged, against the wire contract
// (docs/wire.md §2-§6): each frame on its own (JSON, envelope, method,
// params, results and notification payloads, whose rules sdkproto
// defines beside their types), and frames against each other (responses
// against pending requests, event seqs per session, what a client's run
// awaits). A Checker takes frames with their direction and returns
// findings; Read checks a whole transcript file or raw frames.
package transcript

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/sdkproto"
)

// checkTable bounds each of a Checker's tables (pending requests, answered
// ids, sessions), so that a transcript of any length is checked in bounded
// memory.
const checkTable = 1 << 16

// The protocol's methods, by sender (docs/wire.md §1).
var (
	clientRequests      = map[string]bool{"initialize": true, "session/prompt": true, "shutdown": true}
	serverNotifications = map[string]bool{"session.event": true, "session.status": true, "subagent.started": true, "subagent.finished": true}
)

// pending is a request waiting for its response.
type pending struct {
	line    int
	dir     Dir
	method  string
	id      string // as written
	session string // of a session/prompt
	// methodCut says a tap log cut the request before its method.
	methodCut bool
}

// what names the request's method in a message.
func (p *pending) what() string {
	if p.methodCut {
		return "a request whose method the log cut off"
	}
	return p.method
}

// name names the request in a message.
func (p *pending) name() string {
	if p.methodCut {
		return "request (its method cut off in the log)"
	}
	return fmt.Sprintf("request %q", p.method)
}

// Checker checks the frames of one transcript, in order, against the wire
// contract, holding what later frames are checked against (pending
// requests, the seqs of sessions, runs awaiting their end). Each of its
// tables keeps the latest checkTable entries, so any transcript is checked
// in bounded memory. A Checker is not safe for concurrent use.
type Checker struct {
	maxFrame int
	counts   Counts
	found    []Finding // of the current call
	scanner  wire.Scanner
	pending  *fifoMap[pendingKey, *pending]
	answered *fifoMap[pendingKey, int] // the line of the response
	seqs     *fifoMap[string, seqState]
	runs     *fifoMap[string, *sessionRuns]
	initOK   bool // an initialize succeeded
	// initMaybe says an answer to initialize may have been a success: a
	// tap log cut it before it showed which, or before its id.
	initMaybe bool
	shutdown  int // line of the last c2s shutdown request, 0 if none
	// cutAnon is the line of the last frame a tap log cut before it showed
	// which session it was of (0: none): it may have been an event or a
	// status of any session.
	cutAnon int
	// idless holds, per direction, the lines of the latest frames a tap
	// log cut before their id showed: each may have been the request that
	// a response answers, or the response that a request got.
	idless map[Dir][]int
}

// New returns a Checker of frames of at most maxFrame bytes, the longest
// a reader accepts.
func New(maxFrame int) *Checker {
	return &Checker{
		maxFrame: maxFrame,
		pending:  newFIFOMap[pendingKey, *pending](checkTable),
		answered: newFIFOMap[pendingKey, int](checkTable),
		seqs:     newFIFOMap[string, seqState](checkTable),
		runs:     newFIFOMap[string, *sessionRuns](checkTable),
	}
}

// Frame checks one frame, read on line n of the transcript and sent in
// direction dir (Unknown for raw frames), as a wire end reads it: invalid
// UTF-8 becomes U+FFFD, surrounding white space is trimmed, and an empty
// line is no frame. It returns what the frame breaks, and what an earlier
// request it pushed out of the tables broke; the slice is valid until the
// next call.
func (c *Checker) Frame(n int, dir Dir, frame []byte) []Finding {
	c.found = c.found[:0]
	c.checkFrame(n, dir, frame)
	return c.found
}

// checkFrame checks a frame of any length.
func (c *Checker) checkFrame(n int, dir Dir, frame []byte) {
	if len(frame) > c.maxFrame {
		c.oversize(n, dir, int64(len(frame)))
		return
	}
	c.frame(n, dir, frame)
}

// Finish returns what the end of the transcript reveals: requests never
// answered, runs still waiting (see the run-unfinished kind). The slice is
// valid until the next call.
func (c *Checker) Finish() []Finding {
	c.found = c.found[:0]
	c.finish()
	return c.found
}

// Counts returns what the Checker has seen so far, its findings included.
func (c *Checker) Counts() Counts { return c.counts }

// add records one finding.
func (c *Checker) add(line int, kind Kind, format string, args ...any) {
	c.counts.add(kind)
	c.found = append(c.found, Finding{Line: line, Kind: kind, Message: fmt.Sprintf(format, args...)})
}

// oversize reports a frame longer than the maximum frame size.
func (c *Checker) oversize(n int, dir Dir, size int64) {
	c.counts.Frames++
	c.counts.Bad++
	c.add(n, Malformed, "%sa frame of %d bytes, longer than the maximum frame size (%d): the reader skips it", dir.label(), size, c.maxFrame)
}

// frame checks one frame, read on line n in direction dir ("" unknown).
func (c *Checker) frame(n int, dir Dir, line []byte) {
	// Exactly what a wire end does with the line (docs/wire.md §2.1): invalid
	// UTF-8 becomes U+FFFD, ECMAScript trim, empty lines are skipped.
	if !utf8.Valid(line) {
		line = lines.AppendValidUTF8(nil, line)
	}
	line = lines.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	c.counts.Frames++
	var env wire.Envelope
	top, _, err := c.scanner.Scan(line, &env)
	switch {
	case err != nil:
		c.counts.Bad++
		c.add(n, Malformed, "%snot valid JSON (%v): %s", dir.label(), err, lines.Excerpt(line))
		return
	case top != wire.Object:
		c.counts.Bad++
		c.add(n, Malformed, "%sa JSON %s, not an object: the reader drops it: %s", dir.label(), top, lines.Excerpt(line))
		return
	}
	class := env.Class()
	var method string
	if class == wire.Request || class == wire.Notification {
		method = string(wire.AppendUnquote(nil, env.Method.Raw))
	}
	switch class {
	case wire.Request:
		c.counts.Requests++
		c.request(n, dir, method, &env)
	case wire.Response:
		c.counts.Responses++
		c.response(n, dir, &env)
	case wire.Notification:
		c.counts.Notifications++
		c.notification(n, dir, method, &env)
	default:
		c.counts.Bad++
		c.add(n, Malformed, "%sneither a request, a response nor a notification (no string method and no string or number id): the reader drops it: %s", dir.label(), lines.Excerpt(line))
	}
}

// pendingKey is what a response matches a request by: the direction it
// was sent in ("" unknown) and its id, compared as rpc compares them.
type pendingKey struct {
	dir Dir
	id  wire.IDKey
}

// params returns the raw params member as upstream hands it to handlers.
func params(env *wire.Envelope) (json.RawMessage, bool) {
	if env.Params.Kind != wire.Object {
		return json.RawMessage(`{}`), env.Params.Kind == wire.Absent
	}
	return append(json.RawMessage(nil), env.Params.Raw...), true
}

func (c *Checker) request(n int, dir Dir, method string, env *wire.Envelope) {
	id := string(env.ID.Raw)
	if dir == "" && clientRequests[method] {
		dir = c2s
	}
	switch {
	case dir == s2c:
		c.add(n, UnknownMethod, "s2c request %q: the runtime sends no requests (a client answers -32601)", method)
	case !clientRequests[method]:
		c.add(n, UnknownMethod, "%srequest %q (id %s) is not a runtime method (initialize, session/prompt, shutdown)", dir.label(), method, id)
	default:
		c.requestParams(n, method, env)
	}
	req := &pending{line: n, dir: dir, method: method, id: id}
	if method == "session/prompt" {
		if raw, ok := params(env); ok {
			req.session, _ = sdkproto.Notification{Params: raw}.SessionID()
		}
	}
	c.track(wire.KeyOfID(env.ID), req)
}

// track records a request as waiting for its response.
func (c *Checker) track(id wire.IDKey, req *pending) {
	key := pendingKey{req.dir, id}
	if p, ok := c.pending.get(key); ok {
		c.add(req.line, Malformed, "%srequest id %s is already waiting for a response (line %d): responses cannot tell them apart", req.dir.label(), req.id, p.line)
	}
	if req.method == "session/prompt" && req.session != "" {
		c.sessionPrompted(req.session, req.line)
	}
	if req.method == "shutdown" && req.dir != s2c {
		c.shutdown = req.line
	}
	if _, old, evicted := c.pending.set(key, req); evicted {
		c.add(old.line, UnansweredRequest, "%s%s (id %s) got no response within the next %d requests; check stopped waiting for it", old.dir.label(), old.name(), old.id, checkTable)
	}
	c.answered.delete(key)
}

// requestParams validates the params of a client request.
func (c *Checker) requestParams(n int, method string, env *wire.Envelope) {
	raw, ok := params(env)
	if !ok {
		c.add(n, BadPayload, "%s params are a JSON %s, not an object (the runtime sees {})", method, env.Params.Kind)
	}
	switch method {
	case "initialize":
		var p sdkproto.InitializeParams
		if err := p.UnmarshalJSON(raw); err != nil {
			c.add(n, BadPayload, "initialize params do not decode: %v", err)
			return
		}
		for _, k := range []string{"cwd", "provider", "model"} {
			if m := p.Member(k); wire.KindOf(m) != wire.String {
				c.add(n, BadPayload, "initialize params: %s must be a string, got %s", k, wire.KindOf(m).Phrase())
			}
		}
		if err := p.Validate(); err != nil {
			c.add(n, BadPayload, "initialize params: %v (%s)", err, memberText(p.Member("maxTokens"), p.Member("reasoningEffort"), err))
		}
	case "session/prompt":
		var p sdkproto.SessionPromptParams
		if err := p.UnmarshalJSON(raw); err != nil {
			c.add(n, BadPayload, "session/prompt params do not decode: %v", err)
			return
		}
		if m := p.Member("sessionId"); wire.KindOf(m) != wire.String {
			c.add(n, BadPayload, "session/prompt params: sessionId must be a string, got %s", wire.KindOf(m).Phrase())
		}
		if _, err := p.Validate(sdkproto.ImagePolicy{}); err != nil {
			c.add(n, BadPayload, "session/prompt params: %v", err)
		} else {
			for i, b := range p.ContentBlocks {
				if !b.IsObject() || b.Type == "" {
					c.add(n, BadPayload, "session/prompt params: contentBlocks[%d] is not a content block (an object with a string type): %s", i, lines.Excerpt(b.Raw()))
				}
			}
		}
		if !c.initOK && !c.initMaybe && len(c.idless[s2c]) == 0 {
			c.add(n, EarlyPrompt, "session/prompt before any initialize succeeded (docs/wire.md §5.1: clients MUST await the initialize reply; newer runtimes refuse it)")
		}
	}
}

// memberText quotes the offending initialize member for a message.
func memberText(maxTokens, effort json.RawMessage, err error) string {
	if err == sdkproto.ErrReasoningEffort {
		return "reasoningEffort " + string(effort)
	}
	return "maxTokens " + string(maxTokens)
}

func (c *Checker) response(n int, dir Dir, env *wire.Envelope) {
	id := string(env.ID.Raw)
	p := c.settle(n, dir, wire.KeyOfID(env.ID), id)
	if p == nil {
		return
	}
	isErr := env.Error.Kind == wire.Object || env.Error.Kind == wire.Array
	if isErr {
		if env.Result.Kind != wire.Absent {
			c.add(n, BadPayload, "response to %s (id %s) has both result and error", p.what(), id)
		}
		c.errorObject(n, p, env)
		return
	}
	if env.Error.Kind != wire.Absent {
		c.add(n, BadPayload, "response to %s (id %s): error is a JSON %s, not an object (the client ignores it)", p.what(), id, env.Error.Kind)
	}
	if env.Result.Kind == wire.Absent {
		c.add(n, BadPayload, "response to %s (id %s) has neither result nor error", p.what(), id)
		return
	}
	raw := json.RawMessage(env.Result.Raw)
	switch p.method {
	case "initialize":
		var r sdkproto.InitializeResult
		err := r.UnmarshalJSON(raw)
		if err == nil && env.Result.Kind != wire.Object {
			err = fmt.Errorf("initialize returned no server identity: %s", raw)
		}
		if err == nil {
			err = r.Check()
		}
		if err != nil {
			c.add(n, BadPayload, "initialize result (id %s): %v", id, err)
			return
		}
		c.initOK = true
	case "session/prompt":
		var r sdkproto.SessionPromptResult
		err := r.UnmarshalJSON(raw)
		if err == nil && env.Result.Kind != wire.Object {
			err = fmt.Errorf("session/prompt returned no message id: %s", raw)
		}
		if err == nil {
			err = r.Check()
		}
		if err != nil {
			c.add(n, BadPayload, "session/prompt result (id %s): %v", id, err)
		} else if p.session != "" {
			c.prompted(n, p, r.MessageID)
		}
	case "shutdown":
		if env.Result.Kind != wire.Object {
			c.add(n, BadPayload, "shutdown result (id %s) is a JSON %s, not {}", id, env.Result.Kind)
		}
	}
}

// awaiting returns the request that a response sent in direction dir with
// this id answers, and its key; nil when none is waiting.
func (c *Checker) awaiting(dir Dir, id wire.IDKey) (*pending, pendingKey) {
	want := map[Dir]Dir{c2s: s2c, s2c: c2s}[dir]
	for _, k := range []pendingKey{{want, id}, {c2s, id}, {s2c, id}, {"", id}} {
		if q, _ := c.pending.get(k); q != nil && (dir == "" || q.dir == "" || q.dir == want) {
			return q, k
		}
	}
	return nil, pendingKey{}
}

// settle finds the request that a response read on line n answers, and
// takes it off the pending requests; nil, reported, when none waits.
func (c *Checker) settle(n int, dir Dir, id wire.IDKey, idText string) *pending {
	p, key := c.awaiting(dir, id)
	if p == nil {
		want := map[Dir]Dir{c2s: s2c, s2c: c2s}[dir]
		if c.takeIdless(want) {
			return nil // it may answer a request cut before its id
		}
		if line, ok := c.answeredLine(want, id); ok {
			c.add(n, UnmatchedResponse, "%sresponse to id %s, which was already answered on line %d (duplicate response)", dir.label(), idText, line)
		} else {
			c.add(n, UnmatchedResponse, "%sresponse to id %s, which no request is waiting for", dir.label(), idText)
		}
		return nil
	}
	c.pending.delete(key)
	c.answered.set(key, n)
	return p
}

// answeredLine finds the response that already answered a request with
// this id key, sent in direction want ("" for raw frames: any).
func (c *Checker) answeredLine(want Dir, id wire.IDKey) (int, bool) {
	dirs := []Dir{want}
	if want == Unknown {
		dirs = []Dir{Unknown, c2s, s2c}
	}
	for _, d := range dirs {
		if line, ok := c.answered.get(pendingKey{d, id}); ok {
			return line, true
		}
	}
	return 0, false
}

// errorObject checks an error response: code a number, message a string
// (docs/wire.md §2.7 falls back on "JSON-RPC error" and no code otherwise).
func (c *Checker) errorObject(n int, p *pending, env *wire.Envelope) {
	var e map[string]json.RawMessage
	if json.Unmarshal(env.Error.Raw, &e) != nil {
		c.add(n, BadPayload, "error response to %s (id %s): error is not an object", p.what(), p.id)
		return
	}
	if code := e["code"]; len(code) == 0 || wire.KindOf(code) != wire.Number {
		c.add(n, BadPayload, "error response to %s (id %s): code must be a number, got %s", p.what(), p.id, wire.KindOf(code).Phrase())
	}
	if msg := e["message"]; wire.KindOf(msg) != wire.String {
		c.add(n, BadPayload, "error response to %s (id %s): message must be a string, got %s", p.what(), p.id, wire.KindOf(msg).Phrase())
	}
}

func (c *Checker) notification(n int, dir Dir, method string, env *wire.Envelope) {
	if dir == "" && serverNotifications[method] {
		dir = s2c
	}
	if dir == c2s {
		c.add(n, UnknownMethod, "c2s notification %q: the runtime defines no client notifications (it ignores them)", method)
		return
	}
	if !serverNotifications[method] {
		c.add(n, UnknownMethod, "%snotification %q is not a runtime notification (session.event, session.status, subagent.started, subagent.finished)", dir.label(), method)
		return
	}
	raw, ok := params(env)
	if !ok || env.Params.Kind == wire.Absent {
		c.add(n, BadPayload, "%s params are %s, not an object", method, map[bool]string{true: "absent", false: "a JSON " + env.Params.Kind.String()}[env.Params.Kind == wire.Absent])
		return
	}
	note := sdkproto.Notification{Method: method, Params: raw}
	switch method {
	case "session.event":
		c.sessionEvent(n, note)
	case "session.status":
		p, err := note.SessionStatus()
		switch {
		case err != nil:
			c.add(n, BadPayload, "session.status params do not decode: %v", err)
		case p.Check() != nil:
			c.addErrors(n, p.Check())
		case p.Status == sdkproto.StatusIdle:
			c.idle(p.SessionID)
		}
	case "subagent.started":
		p, err := note.SubagentStarted()
		if err != nil {
			c.add(n, BadPayload, "subagent.started params do not decode: %v", err)
			return
		}
		c.addErrors(n, p.Check())
	case "subagent.finished":
		p, err := note.SubagentFinished()
		if err != nil {
			c.add(n, BadPayload, "subagent.finished params do not decode: %v", err)
			return
		}
		c.addErrors(n, p.Check())
	}
}

// addErrors records each rule that err (nil, or joined by errors.Join)
// says a payload breaks as a bad-payload finding.
func (c *Checker) addErrors(n int, err error) {
	if err == nil {
		return
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		c.add(n, BadPayload, "%v", e)
	}
}

// sessionEvent checks a session.event: the envelope (docs/wire.md §4.5), the data
// of known types, and the per-session seq order.
func (c *Checker) sessionEvent(n int, note sdkproto.Notification) {
	p, err := note.SessionEvent()
	if err != nil {
		c.add(n, BadPayload, "session.event params do not decode: %v", err)
		return
	}
	// note.SessionID, read from the params just decoded rather than by
	// parsing them again: the last sessionId member, when a string.
	sid, ok := p.SessionID, wire.KindOf(p.Member("sessionId")) == wire.String
	if !ok {
		c.add(n, BadPayload, "session.event: sessionId must be a string, got %s", wire.KindOf(p.Member("sessionId")).Phrase())
	}
	if err := p.CheckEnvelope(); err != nil {
		c.add(n, BadPayload, "%v", err)
		return
	}
	ev := p.Event
	c.addErrors(n, ev.Check())
	seq, seqOK := wire.NumberInt64(ev.Member("seq"))
	if !ok || !seqOK {
		return
	}
	if ev.Type == sdkproto.EventAgentInboxSpliced {
		c.received(sid, ev.ReceiptIDs())
	}
	c.eventSeq(n, sid, string(ev.Type), seq)
}

// seqState is what a Checker knows of the seqs of one session's events.
type seqState struct {
	last int64 // the highest seq seen; -1 before the first event
	line int   // of the event of seq last, or of the prompt that created the session
	cut  int   // of the last event logged cut before its seq (0: none)
	// prompted says the client prompted the session before any of its
	// events came: the runtime then created it, and forwards its events
	// from seq 0.
	prompted bool
}

// sessionPrompted records a prompt read on line n to a session: the
// first one creates it, so its events start at seq 0.
func (c *Checker) sessionPrompted(session string, n int) {
	if _, ok := c.seqs.get(session); !ok {
		c.seqs.set(session, seqState{last: -1, line: n, prompted: true})
	}
}

// eventSeq checks the seq of an event of session read on line n against
// what the real runtime forwards (docs/wire.md §4.5): a session the client
// created by its prompt from seq 0, and every session without a gap from
// its first forwarded event on. The first event of another session (a
// subagent child, say) may have any seq: the events a session logs before
// it is published (a child's inherited history and delegated policy) are
// never forwarded.
func (c *Checker) eventSeq(n int, session, eventType string, seq int64) {
	st, ok := c.seqs.get(session)
	if !ok {
		st = seqState{last: -1}
	}
	// A frame cut after the last event seen may have been an event of the
	// session whose seq is unknown: a gap then proves nothing.
	sure := max(st.cut, c.cutAnon) < st.line
	switch {
	case st.last >= 0 && seq <= st.last:
		c.add(n, SeqOrder, "session %s: %s has seq %d after seq %d (seqs must increase)", session, eventType, seq, st.last)
		return // keep the highest seq seen
	case st.last < 0 && st.prompted && seq != 0 && sure:
		c.add(n, SeqGap, "session %s: its first event (%s) has seq %d, not 0: the runtime creates a session on its first prompt and forwards its events from seq 0 (docs/wire.md §4.5)", session, eventType, seq)
	case st.last >= 0 && seq > st.last+1 && sure:
		c.add(n, SeqGap, "session %s: seq jumps from %d to %d (%s): the runtime forwards every event of a session after its first (docs/wire.md §4.5)", session, st.last, seq, eventType)
	}
	c.seqs.set(session, seqState{last: seq, line: n})
}

// eventCut records that an event of session was logged cut, on line n,
// before its seq.
func (c *Checker) eventCut(session string, n int) {
	st, ok := c.seqs.get(session)
	if !ok {
		st = seqState{last: -1}
	}
	st.cut = n
	c.seqs.set(session, st)
}
