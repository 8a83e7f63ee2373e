package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/wire"
)

// reader is the state of the read loop; only the read loop's goroutine
// touches it.
type reader struct {
	lines   *lines.Reader
	scanner wire.Scanner
	env     wire.Envelope
	fixed   []byte               // scratch for lines with invalid UTF-8
	name    []byte               // scratch for method names with escapes
	late    bool                 // the input being handled was read after Shutdown began
	noteCtx *notificationContext // the last notification's context (see notificationContext)

	// paramsFirst says the peer's last frame with params had a member
	// after them (see params.go).
	paramsFirst bool
}

// maxRetainedScratch bounds the scratch buffer kept after a line with
// invalid UTF-8, so that one huge line does not pin its repair for good.
const maxRetainedScratch = 64 << 10

// readLoop reads the input line by line and dispatches each line, until
// the input ends or the Conn closes. Its trip for one line reads straight
// down: read (lines.Reader), scan and classify (dispatch), act (the
// handle functions below): a response settles a call, a notification runs
// here, in order, and a request is admitted to a handler slot (slots.go).
//
// It blocks only on the input, on a notification handler, and on room in
// the write queue for a reply of its own (see writer): nothing a caller
// does can stop it.
func (c *Conn) readLoop(rd *reader) {
	defer c.running.Done()
	c.readLoopID.Store(goroutineID())
	for {
		var ev lines.Event
		var tail int
		var err error
		if rd.lines.HasLine() {
			ev, tail, err = rd.lines.Next()
		} else {
			// Every line received is handled: Shutdown may be done waiting.
			c.update(func(s *connState) { s.idle = true })
			ev, tail, err = rd.lines.Next()
			c.update(func(s *connState) { s.idle, rd.late = false, s.draining })
		}
		if c.closing.Load() {
			c.endReading(nil)
			return
		}
		if err != nil {
			if tail > 0 {
				c.drop(Drop{Reason: DropUnterminated, Size: int64(tail)})
			}
			c.endReading(err)
			return
		}
		if ev.Oversize {
			c.drop(Drop{Reason: DropOversize, Size: ev.Size})
			continue
		}
		c.dispatch(rd, ev.Line)
	}
}

// endReading records that the read loop stopped: because the Conn closed
// (err nil), or because the input ended or failed.
func (c *Conn) endReading(err error) {
	defer close(c.readDone)
	c.update(func(s *connState) {
		s.reading = false
		switch {
		case s.closed:
			if c.deadline != nil {
				c.deadline.SetReadDeadline(time.Time{}) // give the stream back as it was
			}
		case errors.Is(err, io.EOF):
			s.endWith(ErrInputEnded)
		default:
			s.endWith(fmt.Errorf("rpc: reading input: %w", err))
		}
	})
}

// dispatch classifies one line and acts on it, as docs/wire.md §2.2
// describes.
func (c *Conn) dispatch(rd *reader, raw []byte) {
	line := lines.TrimSpace(raw)
	if len(line) == 0 {
		return // blank lines are keep-alive noise, not drops
	}
	if !utf8.Valid(line) {
		rd.fixed = lines.AppendValidUTF8(rd.fixed[:0], line)
		line = rd.fixed
		defer rd.releaseScratch()
	}
	size := int64(len(raw))
	rd.scanner.ParamsToEnd = !rd.paramsFirst
	for !c.handle(rd, line, size) {
		rd.scanner.ParamsToEnd = false // the guess did not hold (params.go)
	}
}

func (rd *reader) releaseScratch() {
	if cap(rd.fixed) > maxRetainedScratch {
		rd.fixed = nil
	}
}

