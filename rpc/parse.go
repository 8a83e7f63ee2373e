package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/wire"
)

// parse reads one frame into a message: it validates it, classifies it
// (docs/wire.md §2.2), finds its handler, and decodes its params for a
// typed one, by the reader, with no effect beyond the reader's scratch:
// what the message asks for is then done by the reader (read.go).
//
// A frame's params reach a typed handler's decoder without being walked
// twice. The scanner leaves them unchecked (wire.Scanner.LazyParams), so
// that the decoder, which rejects invalid JSON, checks them as it decodes;
// and when they end the frame, it does not even find where they end
// (wire.Scanner.ParamsToEnd): it guesses, and the decoder's success
// confirms the guess, since go-json rejects anything after the value; when
// no typed decoder takes the frame, the params are validated on their own,
// which confirms it as well. When the guess cannot be confirmed (the
// decode or the validation fails), the frame is parsed again, scanned in
// full, so that members after params still decide what it is. The guess lives in
// parse alone. A peer seen to write members after params has its next
// frames scanned in full from the start, as every guess would fail.

// reader is the state of the reading: only the goroutine that holds the
// reading role touches it (read.go).
type reader struct {
	scanner wire.Scanner
	env     wire.Envelope
	fixed   []byte // scratch for lines with invalid UTF-8
	name    []byte // scratch for method names with escapes
	// paramsFirst says the peer's last frame with params had a member
	// after them: guessing is not worth it.
	paramsFirst bool
	preempt     *cancelling
	reg         *Registry
	// batches: arrays are batches (Options.Batches). batch is the one
	// being dispatched, if any (batch.go); inArray, an array's elements
	// are being dispatched.
	batches bool
	batch   *inBatch
	inArray bool
	// answerInvalid: frames that are not valid JSON-RPC are answered
	// (Options.AnswerInvalid; see invalid).
	answerInvalid bool
	// checkParams checks decoded params (Options.CheckParams), or nil.
	checkParams func(method string, params json.RawMessage) error
	// responsesOnly: the reader is a caller, which handles responses only
	// (parse returns msgLeft for anything else, before decoding it).
	responsesOnly bool
	// pending: in, a frame a caller left unread for a worker.
	pending bool
	in      inFrame
}

// maxRetainedScratch bounds the scratch buffer kept after a line with
// invalid UTF-8, so that one huge line does not pin its repair for good.
const maxRetainedScratch = 64 << 10

// msgKind is what a frame asks of the reader.
type msgKind uint8

const (
	msgBlank        msgKind = iota // nothing: a blank line is keep-alive noise
	msgDrop                        // report it (Drop) and do nothing else
	msgResponse                    // settle the call it answers
	msgRequest                     // admit the request (t, or the unknown handler)
	msgAnswer                      // answer the request at once with reply (and report drop, if set)
	msgNotification                // queue the notification for the runner
	msgPreempted                   // hand the notification to the preempter
	msgBatch                       // dispatch each element, answer in one array (Options.Batches)
	msgLeft                        // not a response: left to a worker (responsesOnly)
)

// message is a frame as parse read it. Its byte slices alias the frame or
// the reader's scratch: valid until the next parse.
type message struct {
	kind   msgKind
	line   []byte // the frame, trimmed and valid UTF-8
	size   int64  // its length as read
	env    *wire.Envelope
	method []byte
	entry  *entry // the method's handler, when it has one of its own
	t      task   // its handler bound to its params, for msgRequest and msgNotification
	drop   DropReason
	err    error  // why, for a drop
	reply  *Error // the answer, for msgAnswer
	id     []byte // the id the answer carries, for msgAnswer
}

// parse reads the frame raw.
func (rd *reader) parse(raw []byte) message {
	line := lines.TrimSpace(raw)
	if len(line) == 0 {
		return message{kind: msgBlank}
	}
	if !utf8.Valid(line) {
		rd.fixed = lines.AppendValidUTF8(rd.fixed[:0], line)
		line = rd.fixed
		if cap(rd.fixed) > maxRetainedScratch {
			rd.fixed = nil // line keeps it until the next parse
		}
	}
	m, refuted := rd.parseLine(line, int64(len(raw)), !rd.paramsFirst)
	if refuted {
		m, _ = rd.parseLine(line, int64(len(raw)), false)
	}
	return m
}

