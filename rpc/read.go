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

// reader is the state of the read loop. Only the goroutine that leads the
// loop touches it; it moves between goroutines with the lead (see lead).
type reader struct {
	lines   *lines.Reader
	scanner wire.Scanner
	env     wire.Envelope
	fixed   []byte // scratch for lines with invalid UTF-8
	name    []byte // scratch for method names with escapes
	late    bool   // the input being handled came after Shutdown began

	// paramsFirst says the peer's last frame with params had a member
	// after them: the next frame's params are not guessed to end it (see
	// dispatch), since with a peer that writes, say, the id last, every
	// guess would cost a decode in vain.
	paramsFirst bool
}

// leadOutcome is how a turn at leading the read loop ended.
type leadOutcome uint8

const (
	leadPassed  leadOutcome = iota // the lead passed to another goroutine
	leadEnded                      // reading has ended
	leadSettled                    // the leader's own call was settled (callers only)
)

// lead runs the read loop on the calling goroutine. Requests are served
// right where they were read, one after the other, under a watch (see
// watch): a handler that takes longer than leadPatience, or a flush that
// blocks that long, makes the lead pass to another goroutine, which goes on
// reading. So a request reaches its handler without waiting for a
// goroutine to wake up, a burst of requests is served and answered without
// any, and a slow or blocking handler (one that calls back the peer and
// waits, say) still never stops the stream for long.
//
// A caller that waits for its response may lead too (see call): own is its
// call, and the turn ends once the call is settled. For a goroutine of the
// Conn, own is nil.
func (c *Conn) lead(rd *reader, own *pendingCall) leadOutcome {
	for {
		waiting := !rd.lines.HasLine()
		if waiting && c.out.pending() {
			// About to wait for input: first send the replies of the burst.
			token := c.watch()
			c.out.kick()
			if !c.unwatch(token) {
				return leadPassed
			}
		}
		if own != nil && own.isSettled() {
			return leadSettled // by the end of the connection
		}
		if waiting {
			rd.late = c.workers.waitInput(true)
		}
		ev, tail, err := rd.lines.Next()
		if waiting {
			c.workers.waitInput(false)
		}
		if c.closed() {
			c.endReading(nil)
			return leadEnded
		}
		if err != nil {
			if tail > 0 {
				c.drop(Drop{Reason: DropUnterminated, Size: int64(tail)})
			}
			c.out.flush() // nothing may stay posted once reading ends
			c.endReading(err)
			return leadEnded
		}
		if ev.Oversize {
			c.drop(Drop{Reason: DropOversize, Size: ev.Size})
			continue
		}
		t, handOver := c.dispatch(rd, ev.Line, own)
		if handOver {
			return leadPassed // to the caller whose response this was
		}
		if own != nil && own.isSettled() {
			return leadSettled
		}
		if t == nil {
			continue
		}
		switch c.workers.acquire(t, rd.late) {
		case queued:
			continue
		case refused:
			c.drop(Drop{Reason: DropShutdown, Line: ev.Line, Size: ev.Size})
			continue
		}
		for ; t != nil; t = c.workers.next() {
			token := c.watch()
			t.run(c, true)
			if !c.unwatch(token) {
				// The lead has passed on: send the reply posted meanwhile,
				// and serve what holds the slot as any goroutine would.
				c.out.kick()
				for t = c.workers.next(); t != nil; t = c.workers.next() {
					t.run(c, false)
				}
				return leadPassed
			}
		}
	}
}

// endReading records the end of the input, or Close when err is nil.
func (c *Conn) endReading(err error) {
	c.workers.waitInput(true) // for good: Shutdown waits for no more input
	c.rmu.Lock()
	c.reading = false
	if c.rclosed.Load() && c.deadline != nil {
		c.deadline.SetReadDeadline(time.Time{}) // give the stream back as it was
	}
	c.rmu.Unlock()
	switch {
	case err == nil:
		c.end(ErrClosed)
	case errors.Is(err, io.EOF):
		c.end(ErrInputEnded)
	default:
		c.end(fmt.Errorf("rpc: reading input: %w", err))
	}
}