// handle scans line, classifies it and acts on it. It reports false, having
// done nothing, when the scanner's guess about params could not be
// confirmed: the line is then scanned again in full.
func (c *Conn) handle(rd *reader, line []byte, size int64) (done bool) {
	top, depth, err := rd.scanner.Scan(line, &rd.env)
	switch {
	case err != nil:
		c.drop(Drop{Reason: DropMalformed, Line: line, Size: size, Err: err})
		return true
	case top != wire.Object:
		c.drop(Drop{Reason: DropNotObject, Line: line, Size: size})
		return true
	}
	env := &rd.env
	if env.Params.Kind != wire.Absent {
		rd.paramsFirst = !env.ParamsLast
	}
	class := env.Class()
	var name []byte
	var view *registryView
	var e *entry
	var cancel bool // the cancellation policy's notification
	if class == wire.Request || class == wire.Notification {
		name = rd.methodName(env)
		if p := c.cancellation; p != nil && class == wire.Notification && string(name) == p.Method {
			cancel = true
		} else if view = c.reg.view(); view != nil {
			e = view.methods[string(name)]
		}
	}
	typed := e != nil && (class == wire.Request && e.request != nil || class == wire.Notification && e.notification != nil)
	if env.ParamsUnchecked && (!typed || depth > MaxDepth) {
		if err := rd.checkParams(); err != nil {
			if err == errGuessedParams {
				return false
			}
			c.drop(Drop{Reason: DropMalformed, Line: line, Size: size, Err: err})
			return true
		}
	}
	if depth > MaxDepth {
		c.drop(Drop{Reason: DropTooDeep, Line: line, Size: size})
		return true
	}
	switch {
	case class == wire.Request:
		return c.handleRequest(rd, line, size, name, view, e)
	case class == wire.Response:
		c.handleResponse(env, line, size)
	case cancel:
		c.handleCancel(env.Params.Raw, line, size)
	case class == wire.Notification:
		return c.handleNotification(rd, line, size, name, view, e)
	default:
		c.drop(Drop{Reason: DropUnclassified, Line: line, Size: size})
	}
	return true
}

// methodName returns the method's name as bytes, without allocating unless
// the name has escapes.
func (rd *reader) methodName(env *wire.Envelope) []byte {
	if name, ok := wire.StringContent(env.Method.Raw); ok {
		return name
	}
	rd.name = wire.AppendUnquote(rd.name[:0], env.Method.Raw)
	return rd.name
}

// handleRequest decodes a request and admits it to a handler slot, or
// answers it at once; false means that its guessed params did not decode,
// and that nothing was done.
func (c *Conn) handleRequest(rd *reader, line []byte, size int64, name []byte, view *registryView, e *entry) bool {
	id := rd.env.ID.Raw
	var t task
	var method string
	switch {
	case e != nil && e.request != nil:
		var err error
		if t, err = e.request(rd.params()); err != nil {
			return c.paramsFailed(rd, line, size, name, err, true)
		}
		method = e.name
	case view != nil && view.unknown != nil:
		u := &unknownTask{handler: view.unknown, method: string(name)}
		if rd.env.Params.Raw != nil {
			u.params = append(json.RawMessage(nil), rd.env.Params.Raw...)
		}
		t, method = u, u.method
	default:
		c.replyError(id, &Error{Code: CodeMethodNotFound, Message: "method not found: " + string(name)}, false)
		return true
	}
	rc := newRequestContext(c, method, id)
	rc.t = t
	if c.cancellation != nil {
		rc.key, _ = keyOf(id) // a request's id is a string or a number
	}
	switch c.admit(rc, int(size), rd.late) {
	case overloaded:
		c.replyError(id, overloadError, false)
	case refused:
		if rd.late {
			c.drop(Drop{Reason: DropShutdown, Line: line, Size: size})
		}
	}
	return true
}

// paramsFailed acts on params that a typed handler's decoder refused: it
// reports false when they were only guessed (the line is scanned again);
// it drops the line when they are not valid JSON; and it answers a request
// with CodeInvalidParams, or drops a notification, when they do not decode
// into the handler's type.
func (c *Conn) paramsFailed(rd *reader, line []byte, size int64, name []byte, err error, request bool) bool {
	var bad malformedParams
	switch {
	case errors.Is(err, errGuessedParams):
		return false
	case errors.As(err, &bad):
		c.drop(Drop{Reason: DropMalformed, Line: line, Size: size, Err: bad.err})
	case request:
		// The answer says what is wrong in the peer's terms; the decoder's
		// error, which names the program's types, goes to OnDrop and the
		// Logger only.
		c.drop(Drop{Reason: DropInvalidParams, Line: line, Size: size, Method: string(name), Err: err})
		c.replyError(rd.env.ID.Raw, &Error{Code: CodeInvalidParams, Message: describeParams(err)}, false)
	default:
		c.drop(Drop{Reason: DropInvalidParams, Line: line, Size: size, Method: string(name), Err: err})
	}
	return true
}