// parseLine is parse of a trimmed, valid UTF-8 line; guess says whether
// params may be guessed to end the frame. It reports refuted, having done
// nothing, when the guess could not be confirmed.
func (rd *reader) parseLine(line []byte, size int64, guess bool) (m message, refuted bool) {
	m = message{line: line, size: size, env: &rd.env}
	rd.scanner.ParamsToEnd = guess
	top, depth, err := rd.scanner.Scan(line, &rd.env)
	if rd.responsesOnly && (err != nil || top != wire.Object) {
		return message{kind: msgLeft}, false
	}
	switch {
	case err != nil:
		return rd.invalid(m, DropMalformed, err), false
	case top == wire.Array && rd.batch == nil && depth <= MaxDepth:
		m.kind = msgBatch
		return m, false
	case top == wire.Array && rd.batches && rd.batch == nil:
		return rd.invalid(m, DropTooDeep, nil), false
	case top != wire.Object:
		return rd.invalid(m, DropNotObject, nil), false
	}
	env := &rd.env
	if env.Params.Kind != wire.Absent {
		rd.paramsFirst = !env.ParamsLast
	}
	class := rd.classify(env)
	if rd.responsesOnly && class != wire.Response {
		return message{kind: msgLeft}, false
	}
	var view *registryView
	switch class {
	case wire.Request, wire.Notification:
		m.method = rd.methodName(env)
		if class == wire.Notification && rd.preempt != nil && rd.preempt.claims(m.method) {
			m.kind = msgPreempted
		} else if view = rd.reg.view(); view != nil {
			m.entry = view.methods[string(m.method)]
		}
	case wire.Response:
		m.kind = msgResponse
	default:
		if env.ParamsToEnd {
			return m, true // what the guess took for params may hold a method or an id
		}
		return rd.invalid(m, DropUnclassified, nil), false
	}
	decoder := m.entry.decoder(class)
	if env.ParamsUnchecked && (decoder == nil || depth > MaxDepth) {
		// No decoder will check the params: they are validated here. A
		// guess (ParamsToEnd) that they end the frame is confirmed by
		// that too, as a decoder's success confirms it: the line is then
		// valid, and the members before params were validated and
		// located. A guess's depth is a bound that stays below MaxDepth
		// (MaxToEnd), so the depth check below stays right.
		if env.ParamsToEnd && depth > MaxDepth {
			return m, true
		}
		if _, _, err := rd.scanner.Scan(env.Params.Raw, nil); err != nil {
			if env.ParamsToEnd {
				return m, true // the guess, rather than the frame, may be wrong
			}
			return rd.invalid(m, DropMalformed, err), false
		}
		env.ParamsUnchecked = false
	}
	if depth > MaxDepth {
		if class == wire.Response {
			return m.dropped(DropTooDeep, nil), false // never answered
		}
		return rd.invalid(m, DropTooDeep, nil), false
	}
	switch {
	case m.kind != 0: // a response, or preempted
		return m, false
	case decoder != nil:
		t, err := decoder(rd.params())
		bad, malformed := err.(malformedParams) // as decodeParamsOf returns it: a type assertion, which costs no allocation
		if err == nil && rd.checkParams != nil {
			// The params decoded, so the guess that they end the frame, if
			// any, holds: Raw is the member, whole.
			if cerr := rd.check(m.entry.name, env.Params.Raw); cerr != nil {
				t.release() // never run
				err = paramsRefused{cerr}
			}
		}
		refused, isRefused := err.(paramsRefused)
		switch {
		case err == nil:
			m.t = t
		case isRefused && class == wire.Request:
			m = m.dropped(DropInvalidParams, refused.err)
			m.kind, m.id, m.reply = msgAnswer, env.ID.Raw, refused.reply()
			return m, false
		case isRefused:
			return m.dropped(DropInvalidParams, refused.err), false
		case malformed && env.ParamsToEnd:
			return m, true
		case malformed:
			return rd.invalid(m, DropMalformed, bad.err), false
		case class == wire.Request:
			// The answer says what is wrong in the peer's terms; the
			// decoder's error, which names the program's types, goes to
			// OnDrop and the Logger only.
			m = m.dropped(DropInvalidParams, err)
			m.kind, m.id, m.reply = msgAnswer, env.ID.Raw, &Error{Code: CodeInvalidParams, Message: describeParams(err)}
			return m, false
		default:
			return m.dropped(DropInvalidParams, err), false
		}
	case class == wire.Request && view != nil && view.unknown != nil:
		m.t = unknownTask(view, string(m.method), rawParams(env), false)
	case class == wire.Notification && view != nil && view.unknownNotification != nil:
		m.t = unknownTask(view, string(m.method), rawParams(env), true)
	case class == wire.Request:
		m.kind, m.id, m.reply = msgAnswer, env.ID.Raw, &Error{Code: CodeMethodNotFound, Message: "method not found: " + string(m.method)}
		return m, false
	default:
		return m.dropped(DropUnhandledNotification, nil), false
	}
	m.kind = msgRequest
	if class == wire.Notification {
		m.kind = msgNotification
	}
	return m, false
}

