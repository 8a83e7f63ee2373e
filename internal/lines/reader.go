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
	prefix   []byte // the start of the last oversize line, once there was one
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
	// Prefix is the start of a line skipped as oversize, at most
	// PrefixSize bytes (so that a reader may learn what the line was). It
	// is valid until the next call to Next.
	Prefix []byte
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
			return Event{Oversize: true, Size: size, Prefix: r.prefix}, 0, nil
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
	room := len(r.buf) - r.end
	n, err := r.read(r.buf[r.end:])
	r.end += n
	r.lastRead, r.lastFull = n, n == room
	if n > 0 {
		return nil // process what arrived; an error comes next time
	}
	return err
}

// read reads into p until it gets bytes or an error, which is sticky: the
// next read returns it again. A reader that keeps returning nothing fails
// with io.ErrNoProgress, as bufio's does.
func (r *Reader) read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	for empty := 0; ; empty++ {
		n, err := r.r.Read(p)
		if n < 0 || n > len(p) {
			r.err = errors.New("lines: reader returned an invalid count")
			return 0, r.err
		}
		if err != nil {
			r.err = err
		}
		if n > 0 || err != nil {
			return n, err
		}
		if empty == 100 {
			r.err = io.ErrNoProgress
			return 0, r.err
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
