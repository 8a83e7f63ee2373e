// Package wire validates JSON-RPC 2.0 lines and locates the members of their
// envelope in a single allocation-free pass. It is the module's one JSON
// scanner beside go-json: it also takes objects apart member by member
// (members.go) for the readers that keep or look up every member.
//
// Validity follows JavaScript JSON.parse (RFC 8259 strict), because the peers
// we interoperate with decide validity that way. Input lines are assumed to be
// valid UTF-8 already (invalid bytes are replaced with U+FFFD upstream), so the
// scanner does not re-validate UTF-8.
package wire

import (
	"encoding/binary"
	"strconv"
)

// Kind is the JSON type of a value, read from its first byte.
type Kind uint8

// Kinds of JSON values. Absent is the zero value so that an unset Value
// means "member not present", which is distinct from an explicit null.
const (
	Absent Kind = iota // member not present
	Null
	Bool
	Number
	String
	Array
	Object
)

// kindNames are the name and the prose phrase of each kind.
var kindNames = [...]struct{ name, phrase string }{
	Absent: {"absent", "nothing (member absent)"},
	Null:   {"null", "null"},
	Bool:   {"boolean", "a boolean"},
	Number: {"number", "a number"},
	String: {"string", "a string"},
	Array:  {"array", "an array"},
	Object: {"object", "an object"},
}

// String returns the lower-case name of k ("absent", "null", "boolean",
// "number", "string", "array", "object"), matching JavaScript typeof-style
// wording used in error messages.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k].name
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Phrase names k as a message's prose does, with its article: "a string",
// "an object", "null", and "nothing (member absent)" for Absent.
func (k Kind) Phrase() string {
	if int(k) < len(kindNames) {
		return kindNames[k].phrase
	}
	return k.String()
}

// kindOf classifies a value by its first byte. The caller guarantees that b
// starts a syntactically valid value.
func kindOf(c byte) Kind {
	switch c {
	case 'n':
		return Null
	case 't', 'f':
		return Bool
	case '"':
		return String
	case '[':
		return Array
	case '{':
		return Object
	}
	return Number
}

// KindOf returns the kind of the raw JSON value raw (Absent when it is
// empty), read from its first byte; raw must be a valid value.
func KindOf(raw []byte) Kind {
	if len(raw) == 0 {
		return Absent
	}
	return kindOf(raw[0])
}

// Value is one JSON value as raw bytes of the line (a sub-slice, never a copy).
// It aliases the scanned line, so it is only valid as long as that buffer is.
type Value struct {
	Raw  []byte // exact bytes of the value token(s), no surrounding whitespace; nil when Absent
	Kind Kind
}

// Envelope holds the top-level members of a JSON-RPC frame. A member missing
// from the frame has Kind Absent; an explicit null has Kind Null.
type Envelope struct {
	JSONRPC, ID, Method, Params, Result, Error Value

	// ParamsUnchecked says Params was delimited but not validated (see
	// Scanner.LazyParams).
	ParamsUnchecked bool

	// ParamsToEnd says Params was not even delimited: it was taken to run
	// to the end of the object, on the guess that it is the last member
	// (see Scanner.ParamsToEnd). ParamsUnchecked is then set too.
	ParamsToEnd bool

	// ParamsLast says params is the object's last member (taken to be, when
	// ParamsToEnd is set): a reader of many frames can tell from it whether
	// its peer writes params last, and a ParamsToEnd guess is worth making.
	ParamsLast bool
}

// The member indexes of the envelope's members (see Envelope.member).
const (
	memberJSONRPC = iota
	memberID
	memberMethod
	memberParams
	memberResult
	memberError
)

// member returns the envelope field for member index m (see memberIndex).
func (env *Envelope) member(m int) *Value {
	switch m {
	case memberJSONRPC:
		return &env.JSONRPC
	case memberID:
		return &env.ID
	case memberMethod:
		return &env.Method
	case memberParams:
		return &env.Params
	case memberResult:
		return &env.Result
	default:
		return &env.Error
	}
}

// SyntaxError describes why a line is not valid JSON.
type SyntaxError struct {
	Offset int    // byte offset in the line where the problem was detected
	Msg    string // short description, e.g. "unexpected end of input"
}

