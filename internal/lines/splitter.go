package lines

import "bytes"

// Splitter cuts a byte stream that arrives in pieces into LF-terminated
// lines, holding at most Max bytes of a line however long it grows: the
// rest is counted, not kept. The zero value with Max set is ready to use;
// a Splitter is not safe for concurrent use.
type Splitter struct {
	// Max is the most bytes of one line kept (and so handed to emit).
	Max int

	partial []byte // the first bytes of the line so far (at most Max)
	size    int64  // the length of the line so far
}

// Split hands every line that b completes to emit, in order: the first
// Max bytes of the line, without its LF, and the line's full length. A
// line that does not end in b is kept for the next call. line is only
// valid during the call to emit; when the whole line is in b, it aliases b.
func (s *Splitter) Split(b []byte, emit func(line []byte, size int64)) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.keep(b)
			return
		}
		if s.size == 0 { // the whole line is in b
			line := b[:i]
			emit(line[:min(len(line), s.Max)], int64(len(line)))
		} else {
			s.keep(b[:i])
			emit(s.partial, s.size)
			s.partial, s.size = s.partial[:0], 0
		}
		b = b[i+1:]
	}
}

// keep adds a piece of the current line.
func (s *Splitter) keep(b []byte) {
	s.size += int64(len(b))
	if room := s.Max - len(s.partial); room > 0 {
		s.partial = append(s.partial, b[:min(room, len(b))]...)
	}
}

// Pending returns the kept bytes of the line not yet ended (nil when none):
// they alias the Splitter's buffer until the next Split or End.
func (s *Splitter) Pending() []byte {
	if s.size == 0 {
		return nil
	}
	return s.partial
}

// End hands an unterminated last line, if there is one, to emit as Split
// would, and reports whether there was one. The Splitter is then empty.
func (s *Splitter) End(emit func(line []byte, size int64)) bool {
	if s.size == 0 {
		return false
	}
	emit(s.partial, s.size)
	s.partial, s.size = nil, 0
	return true
}
