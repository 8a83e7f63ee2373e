// Package lines cuts a byte stream into LF-terminated lines: a Reader reads
// them without copying, skipping lines longer than a limit without holding
// them in memory; a Splitter cuts a stream written in pieces, keeping a
// bounded prefix of each line; a Tail keeps the last lines of a stream.
package lines

import (
	"bytes"
	"errors"
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
	r          io.Reader
	max        int
	buf        []byte
	start, end int // buf[start:end] holds bytes read but not yet returned
	scanned    int // buf[start:start+scanned] is known to hold no LF
	err        error
	// keepLarge counts down the refills for which a buffer grown beyond
	// ReadChunk is kept after its long line is gone: a stream of large
	// frames keeps one buffer instead of growing a new one per frame.
	keepLarge int
	// What the previous Read returned: its count, and whether it filled
	// all the room it was given.
	lastRead int
	lastFull bool
}

// keepLargeRefills is how many refills a grown buffer survives unused.
const keepLargeRefills = 16

// NewReader returns a Reader of lines no longer than max bytes (LF excluded).
func NewReader(r io.Reader, max int) *Reader {
	size := min(MinBuffer, max+1)
	return &Reader{r: r, max: max, buf: make([]byte, size)}
}

// Event is what Next found.
type Event struct {
	// Line is the line without its LF, when Oversize is false. It aliases the
	// Reader's buffer and is valid until the next call to Next.
	Line []byte
	// Oversize is set when a line longer than the limit was skipped.
	Oversize bool
	// Size is the length of the line in bytes, LF excluded.
	Size int64
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
			return Event{Oversize: true, Size: size}, 0, nil
		}
		if err := r.fill(); err != nil {
			tail := r.end - r.start
			r.start, r.end, r.scanned = 0, 0, 0
			return Event{}, tail, err
		}
	}
}

// fill reads more input, making room first: it drops consumed bytes, moves a
// partial line to the front, and grows the buffer (up to max+1 bytes) when a
// partial line fills it.
func (r *Reader) fill() error {
	if r.err != nil {
		return r.err
	}
	if r.start == r.end {
		r.start, r.end = 0, 0
		r.resize()
	}
	if r.end == len(r.buf) {
		// A partial line reaches the end of the buffer: move it to the
		// front, or grow the buffer when the line fills it or when reads
		// keep filling it (busy input reads in larger chunks).
		grow := r.start == 0 || r.lastFull && len(r.buf) < ReadChunk
		if grow && len(r.buf) <= r.max {
			nb := make([]byte, min(4*len(r.buf), r.max+1))
			r.end = copy(nb, r.buf[r.start:r.end])
			r.buf = nb
		} else {
			r.end = copy(r.buf, r.buf[r.start:r.end])
		}
		r.start = 0
	}
	for empty := 0; ; empty++ {
		room := len(r.buf) - r.end
		n, err := r.r.Read(r.buf[r.end:])
		if n < 0 || n > room {
			r.err = errors.New("lines: reader returned an invalid count")
			return r.err
		}
		r.end += n
		r.lastRead, r.lastFull = n, n == room
		if err != nil {
			r.err = err
			if n > 0 {
				return nil // process what arrived; the error comes next time
			}
			return err
		}
		if n > 0 {
			return nil
		}
		if empty == 100 {
			r.err = io.ErrNoProgress
			return r.err
		}
	}
}

// resize adapts the size of the empty buffer to the traffic, before a
// read: a buffer grown for long lines is kept for keepLargeRefills reads
// after they stop; one that the last read filled grows towards ReadChunk;
// one that the last read used little of goes back to MinBuffer.
func (r *Reader) resize() {
	n := len(r.buf)
	switch {
	case n > ReadChunk:
		if r.keepLarge--; r.keepLarge <= 0 {
			n = MinBuffer // long lines stopped coming: do not keep the memory
		}
	case r.lastFull && n < ReadChunk:
		n = min(4*n, ReadChunk)
	case r.lastRead < n/8:
		n = MinBuffer
	}
	n = min(n, r.max+1)
	if n != len(r.buf) {
		r.buf = make([]byte, n)
	}
}

// skipLine discards the current line up to and including its LF, reading as
// needed, in a buffer that does not grow. It returns the line's length.
func (r *Reader) skipLine() (size int64, tail int, err error) {
	for {
		if i := bytes.IndexByte(r.buf[r.start:r.end], '\n'); i >= 0 {
			size += int64(i)
			r.start += i + 1
			r.scanned = 0
			return size, 0, nil
		}
		size += int64(r.end - r.start)
		r.start, r.end, r.scanned = 0, 0, 0
		if len(r.buf) > MinBuffer {
			r.buf = make([]byte, MinBuffer)
		}
		if err := r.fill(); err != nil {
			tail := size + int64(r.end-r.start)
			r.start, r.end = 0, 0
			return 0, int(min(tail, int64(^uint(0)>>1))), err
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
