package wire

import (
	"errors"
	"math"
	"unicode/utf8"
)

// Spans are members located by offsets into their object's bytes: a
// reader that keeps the members of many small objects beside those bytes
// (sdkproto keeps every decoded payload so) keeps 16 bytes a member
// rather than a Member's 48, and need not copy an escaped key to keep it.

// Span is one member of an object: where its key and its value lie in the
// object's bytes.
type Span struct {
	key    uint32 // offset of the key's content, slowKey in the top bit
	keyEnd uint32 // offset of the key's closing quote
	value  uint32 // offset of the value's first byte
	end    uint32 // offset just past the value's last byte
}

// slowKey flags (in Span.key) a key written with escapes or in invalid
// UTF-8, which must be decoded to be compared.
const slowKey = 1 << 31

// MaxSpanned is the largest object whose members Spans locate: their
// offsets take 31 bits.
const MaxSpanned = math.MaxInt32

// ErrTooLargeToSpan is the error of ScanFillSpans for an object larger
// than MaxSpanned bytes.
var ErrTooLargeToSpan = errors.New("wire: object too large to locate its members (2 GiB)")

func spanOf(m memberSpan) Span {
	s := Span{key: uint32(m.keyStart + 1), keyEnd: uint32(m.keyEnd - 1), value: uint32(m.value), end: uint32(m.end)}
	if m.slowKey {
		s.key |= slowKey
	}
	return s
}

// Value returns the member's raw value in obj, the bytes the span was
// located in; it has no spare capacity.
func (s Span) Value(obj []byte) []byte { return obj[s.value:s.end:s.end] }

// ValueStart returns the offset in obj of the value's first byte.
func (s Span) ValueStart() int { return int(s.value) }

// Key returns the member's key, unescaped as Members yields it: the bytes
// of obj, or, when the key is escaped or in invalid UTF-8, its decoding
// appended to buf[:0].
func (s Span) Key(obj, buf []byte) []byte {
	raw := obj[s.key&^slowKey : s.keyEnd]
	if s.key&slowKey == 0 {
		return raw
	}
	return AppendUnquoteUTF8(buf[:0], raw)
}

// PlainKey returns the member's key as written in obj, and whether that is
// the key itself (written without escapes, in valid UTF-8: almost always),
// so that a reader comparing it with many names pays for no call each.
func (s Span) PlainKey(obj []byte) (key []byte, plain bool) {
	return obj[s.key&^slowKey : s.keyEnd], s.key&slowKey == 0
}

// HasKey reports whether the member's key, unescaped, is key. It
// allocates nothing unless an escaped key is longer than 64 bytes.
func (s Span) HasKey(obj []byte, key string) bool {
	if s.key&slowKey == 0 {
		return string(obj[s.key:s.keyEnd]) == key
	}
	return s.hasSlowKey(obj, key)
}

// hasSlowKey is HasKey for a key that must be decoded, out of line so that
// HasKey is inlined.
func (s Span) hasSlowKey(obj []byte, key string) bool {
	var buf [64]byte
	return string(s.Key(obj, buf[:0])) == key
}

// LastSpan returns the last of spans (of obj) whose key is key, and false
// when there is none.
func LastSpan(obj []byte, spans []Span, key string) (Span, bool) {
	for i := len(spans) - 1; i >= 0; i-- {
		if spans[i].HasKey(obj, key) {
			return spans[i], true
		}
	}
	return Span{}, false
}

// FillSpans stores the spans of the members of obj, a valid object no
// larger than MaxSpanned bytes (white space around it allowed), in dst, as
// many as it holds, in document order, duplicates included, and returns how
// many obj has: a reader that keeps them in a slice of their number fills
// a buffer of its own first, which need not leave the stack, and reads the
// object again only when the buffer was too small.
func FillSpans(dst []Span, obj []byte) int {
	n := 0
	for i := firstMember(obj); i >= 0; n++ {
		m, next, ok := nextMember(obj, i)
		if !ok {
			break
		}
		i = next
		if n < len(dst) {
			dst[n] = spanOf(m)
		}
	}
	return n
}

