package wire

import "unicode/utf8"

// The members of an object, for readers that take a whole object apart
// (sdkproto keeps every member of a payload, unknown ones included, and
// looks its members up by name; the transcript checker reads the members
// of its lines). An object from outside is validated and split in one pass
// (ScanMembers, ScanFillSpans); the values inside it, valid already, are
// then only delimited (Members, Lookup, FillSpans, SpanWalker), so that a
// reader walks its bytes once however many members it reads.

// Members calls yield with the key and the raw value of each member of
// obj, a JSON object that Scan found valid (white space around it
// allowed), in document order, duplicates included, until yield returns
// false. A reader that keeps the last member of each key reads the object
// as JSON.parse does.
//
// The key is unescaped as AppendUnquoteUTF8 does, so that a key matches
// whatever way it is written ("\u0069d" is "id"). It aliases obj when it
// is written without escapes in valid UTF-8, as keys almost always are;
// otherwise it is decoded into a buffer that the next member reuses. The
// value aliases obj.
//
// On input that is not a valid object, Members yields the members it can
// delimit up to the first fault, or none; it never panics.
func Members(obj []byte, yield func(key, value []byte) bool) {
	var buf []byte
	for i := firstMember(obj); i >= 0; {
		m, next, ok := nextMember(obj, i)
		if !ok {
			return
		}
		i = next
		key := m.key(obj)
		if m.slowKey {
			buf = AppendUnquoteUTF8(buf[:0], key)
			key = buf
		}
		if !yield(key, obj[m.value:m.end:m.end]) {
			return
		}
	}
}

// Lookup returns the raw value of the last member of obj called key (JSON.parse
// keeps the last duplicate), with keys compared as Members yields them, or
// nil when there is none or obj is not an object. obj must be valid, as
// for Members. It allocates nothing unless a key is escaped and longer
// than 64 bytes.
func Lookup(obj []byte, key string) []byte {
	var found []byte
	var buf [64]byte
	for i := firstMember(obj); i >= 0; {
		m, next, ok := nextMember(obj, i)
		if !ok {
			break
		}
		i = next
		k := m.key(obj)
		if m.slowKey {
			k = AppendUnquoteUTF8(buf[:0], k)
		}
		if string(k) == key {
			found = obj[m.value:m.end:m.end]
		}
	}
	return found
}

// memberSpan locates one member in its object: the key token from its
// opening quote to just past its closing one, and the value.
type memberSpan struct {
	keyStart, keyEnd int
	value, end       int
	slowKey          bool // escaped, or not valid UTF-8: the key must be decoded
}

// key returns the content of the key token, between its quotes.
func (m memberSpan) key(obj []byte) []byte { return obj[m.keyStart+1 : m.keyEnd-1] }

// firstMember returns the offset of the first member of obj, just past
// its opening brace, or -1 when obj does not start with a brace or the
// object is empty.
func firstMember(obj []byte) int {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return -1
	}
	i++
	if j := skipWS(obj, i); j >= len(obj) || obj[j] == '}' {
		return -1
	}
	return i
}

// nextMember delimits the member at i (white space before it allowed) and
// returns the offset of the member after it, or -1 when this one is the
// last (its value is followed by the closing brace, or by a fault that
// ends the object for a reader that does not validate). ok is false when
// there is no member at i to delimit.
func nextMember(obj []byte, i int) (m memberSpan, next int, ok bool) {
	n := len(obj)
	i = skipWS(obj, i)
	if i >= n || obj[i] != '"' {
		return m, -1, false
	}
	end, escaped, msg := scanString(obj, i)
	if msg != "" {
		return m, -1, false
	}
	m.keyStart, m.keyEnd = i, end
	m.slowKey = escaped || !validKey(obj[i+1:end-1])
	i = skipWS(obj, end)
	if i >= n || obj[i] != ':' {
		return m, -1, false
	}
	i = skipWS(obj, i+1)
	if i >= n {
		return m, -1, false
	}
	vend, _, ok := skipValue(obj, i)
	if !ok {
		return m, -1, false
	}
	m.value, m.end = i, vend
	if next = skipWS(obj, vend); next < n && obj[next] == ',' {
		return m, next + 1, true
	}
	return m, -1, true
}

// ScanMembers validates data as ScanValue does and, when it is an object,
// calls yield with each of its members as Members would, in the same
// pass: a reader of objects from outside, which must validate them before
// it trusts their members, walks each byte once rather than twice. The
// members yielded before a fault are yielded all the same, so a caller
// keeps what it was given only when err is nil. Once yield returns false,
// nothing more is yielded, but the object is still validated to its end.
func ScanMembers(data []byte, yield func(key, value []byte) bool) (top Kind, depth int, err error) {
	var buf []byte
	more := true
	return scanMembers(data, func(m memberSpan) {
		if more {
			key := m.key(data)
			if m.slowKey {
				buf = AppendUnquoteUTF8(buf[:0], key)
				key = buf
			}
			more = yield(key, data[m.value:m.end:m.end])
		}
	})
}

// scanMembers is ScanMembers, handing each member over as located.
func scanMembers(data []byte, member func(memberSpan)) (top Kind, depth int, err error) {
	i := skipWS(data, 0)
	if i == len(data) || data[i] != '{' {
		return ScanValue(data)
	}
	s := scanners.Get().(*Scanner)
	s.partial = true
	depth, fault := s.members(data, i, member)
	s.partial = false
	var e *SyntaxError
	if fault {
		e = new(SyntaxError)
		*e = s.err // a copy: the Scanner's is overwritten by its next use
	}
	scanners.Put(s)
	if e != nil {
		return Absent, depth, e
	}
	return Object, depth, nil
}

// members validates the object whose brace is at data[i], member by
// member, with s in partial mode, and reports its depth, or a fault in
// s.err.
func (s *Scanner) members(data []byte, i int, member func(memberSpan)) (depth int, fault bool) {
	n := len(data)
	depth = 1
	fail := func(off int, msg string) (int, bool) {
		s.err = SyntaxError{Offset: off, Msg: msg}
		return depth, true
	}
	if i = skipWS(data, i+1); i < n && data[i] == '}' {
		i++
	} else {
		for {
			var m memberSpan
			if i >= n {
				return fail(n, "unexpected end of input")
			}
			if data[i] != '"' {
				return fail(i, "expected string for object key")
			}
			end, escaped, msg := scanString(data, i)
			if msg != "" {
				return fail(end, msg)
			}
			m.keyStart, m.keyEnd = i, end
			m.slowKey = escaped || !utf8.Valid(data[i+1:end-1])
			if i = skipWS(data, end); i >= n {
				return fail(n, "unexpected end of input")
			}
			if data[i] != ':' {
				return fail(i, "expected ':' after object key")
			}
			if i = skipWS(data, i+1); i >= n {
				return fail(n, "unexpected end of input")
			}
			_, d, err := s.Scan(data[i:], nil)
			depth = max(depth, 1+d)
			if err != nil {
				s.err.Offset += i
				return depth, true
			}
			m.value, m.end = i, i+s.end
			member(m)
			if i = skipWS(data, m.end); i < n && data[i] == ',' {
				i = skipWS(data, i+1)
				continue
			}
			if i < n && data[i] == '}' {
				i++
				break
			}
			if i >= n {
				return fail(n, "unexpected end of input")
			}
			return fail(i, "expected ',' or '}' after object member")
		}
	}
	if i = skipWS(data, i); i != n {
		return fail(i, "unexpected data after top-level value")
	}
	return depth, false
}
