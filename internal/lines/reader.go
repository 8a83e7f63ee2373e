// Package lines cuts a byte stream into LF-terminated lines: a Reader reads
// them without copying, skipping lines longer than a limit without holding
// them in memory; a Splitter cuts a stream written in pieces, keeping a
// bounded prefix of each line; a Tail keeps the last lines of a stream.
package lines

import (
	"bytes"
	"io"
)

// The read buffer grows with traffic and is given back when traffic is
// light: a Reader starts with MinBuffer bytes, grows towards ReadChunk while
// its reads fill the buffer, grows further (up to the line limit) only to
// hold a long line, and returns to MinBuffer once the input comes in small
// reads again. So an idle connection holds a few KiB, and a busy one reads
// in large chunks.
const (
	// MinBuffer is the size of the read buffer of a Reader at rest.
	MinBuffer = 4 << 10
	// ReadChunk is the size the buffer grows to while reads fill it.
	ReadChunk = 64 << 10
)

// Reader reads LF-terminated lines from an io.Reader. Lines that fit its
// buffer are returned as sub-slices of it, valid until the next call to Next.
// It is not safe for concurrent use.
type Reader struct {
	window
	max     int
	scanned int    // buf[start:start+scanned] is known to hold no LF
	prefix  []byte // the start of the last oversize line, once there was one
}

// NewReader returns a Reader of lines no longer than max bytes (LF excluded).
func NewReader(r io.Reader, max int) *Reader {
	size := min(MinBuffer, max+1)
	return &Reader{window: window{r: r, buf: make([]byte, size)}, max: max}
}

// Event is what Next found.
type Event struct {
	// Line is the line without its LF, when Oversize is false. It aliases the
	// Reader's buffer and is valid until the next call to Next.
	Line []byte
	// Oversize is set when a line longer than the limit was skipped.
	Oversize bool
	// Prefix is the start of a line skipped as oversize, at most
	// PrefixSize bytes (so that a reader may learn what the line was). It
	// is valid until the next call to Next.
	Prefix []byte
	// Size is the length of the line in bytes, LF excluded; for a frame of
	// a HeaderReader, the length of its body; for a malformed header
	// block, the bytes discarded with it.
	Size int64
	// Malformed, set by a HeaderReader only, says what was wrong with a
	// header block that was discarded, with what followed it up to the next
	// frame; Prefix then holds its first bytes.
	Malformed error
	// Warning, set by a HeaderReader only, says that the frame in Line
	// declared a Content-Type other than JSON in UTF-8.
	Warning error
}

// Next returns the next line, or reports a skipped oversize line. At the end
// of the input it returns io.EOF, or the read error, and the number of bytes
// of an unterminated tail that were discarded.
func (r *Reader) Next() (ev Event, tail int, err error) {
	for {
		if i := bytes.IndexByte(r.buf[r.start+r.scanned:r.end], '\n'); i >= 0 {
			n := r.scanned + i
			line := r.buf[r.start : r.start+n]
			if n >= ReadChunk {
				r.keepLarge = keepLargeRefills
			}
			r.start += n + 1
			r.scanned = 0
			return Event{Line: line, Size: int64(n)}, 0, nil
		}
		r.scanned = r.end - r.start
		if r.scanned > r.max {
			size, tail, err := r.skipLine()
			if err != nil {
				return Event{}, tail, err
			}
			return Event{Oversize: true, Size: size, Prefix: r.prefix}, 0, nil
		}
		if err := r.fill(r.max + 1); err != nil {
			tail := r.end - r.start
			r.start, r.end, r.scanned = 0, 0, 0
			return Event{}, tail, err
		}
	}
}

// PrefixSize bounds the start of an oversize line that Next reports.
const PrefixSize = 1 << 10

// skipChunk is the size of the reads that skip an oversize line: large, so
// that a long line costs few reads, yet far below any sensible maximum
// line length.
const skipChunk = 256 << 10

// skipLine discards the current line up to and including its LF, reading as
// needed, and returns its length; it keeps its first PrefixSize bytes in
// r.prefix. The line's bytes are not held: it reads into one buffer of
// skipChunk bytes (at most max+1), made once per line and reused for
// every read, so that skipping allocates nothing per read and goes at the
// speed of the input.
func (r *Reader) skipLine() (size int64, tail int, err error) {
	if r.prefix == nil {
		r.prefix = make([]byte, 0, PrefixSize)
	}
	r.prefix = append(r.prefix[:0], r.buf[r.start:min(r.end, r.start+PrefixSize)]...)
	// What is buffered holds no LF (Next scanned it): count it, drop it.
	size = int64(r.end - r.start)
	r.start, r.end, r.scanned = 0, 0, 0
	if n := min(skipChunk, r.max+1); len(r.buf) != n {
		r.buf = make([]byte, n)
	}
	for {
		if i := bytes.IndexByte(r.buf[r.start:r.end], '\n'); i >= 0 {
			size += int64(i)
			r.start += i + 1
			r.scanned = 0
			return size, 0, nil
		}
		size += int64(r.end - r.start)
		n, err := r.read(r.buf)
		r.start, r.end = 0, n
		if n == 0 { // bytes that came with an error are looked at first
			return 0, int(min(size, int64(^uint(0)>>1))), err
		}
	}
}

// HasLine reports whether a complete line is already buffered, so that the
// next call to Next returns without reading.
func (r *Reader) HasLine() bool {
	i := bytes.IndexByte(r.buf[r.start+r.scanned:r.end], '\n')
	if i < 0 {
		r.scanned = r.end - r.start
		return false
	}
	r.scanned += i // Next finds the LF without scanning these bytes again
	return true
}

// BufferSize returns the size of the Reader's buffer, which never exceeds
// max+1 bytes: what the Reader holds in memory is bounded by the maximum
// line length, whatever the input.
func (r *Reader) BufferSize() int { return len(r.buf) }