// overloadError answers a request that found the handler slots and the
// waiting room full.
var overloadError = &Error{Code: CodeOverloaded, Message: "server overloaded: too many requests in progress"}

// handleNotification runs a notification's handler on the read loop; false
// means that its guessed params did not decode, and that nothing was done.
func (c *Conn) handleNotification(rd *reader, line []byte, size int64, name []byte, view *registryView, e *entry) bool {
	switch {
	case e != nil && e.notification != nil:
		t, err := e.notification(rd.params())
		if err != nil {
			return c.paramsFailed(rd, line, size, name, err, false)
		}
		t.run(c, rd, e.name)
	case view != nil && view.unknownNotification != nil:
		c.runUnknownNotification(rd, view.unknownNotification, string(name), rd.env.Params.Raw)
	default:
		c.drop(Drop{Reason: DropUnhandledNotification, Line: line, Size: size, Method: string(name)})
	}
	return true
}

// handleResponse settles the pending call whose id the response carries.
// Ids match by JSON type and value: this side sends integer ids, so a
// string id never matches, and a number matches when it denotes the same
// integer (5, 5.0 and 5e0 alike, as JavaScript peers compare them).
func (c *Conn) handleResponse(env *wire.Envelope, line []byte, size int64) {
	var pc *pendingCall
	if n, ok := wire.IntegerID(env.ID); ok && n > 0 {
		pc = c.pending.take(uint64(n))
	}
	if pc == nil {
		c.drop(Drop{Reason: DropUnmatchedResponse, Line: line, Size: size})
		return
	}
	// docs/wire.md §2.7: an error member that is an object or an array
	// rejects the call; any other error member is ignored.
	var err error
	if k := env.Error.Kind; k == wire.Object || k == wire.Array {
		err = parseErrorObject(env.Error)
	} else if env.Result.Kind != wire.Absent {
		pc.result = append(pc.result[:0], env.Result.Raw...)
		pc.hasResult = true
	}
	pc.settle(err)
}

// parseErrorObject reads a peer's error object leniently: a code that is not
// an integer is missing, a message that is not a string becomes
// "JSON-RPC error", and data is kept verbatim.
func parseErrorObject(v wire.Value) *Error {
	e := &Error{Message: errorMessageFallback, CodeMissing: true}
	if v.Kind != wire.Object {
		return e
	}
	// A map matches member names exactly, as JSON.parse does; struct
	// decoding would match them case-insensitively. Errors are rare, so the
	// allocation does not matter.
	var members map[string]json.RawMessage
	if err := decodeAny(v.Raw, &members); err != nil {
		return e
	}
	code, message, data := members["code"], members["message"], members["data"]
	if k := wire.KindOf(code); k == wire.Number {
		if n, ok := wire.NumberInt64(code); ok {
			e.Code, e.CodeMissing = Code(n), false
		}
	}
	if wire.KindOf(message) == wire.String {
		var msg string
		if err := decode(message, &msg); err == nil {
			e.Message = msg
		}
	}
	if data != nil {
		e.Data = data
	}
	return e
}

// drop reports an ignored line to the hook and the logger.
func (c *Conn) drop(d Drop) {
	if c.onDrop != nil {
		c.onDrop(d)
	}
	if c.log != nil {
		attrs := []slog.Attr{slog.String("reason", d.Reason.String()), slog.Int64("size", d.Size)}
		if d.Method != "" {
			attrs = append(attrs, slog.String("method", d.Method))
		}
		if d.Err != nil {
			attrs = append(attrs, slog.Any("error", d.Err))
		}
		c.log.LogAttrs(c.ctx, slog.LevelDebug, "rpc: line dropped", attrs...)
	}
}
