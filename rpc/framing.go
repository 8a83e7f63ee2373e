package rpc

import (
	"fmt"
	"io"
)

// Framing is how frames are laid out on a Conn's byte stream
// (Options.Framing). A Conn reads and writes one framing for its whole
// life.
type Framing uint8

// The framings a Conn speaks.
const (
	// NewlineFraming: a frame is one line of JSON, ended by LF, as the
	// DeepSeek Harness and MCP stdio transports and NDJSON speak it. The
	// default.
	NewlineFraming Framing = iota
	// ContentLengthFraming: a frame is a header block ("Content-Length: N",
	// optionally "Content-Type: ...", each line ended by CRLF, the block by
	// a blank line) and a body of exactly N bytes, as the Language Server
	// Protocol and the Debug Adapter Protocol speak it.
	ContentLengthFraming
	// DetectFraming: the framing is decided from the first bytes the peer
	// sends, for a server that does not know its client: a header line
	// ("Content-Length: ...", in any case, or any other "Name:") means
	// ContentLengthFraming, anything else (a JSON value) NewlineFraming;
	// white space before it, however long, does not count.
	// The choice holds for the Conn's life, both ways; Conn.Framing says
	// which it was. Frames this side sends before the peer's first bytes
	// wait for the choice, with their context; when the input ends before
	// any byte, the Conn keeps NewlineFraming.
	DetectFraming
)

var framingNames = [...]string{
	NewlineFraming:       "newline",
	ContentLengthFraming: "Content-Length",
	DetectFraming:        "detect",
}

// String names the framing: "newline", "Content-Length" or "detect".
func (f Framing) String() string {
	if int(f) < len(framingNames) {
		return framingNames[f]
	}
	return "unknown framing"
}

// Framing returns the framing the Conn speaks: Options.Framing, or, with
// DetectFraming, the one chosen from the peer's first bytes, and
// DetectFraming until they have come. A handler always sees the choice
// made.
func (c *Conn) Framing() Framing {
	if d, ok := c.framer.(*detecting); ok {
		return d.framing()
	}
	return c.framing
}

// newFramer returns the framer of the framing f.
func newFramer(f Framing, r io.Reader, max int, decided func()) framer {
	switch f {
	case NewlineFraming:
		return &newline{r: r, max: max}
	case ContentLengthFraming:
		return &contentLength{r: r, max: max}
	case DetectFraming:
		return &detecting{r: r, max: max, decided: decided}
	}
	panic(fmt.Sprintf("rpc: Options.Framing is %d, not a Framing", f))
}