// Error returns "invalid JSON at offset N: msg".
func (e *SyntaxError) Error() string {
	return "invalid JSON at offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Scanner validates lines and extracts envelopes. Its zero value is ready; it
// keeps scratch storage between calls (the nesting stack and the last error)
// and must not be used concurrently.
type Scanner struct {
	// stack has one bit per open container: 1 = object, 0 = array. A bit
	// stack keeps 100k-deep input at ~12 KiB and is reused across calls, so
	// the steady state allocates nothing.
	stack []uint64
	// err is returned by pointer so that failing scans do not allocate.
	err SyntaxError

	// LazyParams makes Scan delimit the value of the envelope's params
	// member without validating it, and report so in
	// Envelope.ParamsUnchecked. The line is then valid JSON if and only if
	// that value is: a caller that decodes it with a decoder that rejects
	// invalid JSON has it checked for free (params are most of a request's
	// bytes), and a caller that does not must validate it (Scan it). Every
	// other byte of the line is validated as usual, and the depth reported
	// counts the params value too.
	LazyParams bool

	// ParamsToEnd, with LazyParams, makes Scan stop at the value of a
	// top-level params member when the line ends with the object's closing
	// brace and that value would be shorter than MaxToEnd bytes: it takes
	// params to be the last member, and its value to be all that lies
	// between the colon and that brace (trailing whitespace trimmed),
	// without looking at those bytes, and reports so in
	// Envelope.ParamsToEnd. The members before params are validated and
	// located as usual; the reported depth is then an upper bound, counting
	// each byte of params as a level.
	//
	// The guess is right, and the line valid, exactly when that value is
	// one valid JSON value. A decoder that rejects invalid JSON and
	// trailing data confirms it by decoding the value; when it fails (or
	// when no such decoder is at hand), the line must be scanned again
	// without ParamsToEnd, since members after params (another id, method
	// or params) would change what the line is. This skips the params of
	// the common frame, which ends with them, instead of walking them
	// twice: once here and once in the decoder.
	ParamsToEnd bool

	// partial makes Scan validate the value at the start of the line and
	// stop after it, whatever follows, recording where it ended in end:
	// ScanMembers validates an object member by member so.
	partial bool
	end     int
}

// MaxToEnd bounds the params a ParamsToEnd scan takes without delimiting
// them. The byte count is the depth bound it reports, so it keeps that
// bound far below any depth limit a caller applies; and past a few
// kilobytes, delimiting costs little next to decoding.
const MaxToEnd = 8 << 10

// Scan validates line as exactly one JSON value, optionally surrounded by JSON
// whitespace (space, tab, LF, CR), with JSON.parse semantics.
//
// It returns the kind of the top-level value and reports the maximum nesting
// depth (a scalar has depth 0, `{}` and `[]` depth 1, `{"a":[1]}` depth 2).
// env, if non-nil, is reset first in every case and, when the top-level value
// is an object, receives the raw bytes of its depth-1 members jsonrpc, id,
// method, params, result and error. Keys match exactly after unescaping, and
// for duplicate keys the last occurrence wins, as with JSON.parse.
//
// When line is invalid, err is a *SyntaxError, top is Absent, env is left
// empty, and depth is the maximum depth reached before the error. The
// *SyntaxError lives inside s and is only valid until the next call to Scan;
// this keeps failing scans allocation-free. Copy it to retain it.
//
// Validation is iterative with an explicit stack, so arbitrarily deep input
// cannot overflow the goroutine stack.
func (s *Scanner) Scan(line []byte, env *Envelope) (top Kind, depth int, err error) {
	if env != nil {
		*env = Envelope{}
	}
	n := len(line)
	i := skipWS(line, 0)
	if i == n {
		return s.fail(env, n, 0, "unexpected end of input")
	}
	top = kindOf(line[i])

	var (
		d        int  // current depth
		maxD     int  // maximum depth seen
		inObj    bool // whether the innermost open container is an object
		pending  = -1 // envelope member whose value is being scanned at depth 1
		last     = -1 // member (-1: not of the envelope) whose value ended last at depth 1
		memStart int  // start offset of the pending member's value
		words    = s.stack[:0]
	)
	// Only track members when the top-level value is an object.
	track := env != nil && top == Object

	for {
		// State: expecting a value at i (whitespace already skipped).
		if i >= n {
			s.stack = words
			return s.fail(env, n, maxD, "unexpected end of input")
		}
		if pending == memberParams && d == 1 && s.LazyParams {
			// After an earlier params member, this one is delimited: the
			// line is valid only if the member it replaces is (see below).
			if s.ParamsToEnd && !env.ParamsUnchecked {
				if raw, ok := paramsToEnd(line, i); ok {
					s.stack = words
					env.Params = Value{Raw: raw, Kind: kindOf(raw[0])}
					env.ParamsUnchecked, env.ParamsToEnd, env.ParamsLast = true, true, true
					return top, max(maxD, d+len(raw)), nil
				}
			}
			if env.ParamsUnchecked && !valid(env.Params.Raw) {
				// A duplicate params member: the one it replaces still
				// counts for the validity of the line.
				s.stack = words
				return s.fail(env, memStart, maxD, "invalid value of an earlier params member")
			}
			end, depth, ok := skipValue(line, i)
			if !ok {
				s.stack = words
				if end < n {
					return s.fail(env, end, maxD, "invalid character looking for value")
				}
				return s.fail(env, n, maxD, "unexpected end of input")
			}
			maxD = max(maxD, d+depth)
			env.ParamsUnchecked = true
			i = end
		} else {
			switch c := line[i]; c {
			case '{', '[':
				isObj := c == '{'
				w := d >> 6
				if w >= len(words) {
					words = append(words, 0)
				}
				if isObj {
					words[w] |= 1 << (d & 63)
				} else {
					words[w] &^= 1 << (d & 63)
				}
				d++
				if d > maxD {
					maxD = d
				}
				inObj = isObj
				i = skipWS(line, i+1)
				if i < n && ((isObj && line[i] == '}') || (!isObj && line[i] == ']')) {
					i++
					d, inObj = pop(words, d)
					break // to after-value handling
				}
				if !isObj {
					continue // next array element
				}
				// First key of an object.
				var msg string
				if i, pending, memStart, msg = s.objectKey(line, i, d == 1 && track, pending, memStart); msg != "" {
					s.stack = words
					return s.fail(env, i, maxD, msg)
				}
				continue
			case '"':
				end, _, bad := scanString(line, i)
				if bad != "" {
					s.stack = words
					return s.fail(env, end, maxD, bad)
				}
				i = end
			case 't':
				if !hasLit(line, i, "true") {
					s.stack = words
					return s.fail(env, i, maxD, "invalid literal")
				}
				i += 4
			case 'f':
				if !hasLit(line, i, "false") {
					s.stack = words
					return s.fail(env, i, maxD, "invalid literal")
				}
				i += 5
			case 'n':
				if !hasLit(line, i, "null") {
					s.stack = words
					return s.fail(env, i, maxD, "invalid literal")
				}
				i += 4
			default:
				end, bad := scanNumber(line, i)
				if bad != "" {
					s.stack = words
					return s.fail(env, end, maxD, bad)
				}
				i = end
			}
		}

		// State: a value just ended at i. Closing brackets loop back here
		// because each closed container is itself a completed value.
		for {
			if d == 1 && track {
				if pending >= 0 {
					v := env.member(pending)
					v.Raw = line[memStart:i:i]
					v.Kind = kindOf(line[memStart])
				}
				last, pending = pending, -1
			}
			i = skipWS(line, i)
			if d == 0 {
				s.stack = words
				if s.partial {
					// The value ended before the white space just skipped:
					// it never ends with white space itself.
					for s.end = i; isWS(line[s.end-1]); s.end-- {
					}
					return top, maxD, nil
				}
				if i != n {
					return s.fail(env, i, maxD, "unexpected data after top-level value")
				}
				if track {
					env.ParamsLast = last == memberParams
				}
				return top, maxD, nil
			}
			if i >= n {
				s.stack = words
				return s.fail(env, n, maxD, "unexpected end of input")
			}
			c := line[i]
			if c == ',' {
				i = skipWS(line, i+1)
				if inObj {
					var msg string
					if i, pending, memStart, msg = s.objectKey(line, i, d == 1 && track, pending, memStart); msg != "" {
						s.stack = words
						return s.fail(env, i, maxD, msg)
					}
				}
				break // expect a value
			}
			if (inObj && c == '}') || (!inObj && c == ']') {
				i++
				d, inObj = pop(words, d)
				continue
			}
			s.stack = words
			if inObj {
				return s.fail(env, i, maxD, "expected ',' or '}' after object member")
			}
			return s.fail(env, i, maxD, "expected ',' or ']' after array element")
		}
	}
}

// paramsToEnd returns the bytes from line[i] to the closing brace that ends
// line, trailing whitespace trimmed, when there is such a brace and what
// lies before it is neither empty nor MaxToEnd bytes long.
func paramsToEnd(line []byte, i int) ([]byte, bool) {
	end := len(line)
	for end > i && isWS(line[end-1]) {
		end--
	}
	if end-i < 2 || line[end-1] != '}' {
		return nil, false
	}
	end-- // the brace
	for end > i && isWS(line[end-1]) {
		end--
	}
	if end == i || end-i >= MaxToEnd {
		return nil, false
	}
	return line[i:end:end], true
}

// pop closes the innermost container and reports the new depth and whether
// the container that is now innermost is an object.
func pop(words []uint64, d int) (int, bool) {
	d--
	if d == 0 {
		return 0, false
	}
	p := d - 1
	return d, words[p>>6]&(1<<(p&63)) != 0
}

// objectKey scans an object key at i and returns the offset of its value.
// Only the depth-1 keys of a tracked top-level object (top) name envelope
// members: for those it returns the member as the pending one, whose value
// starts at next; for nested keys it returns pending and memStart as they
// were. The loop's state goes in and out by value, so that it can stay in
// registers.
func (s *Scanner) objectKey(line []byte, i int, top bool, pending, memStart int) (next, newPending, newMemStart int, msg string) {
	next, m, msg := s.key(line, i, top)
	if top { // on an error, the scan ends: the state no longer matters
		pending, memStart = m, next
	}
	return next, pending, memStart, msg
}

// key scans `"key" ws : ws` starting at i and returns the offset of the member
// value. When match is set it also reports which envelope member the key names
// (-1 for none). msg is non-empty on a syntax error, with next as its offset.
func (s *Scanner) key(line []byte, i int, match bool) (next, member int, msg string) {
	member = -1
	if i >= len(line) {
		return len(line), -1, "unexpected end of input"
	}
	if line[i] != '"' {
		return i, -1, "expected string for object key"
	}
	var end int
	if match {
		member, end = envelopeKey(line, i)
	}
	if end == 0 {
		var esc bool
		var bad string
		if end, esc, bad = scanString(line, i); bad != "" {
			return end, -1, bad
		}
		if match {
			member = memberIndex(line[i+1:end-1], esc)
		}
	}
	j := skipWS(line, end)
	if j >= len(line) {
		return len(line), -1, "unexpected end of input"
	}
	if line[j] != ':' {
		return j, -1, "expected ':' after object key"
	}
	return skipWS(line, j+1), member, ""
}

// The envelope's keys as they are almost always written (no escapes), as
// little-endian words of their first eight bytes, quotes included.
var (
	wordJSONRPC = binary.LittleEndian.Uint64([]byte(`"jsonrpc`))
	wordMethod  = binary.LittleEndian.Uint64([]byte(`"method"`))
	wordParams  = binary.LittleEndian.Uint64([]byte(`"params"`))
	wordResult  = binary.LittleEndian.Uint64([]byte(`"result"`))
	wordError   = binary.LittleEndian.Uint64([]byte(`"error"` + "\x00"))
	wordID      = binary.LittleEndian.Uint64([]byte(`"id"` + "\x00\x00\x00\x00"))
)

// envelopeKey recognises an envelope key written plainly at line[i] (a
// quote) by comparing words, and returns its member index and the offset
// just past its closing quote; end is 0 when the key is anything else
// (escaped, unknown, or too close to the end of the line), for the general
// path to scan. A plain key is a valid string, so nothing is skipped.
func envelopeKey(line []byte, i int) (member, end int) {
	if len(line)-i < 9 {
		return -1, 0
	}
	w := binary.LittleEndian.Uint64(line[i:])
	switch {
	case w == wordMethod:
		return memberMethod, i + 8
	case w == wordParams:
		return memberParams, i + 8
	case w&(1<<32-1) == wordID:
		return memberID, i + 4
	case w == wordResult:
		return memberResult, i + 8
	case w&(1<<56-1) == wordError:
		return memberError, i + 7
	case w == wordJSONRPC && line[i+8] == '"':
		return memberJSONRPC, i + 9
	}
	return -1, 0
}

// memberIndex maps a key's raw content to an envelope member index, or -1.
// Escaped keys (rare) are decoded into a small stack buffer: every target is
// short ASCII, so anything longer or non-ASCII cannot match.
func memberIndex(content []byte, escaped bool) int {
	if escaped {
		var buf [8]byte
		n, ok := decodeShortASCII(buf[:], content)
		if !ok {
			return -1
		}
		content = buf[:n]
	}
	// A switch on string(b) does not allocate.
	switch string(content) {
	case "jsonrpc":
		return memberJSONRPC
	case "id":
		return memberID
	case "method":
		return memberMethod
	case "params":
		return memberParams
	case "result":
		return memberResult
	case "error":
		return memberError
	}
	return -1
}

// decodeShortASCII decodes the escaped content of a valid JSON string into
// buf. It fails when the decoded string is longer than buf or contains a
// non-ASCII rune (including surrogates, lone or paired), since no envelope
// key could then match.
func decodeShortASCII(buf []byte, content []byte) (int, bool) {
	n := 0
	for i := 0; i < len(content); {
		c := content[i]
		if c == '\\' {
			// content comes from a validated string, so escapes are complete.
			switch e := content[i+1]; e {
			case 'u':
				r := hex4(content[i+2 : i+6])
				if r >= 0x80 {
					return 0, false
				}
				c = byte(r)
				i += 6
			default:
				c = unescapeByte(e)
				i += 2
			}
		} else {
			if c >= 0x80 {
				return 0, false
			}
			i++
		}
		if n == len(buf) {
			return 0, false
		}
		buf[n] = c
		n++
	}
	return n, true
}

// unescapeByte maps the character after a backslash in a simple escape to the
// byte it denotes.
func unescapeByte(e byte) byte {
	switch e {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return e // '"', '\\', '/'
}

// hex4 decodes four hex digits, returning -1 if any is invalid.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(v)
	}
	return r
}