// dispatch classifies one line and acts on it, as WIRE.md §2.2 describes.
// A request comes back as a task to run; everything else is done. handOver
// reports that the line was a response and that the lead went with it to
// the caller (see handleResponse).
func (c *Conn) dispatch(rd *reader, raw []byte, own *pendingCall) (_ task, handOver bool) {
	line := lines.TrimSpace(raw)
	if len(line) == 0 {
		return nil, false // blank lines are keep-alive noise, not drops
	}
	if !utf8.Valid(line) {
		rd.fixed = lines.AppendValidUTF8(rd.fixed[:0], line)
		line = rd.fixed
	}
	// The scanner guesses that params are the last member, and leaves
	// them to the decoder of a typed handler (see wire.Scanner.ParamsToEnd);
	// when the guess cannot be confirmed that way, the line is scanned
	// again without it. Nothing is done with the line before then.
	rd.scanner.ParamsToEnd = !rd.paramsFirst
	t, handOver, ok := c.dispatchScanned(rd, line, int64(len(raw)), own)
	if !ok {
		rd.scanner.ParamsToEnd = false
		t, handOver, _ = c.dispatchScanned(rd, line, int64(len(raw)), own)
	}
	return t, handOver
}

// dispatchScanned scans line and acts on it (see dispatch); ok false means
// that the scanner's guess about params did not hold, and that nothing was
// done.
func (c *Conn) dispatchScanned(rd *reader, line []byte, size int64, own *pendingCall) (_ task, handOver, ok bool) {
	top, depth, err := rd.scanner.Scan(line, &rd.env)
	switch {
	case err != nil:
		c.drop(Drop{Reason: DropMalformed, Line: line, Size: size, Err: err})
		return nil, false, true
	case top != wire.Object:
		c.drop(Drop{Reason: DropNotObject, Line: line, Size: size})
		return nil, false, true
	}
	env := &rd.env
	if env.Params.Kind != wire.Absent {
		rd.paramsFirst = !env.ParamsLast
	}
	hasID := env.ID.Kind == wire.String || env.ID.Kind == wire.Number
	hasMethod := env.Method.Kind == wire.String
	var name []byte
	var view *registryView
	var e *entry
	if hasMethod {
		name, view = rd.methodName(env), c.reg.view()
		if view != nil {
			e = view.methods[string(name)]
		}
	}
	// The scanner leaves params unchecked (see wire.Scanner.LazyParams):
	// the decoder of a typed handler checks them as it decodes; any other
	// way of handling the line needs them validated first.
	typed := e != nil && (hasID && e.request != nil || !hasID && e.notification != nil)
	if env.ParamsUnchecked && (!typed || depth > MaxDepth) {
		if env.ParamsToEnd {
			return nil, false, false
		}
		if err := rd.checkParams(); err != nil {
			c.drop(Drop{Reason: DropMalformed, Line: line, Size: size, Err: err})
			return nil, false, true
		}
	}
	if depth > MaxDepth {
		c.drop(Drop{Reason: DropTooDeep, Line: line, Size: size})
		return nil, false, true
	}
	switch {
	case hasID && hasMethod:
		t, ok := c.handleRequest(rd, env, line, size, name, view, e)
		return t, false, ok
	case hasID:
		return nil, c.handleResponse(rd, env, line, size, own), true
	case hasMethod:
		return nil, false, c.handleNotification(rd, env, line, size, name, view, e)
	default:
		c.drop(Drop{Reason: DropUnclassified, Line: line, Size: size})
	}
	return nil, false, true
}

// checkParams validates the params member the scanner left unchecked.
func (rd *reader) checkParams() error {
	err := rd.params().malformed()
	rd.env.ParamsUnchecked = false
	return err
}

// params returns the params member as a typed handler decodes it.
func (rd *reader) params() paramsIn {
	p := paramsIn{raw: rd.env.Params.Raw, toEnd: rd.env.ParamsToEnd}
	if rd.env.ParamsUnchecked {
		p.unchecked = &rd.scanner
	}
	return p
}

// paramsIn is a params member on its way to the decoder of a typed
// handler. When the scanner left it unchecked, a decoding failure may mean
// that it is not valid JSON, and the line malformed: malformed tells. When
// the scanner only guessed where it ends (toEnd), a decoding failure may
// mean that the guess was wrong: the line must be scanned again.
type paramsIn struct {
	raw       []byte
	unchecked *wire.Scanner // non-nil: raw is not validated yet
	toEnd     bool          // raw was taken to the end of the object
}

// malformed returns why raw is not valid JSON, or nil when it is (or was
// validated with the line); errGuessedParams when raw is only a guess.
func (p paramsIn) malformed() error {
	if p.toEnd {
		return errGuessedParams
	}
	if p.unchecked == nil {
		return nil
	}
	_, _, err := p.unchecked.Scan(p.raw, nil)
	return err
}

// errGuessedParams says that params that did not decode were only guessed
// to be the last member (see wire.Scanner.ParamsToEnd).
var errGuessedParams = errors.New("rpc: params guessed to end the frame did not decode")