// dropped makes m a drop for reason.
func (m message) dropped(reason DropReason, err error) message {
	m.kind, m.drop, m.err = msgDrop, reason, err
	return m
}

// invalid makes m the drop, for reason, of a frame that is not valid
// JSON-RPC, and under Options.AnswerInvalid its answer too: an error with
// a null id (invalidError).
func (rd *reader) invalid(m message, reason DropReason, err error) message {
	m = m.dropped(reason, err)
	if rd.answerInvalid {
		m.kind, m.id, m.reply = msgAnswer, nullID, invalidError(reason, err, m.env)
	}
	return m
}

// nullID is the id of an answer to a frame whose id is unknown.
var nullID = []byte("null")

// classify returns the class of the scanned object env: by the default
// rule (wire.Envelope.Class, docs/wire.md §2.2), or under
// Options.AnswerInvalid by JSON-RPC 2.0's (specClass). It is the one
// classification of the reader, for lone frames and an array's elements.
func (rd *reader) classify(env *wire.Envelope) wire.Class {
	if rd.answerInvalid {
		return specClass(env)
	}
	return env.Class()
}

// specClass is the class of the object env as JSON-RPC 2.0 reads it
// (Options.AnswerInvalid). With a string method, it is a notification
// without an id, a request with a string, number or null id, and invalid
// with an id of another kind. Without a method, it is a response when it
// has a result or an error, whatever its id, and invalid otherwise; with a
// method that is not a string, invalid. Every answer to an invalid frame
// has an error and no method, so it is a response: two ends under the
// option never answer each other's answers.
func specClass(env *wire.Envelope) wire.Class {
	switch env.Method.Kind {
	case wire.String:
		switch env.ID.Kind {
		case wire.Absent:
			return wire.Notification
		case wire.String, wire.Number, wire.Null:
			return wire.Request
		}
	case wire.Absent:
		if env.Result.Kind != wire.Absent || env.Error.Kind != wire.Absent {
			return wire.Response
		}
	}
	return wire.Unclassified
}

// invalidError is the answer under Options.AnswerInvalid to a frame
// dropped for reason (err says why, for a malformed one or a bad header;
// env is the scanned object, for an unclassified one).
func invalidError(reason DropReason, err error, env *wire.Envelope) *Error {
	switch reason {
	case DropMalformed, DropBadHeader:
		msg := "parse error"
		if err != nil {
			msg += ": " + err.Error()
		}
		return &Error{Code: CodeParseError, Message: msg}
	case DropUnclassified:
		switch {
		case env.Method.Kind != wire.Absent && env.Method.Kind != wire.String:
			return errMethodNotString
		case env.Method.Kind == wire.String:
			return errIDKind
		}
		return errNoMethod
	case DropTooDeep:
		return errTooDeep
	}
	return errNotObject
}

// The answers to invalid requests under Options.AnswerInvalid.
var (
	errMethodNotString = &Error{Code: CodeInvalidRequest, Message: "invalid request: method is not a string"}
	errIDKind          = &Error{Code: CodeInvalidRequest, Message: "invalid request: id is not a string, a number or null"}
	errNoMethod        = &Error{Code: CodeInvalidRequest, Message: "invalid request: neither a method nor a result or an error"}
	errTooDeep         = &Error{Code: CodeInvalidRequest, Message: "invalid request: nested deeper than " + strconv.Itoa(MaxDepth) + " levels"}
	errOversize        = &Error{Code: CodeInvalidRequest, Message: "invalid request: the frame is longer than the maximum frame size"}
	errNotObject       = &Error{Code: CodeInvalidRequest, Message: "invalid request: not an object"}
	errBatchesOff      = &Error{Code: CodeInvalidRequest, Message: "invalid request: batches are not accepted"}
)

