package rpc

import (
	"io"

	"github.com/linerpc/linerpc/internal/lines"
)

// newline is the framing of newline-delimited JSON, as the DeepSeek
// Harness and MCP stdio transports speak it (docs/wire.md §2.1): a frame
// is one line, ended by LF; a line longer than the maximum frame size is
// skipped without being held in memory; an unterminated last line is lost.
// It adds nothing before a frame, and LF after it.
type newline struct {
	r   io.Reader
	max int
	in  *lines.Reader // made by the first next, so that an unstarted Conn holds no buffer
}

func (nl *newline) next() (inFrame, error) {
	if nl.in == nil {
		nl.in = lines.NewReader(nl.r, nl.max)
	}
	ev, tail, err := nl.in.Next()
	if err != nil {
		return inFrame{size: int64(tail)}, err
	}
	if ev.Oversize {
		return inFrame{size: ev.Size, skipped: true, prefix: ev.Prefix}, nil
	}
	return inFrame{body: ev.Line, size: ev.Size}, nil
}

func (nl *newline) buffered() bool { return nl.in != nil && nl.in.HasLine() }

func (*newline) headroom() int { return 0 }

func (*newline) seal(f *frame) { f.b = append(f.b, '\n') }
