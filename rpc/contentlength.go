package rpc

import (
	"io"
	"strconv"

	"github.com/linerpc/linerpc/internal/lines"
)

// contentLength is the framing of LSP and DAP (ContentLengthFraming): a
// header block, then a body of exactly Content-Length bytes. What it
// reads is lines.HeaderReader's to say (malformed blocks, oversize bodies,
// resynchronisation); it writes the one header every peer needs,
// "Content-Length: N\r\n\r\n", in the room the frame keeps before its
// body, so that a frame is still one buffer and one Write.
type contentLength struct {
	r   io.Reader
	max int
	in  *lines.HeaderReader // made by the first next, so that an unstarted Conn holds no buffer
}

func (cl *contentLength) next() (inFrame, error) {
	if cl.in == nil {
		cl.in = lines.NewHeaderReader(cl.r, cl.max)
	}
	ev, tail, err := cl.in.Next()
	switch {
	case err != nil:
		return inFrame{size: int64(tail)}, err
	case ev.Oversize:
		return inFrame{size: ev.Size, skipped: true, prefix: ev.Prefix}, nil
	case ev.Malformed != nil:
		return inFrame{size: ev.Size, skipped: true, prefix: ev.Prefix, malformed: ev.Malformed}, nil
	}
	return inFrame{body: ev.Line, size: ev.Size, warning: ev.Warning}, nil
}

func (cl *contentLength) buffered() bool { return cl.in != nil && cl.in.HasFrame() }

// headerPrefix and headerEnd surround the body's length in the header.
const (
	headerPrefix = "Content-Length: "
	headerEnd    = "\r\n\r\n"
)

// contentLengthRoom is the longest header seal writes: a length of up to
// 20 digits.
const contentLengthRoom = len(headerPrefix) + 20 + len(headerEnd)

func (*contentLength) headroom() int { return contentLengthRoom }

func (*contentLength) seal(f *frame) {
	var digits [20]byte
	n := strconv.AppendInt(digits[:0], int64(f.n), 10)
	start := f.off - len(headerPrefix) - len(n) - len(headerEnd)
	at := start + copy(f.b[start:], headerPrefix)
	at += copy(f.b[at:], n)
	copy(f.b[at:], headerEnd)
	f.off = start
}
