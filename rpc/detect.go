package rpc

import (
	"errors"
	"io"
	"sync/atomic"
)

// detecting is the framer of DetectFraming: its first next reads until
// the peer's first bytes show a framing, then hands the input (those bytes
// first) to that framing's framer for good.
//
// The choice is published once, through chosen, before decided is called;
// the reader is the only goroutine that reads inner before then.
// Frames sealed before the choice are left unsealed (frame.unsealed), and
// sendWith waits for the choice before it queues them (writer.go).
type detecting struct {
	r       io.Reader
	max     int
	decided func() // wakes the senders waiting for the choice
	inner   framer
	chosen  atomic.Uint32 // 1 + the Framing chosen; 0 before the choice
}

func (d *detecting) framing() Framing {
	if f := d.chosen.Load(); f != 0 {
		return Framing(f - 1)
	}
	return DetectFraming
}

func (d *detecting) next() (inFrame, error) {
	if d.inner == nil {
		f, peeked, err := detect(d.r)
		r := io.Reader(&prefixed{peeked: peeked, err: err, r: d.r})
		d.inner = newFramer(f, r, d.max, nil)
		d.chosen.Store(1 + uint32(f))
		d.decided()
	}
	return d.inner.next()
}

// maxPeek bounds the bytes read to decide, white space before them
// aside: a header name is short.
const maxPeek = 256

// detect reads the first bytes of r until they show a framing: after
// leading white space, a header name followed by ':' means
// ContentLengthFraming; anything else, or the end of the input,
// NewlineFraming. It returns the bytes read, which belong to the first
// frame, and the read error that came with them, if any.
func detect(r io.Reader) (Framing, []byte, error) {
	buf := make([]byte, 0, maxPeek)
	for empty := 0; ; {
		if f, ok := FramingOf(buf); ok {
			return f, buf, nil
		}
		room := buf[len(buf):cap(buf)]
		n, err := r.Read(room)
		switch {
		case n < 0 || n > len(room):
			n, err = 0, errors.New("rpc: reader returned an invalid count")
		case n == 0 && err == nil:
			if empty++; empty == 100 {
				err = io.ErrNoProgress // as bufio and the line reader say
			}
		}
		buf = buf[:len(buf)+n]
		// White space before the first frame means nothing in either
		// framing: it is let go, so that any amount of it leaves the room
		// to decide.
		if i := leadingSpace(buf); i > 0 {
			buf = buf[:copy(buf, buf[i:])]
		}
		if err != nil || len(buf) == cap(buf) {
			f, ok := FramingOf(buf)
			if !ok {
				f = NewlineFraming
			}
			return f, buf, err
		}
	}
}

// FramingOf returns the framing a peer's first bytes b show, by the rule
// DetectFraming applies: after JSON white space, a header name followed by
// ':' is ContentLengthFraming, anything else NewlineFraming. decided is
// false while b may still be the start of a header name: read more. A
// client that detects its server's framing from the reply (as rpcurl
// does) uses it on the reply's first bytes.
func FramingOf(b []byte) (f Framing, decided bool) {
	i := leadingSpace(b)
	name := i
	for i < len(b) && isTokenByte(b[i]) {
		i++
	}
	switch {
	case i == len(b):
		return 0, false // the name may go on
	case i > name && b[i] == ':':
		return ContentLengthFraming, true
	}
	return NewlineFraming, true
}

// leadingSpace returns the length of the JSON white space b begins with.
func leadingSpace(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// isTokenByte reports whether b may be part of a header name (RFC 9110).
func isTokenByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	switch b {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

func (d *detecting) buffered() bool { return d.inner != nil && d.inner.buffered() }

func (d *detecting) headroom() int { return contentLengthRoom }

func (d *detecting) seal(f *frame) {
	if d.framing() == DetectFraming {
		f.unsealed = true
		return
	}
	d.inner.seal(f)
}

// prefixed reads peeked, then returns err if it is set (the input's
// error that came with the peeked bytes), else reads r.
type prefixed struct {
	peeked []byte
	err    error
	r      io.Reader
}

func (p *prefixed) Read(b []byte) (int, error) {
	if len(p.peeked) == 0 {
		if p.err != nil {
			return 0, p.err
		}
		return p.r.Read(b)
	}
	n := copy(b, p.peeked)
	p.peeked = p.peeked[n:]
	return n, nil
}