// rawParams returns a copy of the frame's params for a handler of unknown
// methods (nil when absent), which runs after the frame is gone.
func rawParams(env *wire.Envelope) json.RawMessage {
	if env.Params.Raw == nil {
		return nil
	}
	return append(json.RawMessage(nil), env.Params.Raw...)
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

// paramsIn is a params member on its way to the decoder of a typed
// handler.
type paramsIn struct {
	raw       []byte
	unchecked *wire.Scanner // non-nil: raw is not validated yet
	toEnd     bool          // raw was guessed to end the object
}

// params returns the params member of the frame being parsed.
func (rd *reader) params() paramsIn {
	p := paramsIn{raw: rd.env.Params.Raw, toEnd: rd.env.ParamsToEnd}
	if rd.env.ParamsUnchecked {
		p.unchecked = &rd.scanner
	}
	return p
}

// malformed returns why raw is not valid JSON, or nil when it is (or was
// validated with the frame); errGuessedParams when raw is only a guess.
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

// paramsRefused is the error of Options.CheckParams for params that
// decoded: the frame is refused (answered, for a request).
type paramsRefused struct{ err error }

func (p paramsRefused) Error() string { return p.err.Error() }

// Unwrap returns the check's error.
func (p paramsRefused) Unwrap() error { return p.err }

// reply returns the answer to a request whose params were refused: the
// check's *Error as it is, CodeInternalError when the check panicked, or
// CodeInvalidParams with the error's text.
func (p paramsRefused) reply() *Error {
	var panicked checkPanic
	if errors.As(p.err, &panicked) {
		return &Error{Code: CodeInternalError, Message: "internal error"}
	}
	return answerOf(p.err, CodeInvalidParams, "invalid params: ")
}

// checkPanic is the refusal of params whose check (Options.CheckParams)
// panicked: the panic is recovered, as a handler's is, and the frame
// refused.
type checkPanic struct{ value any }

func (c checkPanic) Error() string {
	return fmt.Sprintf("rpc: Options.CheckParams panicked: %v", c.value)
}

// check calls Options.CheckParams for the params raw of method, a panic
// recovered as a refusal.
func (rd *reader) check(method string, raw []byte) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = checkPanic{v}
		}
	}()
	err = rd.checkParams(method, json.RawMessage(raw))
	if e, ok := err.(*Error); ok && e == nil {
		return errNilError // its own Error method would panic where the drop is reported
	}
	return err
}

// errGuessedParams says that params that did not decode were only guessed
// to be the last member.
var errGuessedParams = errors.New("rpc: params guessed to end the frame did not decode")

// malformedParams is what a typed handler's decoder returns for params that
// are not valid JSON: the frame is dropped as malformed (or, for guessed
// params, parsed again).
type malformedParams struct{ err error }

func (m malformedParams) Error() string { return m.err.Error() }

// Unwrap returns why the params are malformed (a *wire.SyntaxError), or
// errGuessedParams.
func (m malformedParams) Unwrap() error { return m.err }

// decodeParamsOf decodes the params of a frame into *p for a typed handler
// (or only validates them, when the method takes NoParams). It returns a
// malformedParams error when the params are not valid JSON, and the
// decoding error when they do not decode into P.
func decodeParamsOf[P any](params paramsIn, p *P, omit bool) error {
	var err error
	if !omit {
		err = decodeParams(params.raw, p)
	}
	if err != nil || omit {
		if bad := params.malformed(); bad != nil {
			return malformedParams{bad}
		}
	}
	return err
}

// describeParams returns the text of the CodeInvalidParams answer to
// params that do not decode: which member, what was expected and what
// came, without the Go names of the types, which are the program's
// business (the full error goes to OnDrop and Logger).
func describeParams(err error) string {
	var many tooManyParams
	if errors.As(err, &many) {
		return "invalid params: " + many.Error()
	}
	b := []byte("invalid params: ")
	var pe *PositionError
	if errors.As(err, &pe) {
		b = append(b, "position "...)
		b = strconv.AppendInt(b, int64(pe.Position), 10)
		b = append(b, ": "...)
	}
	var te *gojson.UnmarshalTypeError
	if !errors.As(err, &te) {
		if pe == nil {
			return "invalid params"
		}
		return string(append(b, "not of the expected type"...))
	}
	if te.Field != "" {
		b = append(b, "member "...)
		b = strconv.AppendQuote(b, te.Field)
		b = append(b, ": "...)
	}
	want := expectedKind(te.Type)
	if want == "" {
		return string(append(b, "not of the expected type"...))
	}
	b = append(b, "expected "...)
	b = append(b, want...)
	if got := gotKind(te.Value); got != "" {
		b = append(b, ", got "...)
		b = append(b, got...)
	}
	return string(b)
}

// expectedKind names the JSON kind that decodes into t.
func expectedKind(t reflect.Type) string {
	if t == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return ""
}

// gotKind names the JSON kind the decoder saw, from its description of
// the value ("number -5", "array", ...).
func gotKind(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] == ' ' {
			v = v[:i]
			break
		}
	}
	switch v {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "a boolean"
	case "array":
		return "an array"
	case "object":
		return "an object"
	case "null":
		return "null"
	}
	return ""
}
