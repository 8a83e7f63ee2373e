package lines

import (
	"errors"
	"io"
)

// window is a read buffer over an io.Reader that adapts its size to the
// traffic (see MinBuffer and ReadChunk): the Reader of lines and the
// HeaderReader of Content-Length frames both read through one.
type window struct {
	r          io.Reader
	err        error // sticky: once a read failed, every read returns it
	buf        []byte
	start, end int // buf[start:end] holds bytes read but not yet consumed
	// keepLarge counts down the refills for which a buffer grown beyond
	// ReadChunk is kept after its long frame is gone: a stream of large
	// frames keeps one buffer instead of growing a new one per frame.
	keepLarge int
	// What the previous Read returned: its count, and whether it filled
	// all the room it was given.
	lastRead int
	lastFull bool
}

// keepLargeRefills is how many refills a grown buffer survives unused.
const keepLargeRefills = 16

// fill reads more input, making room first: it drops consumed bytes, moves
// a partial frame to the front, and grows the buffer (up to limit bytes)
// when a partial frame fills it.
func (w *window) fill(limit int) error {
	if w.err != nil {
		return w.err
	}
	if w.start == w.end {
		w.start, w.end = 0, 0
		w.resize(limit)
	}
	if w.end == len(w.buf) {
		// A partial frame reaches the end of the buffer: move it to the
		// front, or grow the buffer when the frame fills it or when reads
		// keep filling it (busy input reads in larger chunks).
		grow := w.start == 0 || w.lastFull && len(w.buf) < ReadChunk
		if grow && len(w.buf) < limit {
			nb := make([]byte, min(4*len(w.buf), limit))
			w.end = copy(nb, w.buf[w.start:w.end])
			w.buf = nb
		} else {
			w.end = copy(w.buf, w.buf[w.start:w.end])
		}
		w.start = 0
	}
	room := len(w.buf) - w.end
	n, err := w.read(w.buf[w.end:])
	w.end += n
	w.lastRead, w.lastFull = n, n == room
	if n > 0 {
		return nil // process what arrived; an error comes next time
	}
	return err
}

// read reads into p until it gets bytes or an error, which is sticky: the
// next read returns it again. A reader that keeps returning nothing fails
// with io.ErrNoProgress, as bufio's does.
func (w *window) read(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	for empty := 0; ; empty++ {
		n, err := w.r.Read(p)
		if n < 0 || n > len(p) {
			w.err = errors.New("lines: reader returned an invalid count")
			return 0, w.err
		}
		if err != nil {
			w.err = err
		}
		if n > 0 || err != nil {
			return n, err
		}
		if empty == 100 {
			w.err = io.ErrNoProgress
			return 0, w.err
		}
	}
}

// resize adapts the size of the empty buffer to the traffic, before a
// read: a buffer grown for long frames is kept for keepLargeRefills reads
// after they stop; one that the last read filled grows towards ReadChunk;
// one that the last read used little of goes back to MinBuffer. It never
// exceeds limit.
func (w *window) resize(limit int) {
	n := len(w.buf)
	switch {
	case n > ReadChunk:
		if w.keepLarge--; w.keepLarge <= 0 {
			n = MinBuffer // long frames stopped coming: do not keep the memory
		}
	case w.lastFull && n < ReadChunk:
		n = min(4*n, ReadChunk)
	case w.lastRead < n/8:
		n = MinBuffer
	}
	n = min(n, limit)
	if n != len(w.buf) {
		w.buf = make([]byte, n)
	}
}
