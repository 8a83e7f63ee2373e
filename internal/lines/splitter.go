package lines

import "bytes"

// Splitter cuts a byte stream that arrives in pieces into LF-terminated
// lines, holding at most Max bytes of a line however long it grows: the
// rest is counted, not kept. It keeps the start of a line that arrives in
// pieces in chunks that are never grown nor copied, and are reused for the
// next lines: however long the line, it holds Max bytes of it, allocated
// once. The zero value with Max set is ready to use; a Splitter is not
// safe for concurrent use.
type Splitter struct {
	// Max is the most bytes of one line kept (and so handed to emit).
	Max int

	chunks [][]byte  // every chunk allocated; the first used ones hold the line
	used   int       // chunks in use
	kept   int       // bytes kept of the current line
	size   int64     // the length of the current line so far
	whole  [1][]byte // the one piece of a line that lies whole in b
}

// The chunks of a line that arrives in pieces: the first small, so that
// most lines cost little, each twice the one before, up to the largest.
const (
	firstChunk = 4 << 10
	maxChunk   = 1 << 20
)

// Split hands every line that b completes to emit, in order: the pieces
// that hold its first Max bytes, without its LF (their concatenation), and
// the line's full length. A line that does not end in b is kept for the
// next call. The pieces are only valid during the call to emit; when the
// whole line is in b, the one piece aliases b.
func (s *Splitter) Split(b []byte, emit func(pieces [][]byte, size int64)) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.keep(b)
			return
		}
		if s.size == 0 { // the whole line is in b
			s.whole[0] = b[:min(i, s.Max)]
			emit(s.whole[:], int64(i))
			s.whole[0] = nil
		} else {
			s.keep(b[:i])
			emit(s.chunks[:s.used], s.size)
			s.reset()
		}
		b = b[i+1:]
	}
}

// keep adds a piece of the current line, as much of it as Max leaves room
// for.
func (s *Splitter) keep(b []byte) {
	s.size += int64(len(b))
	for len(b) > 0 && s.kept < s.Max {
		if s.used == 0 || len(s.chunks[s.used-1]) == cap(s.chunks[s.used-1]) {
			if s.used == len(s.chunks) {
				c := min(firstChunk<<min(s.used, 8), maxChunk, s.Max-s.kept)
				s.chunks = append(s.chunks, make([]byte, 0, c))
			}
			s.used++
		}
		c := &s.chunks[s.used-1]
		n := min(len(b), cap(*c)-len(*c), s.Max-s.kept)
		*c = append(*c, b[:n]...)
		b = b[n:]
		s.kept += n
	}
}

// reset empties the chunks for the next line.
func (s *Splitter) reset() {
	for i := range s.used {
		s.chunks[i] = s.chunks[i][:0]
	}
	s.used, s.kept, s.size = 0, 0, 0
}

// Pending returns the pieces kept of the line not yet ended (nil when
// none): they alias the Splitter's chunks until the next Split or End.
func (s *Splitter) Pending() [][]byte {
	if s.size == 0 {
		return nil
	}
	return s.chunks[:s.used]
}

// End hands an unterminated last line, if there is one, to emit as Split
// would, and reports whether there was one. The Splitter is then empty.
func (s *Splitter) End(emit func(pieces [][]byte, size int64)) bool {
	if s.size == 0 {
		return false
	}
	emit(s.chunks[:s.used], s.size)
	s.reset()
	return true
}