// malformedParams is what a typed handler's decoder returns for params that
// are not valid JSON: the line is dropped as malformed (or, for guessed
// params, scanned again).
type malformedParams struct{ err error }

func (m malformedParams) Error() string { return m.err.Error() }

// Unwrap returns why the params are malformed (a *wire.SyntaxError), or
// errGuessedParams.
func (m malformedParams) Unwrap() error { return m.err }

// guessWrong reports whether err says that guessed params did not decode.
func guessWrong(err error) bool { return errors.Is(err, errGuessedParams) }

// methodName returns the method's name as bytes, without allocating unless
// the name has escapes.
func (rd *reader) methodName(env *wire.Envelope) []byte {
	if name, ok := wire.StringContent(env.Method.Raw); ok {
		return name
	}
	rd.name = wire.AppendUnquote(rd.name[:0], env.Method.Raw)
	return rd.name
}

// handleRequest returns the task of a request; ok false means that its
// guessed params did not decode, and that nothing was done.
func (c *Conn) handleRequest(rd *reader, env *wire.Envelope, line []byte, size int64, name []byte, view *registryView, e *entry) (_ task, ok bool) {
	if e != nil && e.request != nil {
		t, err := e.request(c, env.ID.Raw, rd.params())
		if guessWrong(err) {
			return nil, false
		}
		if err != nil {
			c.drop(Drop{Reason: DropMalformed, Line: line, Size: size, Err: err})
		}
		return t, true
	}
	if view != nil && view.unknown != nil {
		t := &unknownTask{
			handler: view.unknown,
			method:  string(name),
			id:      append([]byte(nil), env.ID.Raw...),
		}
		if env.Params.Raw != nil {
			t.params = append(json.RawMessage(nil), env.Params.Raw...)
		}
		return t, true
	}
	c.writeError(true, env.ID.Raw, &Error{Code: CodeMethodNotFound, Message: "method not found: " + string(name)})
	return nil, true
}

// handleNotification serves a notification; ok false means that its
// guessed params did not decode, and that nothing was done.
func (c *Conn) handleNotification(rd *reader, env *wire.Envelope, line []byte, size int64, name []byte, view *registryView, e *entry) (ok bool) {
	if e != nil && e.notification != nil {
		err := e.notification(c, rd.params())
		switch m, malformed := err.(malformedParams); {
		case guessWrong(err):
			return false
		case malformed:
			c.drop(Drop{Reason: DropMalformed, Line: line, Size: size, Err: m.err})
		case err != nil:
			c.drop(Drop{Reason: DropInvalidParams, Line: line, Size: size, Method: string(name), Err: err})
		}
		return true
	}
	if view != nil && view.unknownNotification != nil {
		func() {
			defer c.recoverNotification(string(name))
			view.unknownNotification(c.ctx, string(name), env.Params.Raw)
		}()
		return true
	}
	c.drop(Drop{Reason: DropUnhandledNotification, Line: line, Size: size, Method: string(name)})
	return true
}

// handleResponse settles the pending call whose id the response carries. Ids
// match by JSON type and value: this side sends integer ids, so a string id
// never matches, and a number matches when it denotes the same integer
// (5, 5.0 and 5e0 alike, as JavaScript peers compare them).
//
// When a goroutine of the Conn (own is nil) settles a call whose caller can
// lead, and the read loop has nothing else to do, the lead goes to the
// caller with its response (handOver): the caller would have to wake up
// anyway, and once it holds the lead, it reads its next response itself
// (see call), without any goroutine switch.
func (c *Conn) handleResponse(rd *reader, env *wire.Envelope, line []byte, size int64, own *pendingCall) (handOver bool) {
	var pc *pendingCall
	var id uint64
	if env.ID.Kind == wire.Number {
		if n, ok := wire.NumberInt64(env.ID.Raw); ok && n > 0 {
			id = uint64(n)
			pc = c.pending.take(id)
		}
	}
	if pc == nil {
		c.drop(Drop{Reason: DropUnmatchedResponse, Line: line, Size: size})
		return false
	}
	// WIRE.md §2.7: an error member that is an object or an array rejects
	// the call; any other error member is ignored.
	var err error
	if k := env.Error.Kind; k == wire.Object || k == wire.Array {
		err = parseErrorObject(env.Error)
	} else if env.Result.Kind != wire.Absent {
		pc.result = append(pc.result[:0], env.Result.Raw...)
		pc.hasResult = true
	}
	if own == nil && pc.canLead && pc.parked.Load() && !rd.lines.HasLine() && !c.out.pending() {
		c.running.Add(1) // the count of the lead, held by the caller now
		pc.lead = rd
		handOver = true
	}
	pc.settle(err)
	return handOver
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