// isWS reports JSON whitespace. JSON.parse accepts exactly these four; other
// Unicode spaces (NBSP, U+2028, BOM) are rejected.
func isWS(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func skipWS(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && isWS(b[i]) {
		i++
	}
	return i
}

func hasLit(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// scanString scans the string token starting with the quote at b[i]. It
// returns the offset just past the closing quote and whether the string has
// escapes. On error it returns the offset of the problem and a message.
func scanString(b []byte, i int) (end int, escaped bool, msg string) {
	i++
	n := len(b)
	for {
		i = indexSpecial(b, i)
		if i >= n {
			return n, escaped, "unexpected end of input in string"
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, escaped, ""
		case c == '\\':
			escaped = true
			if i+1 >= n {
				return n, escaped, "unexpected end of input in string escape"
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if n-i < 6 {
					return n, escaped, "unexpected end of input in \\u escape"
				}
				if hex4(b[i+2:i+6]) < 0 {
					return i, escaped, "invalid \\u escape"
				}
				i += 6
			default:
				return i, escaped, "invalid escape in string"
			}
		default: // a control character
			return i, escaped, "control character in string"
		}
	}
}

// scanNumber scans `-? (0 | [1-9][0-9]*) (\.[0-9]+)? ([eE][+-]?[0-9]+)?` at
// b[i]. Whatever follows the number is judged by the caller, which is how
// `01` and `1x` are rejected.
func scanNumber(b []byte, i int) (end int, msg string) {
	n := len(b)
	if b[i] == '-' {
		i++
		if i >= n {
			return n, "unexpected end of input in number"
		}
	}
	switch c := b[i]; {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		i++
		for i < n && isDigit(b[i]) {
			i++
		}
	default:
		return i, "invalid character looking for value"
	}
	if i < n && b[i] == '.' {
		i++
		if i >= n || !isDigit(b[i]) {
			return i, "expected digit after decimal point"
		}
		for i < n && isDigit(b[i]) {
			i++
		}
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= n || !isDigit(b[i]) {
			return i, "expected digit in exponent"
		}
		for i < n && isDigit(b[i]) {
			i++
		}
	}
	return i, ""
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// fail records a syntax error in s and returns it without allocating.
func (s *Scanner) fail(env *Envelope, off, depth int, msg string) (Kind, int, error) {
	if env != nil {
		*env = Envelope{}
	}
	s.err = SyntaxError{Offset: off, Msg: msg}
	return Absent, depth, &s.err
}