// ScanFillSpans validates data as ScanValue does and, when it is an
// object, stores the spans of its members in dst as FillSpans does, in the
// same pass, counting them in n. An object larger than
// MaxSpanned bytes fails with ErrTooLargeToSpan.
func ScanFillSpans(dst []Span, data []byte) (n int, top Kind, depth int, err error) {
	if len(data) > MaxSpanned {
		return 0, Absent, 0, ErrTooLargeToSpan
	}
	top, depth, err = scanMembers(data, func(m memberSpan) {
		if n < len(dst) {
			dst[n] = spanOf(m)
		}
		n++
	})
	return n, top, depth, err
}

// SpanWalker walks the members of a valid object one at a time, for a
// reader that takes some of their values apart as it goes, and so finds
// where they end itself rather than having them skipped first: Next
// locates a member's key and where its value starts, and Done (the
// value's end, or 0 to have it found) moves past the value. The object
// may be followed by other bytes, which are not read: End reports where
// it ended.
type SpanWalker struct {
	obj     []byte
	next    int  // offset of the next member, -1 when no member is left
	end     int  // offset just past the closing brace, once known
	started bool // the opening brace was found (by the first Next)
}

// WalkSpans returns a SpanWalker of the object at the start of obj (white
// space before it allowed), which must be valid; obj, whatever follows the
// object in it, must be no larger than MaxSpanned bytes.
func WalkSpans(obj []byte) SpanWalker { return SpanWalker{obj: obj} }

// start finds the first member, past the opening brace: the work of
// WalkSpans, left to the first Next so that WalkSpans is inlined.
func (w *SpanWalker) start() {
	w.started, w.next = true, -1
	obj := w.obj
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return
	}
	if j := skipWS(obj, i+1); j < len(obj) && obj[j] == '}' {
		w.end = j + 1
		return
	}
	w.next = i + 1
}

// Next returns the span of the next member, its end not yet known (the
// value lies from ValueStart on), or false when the object has no member
// left.
func (w *SpanWalker) Next() (s Span, ok bool) {
	if !w.started {
		w.start()
	}
	if w.next < 0 {
		return Span{}, false
	}
	obj, i := w.obj, skipWS(w.obj, w.next)
	if i >= len(obj) || obj[i] != '"' {
		w.next = -1
		return Span{}, false
	}
	end, escaped, msg := scanString(obj, i)
	if msg != "" {
		w.next = -1
		return Span{}, false
	}
	m := memberSpan{keyStart: i, keyEnd: end, slowKey: escaped || !validKey(obj[i+1:end-1])}
	if i = skipWS(obj, end); i >= len(obj) || obj[i] != ':' {
		w.next = -1
		return Span{}, false
	}
	if m.value = skipWS(obj, i+1); m.value >= len(obj) {
		w.next = -1
		return Span{}, false
	}
	return spanOf(m), true
}

// Done records that the value of s, the span Next returned last, ends at
// end (an offset in the walked bytes), or, when end is 0, finds that end
// by delimiting the value; it returns s complete, and false when the
// value cannot be delimited (the walk then stops).
func (w *SpanWalker) Done(s Span, end int) (Span, bool) {
	obj := w.obj
	if end == 0 {
		var ok bool
		if end, _, ok = skipValue(obj, int(s.value)); !ok {
			w.next = -1
			return s, false
		}
	}
	s.end = uint32(end)
	w.next = -1
	switch i := skipWS(obj, end); {
	case i < len(obj) && obj[i] == ',':
		w.next = i + 1
	case i < len(obj) && obj[i] == '}':
		w.end = i + 1
	}
	return s, true
}

// End returns the offset just past the object's closing brace once Next
// has found no member left, or 0 when it is not known.
func (w *SpanWalker) End() int { return w.end }

// validKey is utf8.Valid for a key, which is most often short and ASCII.
func validKey(k []byte) bool {
	for _, c := range k {
		if c >= utf8.RuneSelf {
			return utf8.Valid(k)
		}
	}
	return true
}
