package rpc

// A framer is where frames meet the byte stream: it cuts the input into
// frames, and delimits each frame written. It is the only part of a Conn
// that knows how frames are laid out: newline-delimited JSON (newline.go),
// Content-Length headers (contentlength.go), or either, as the peer's
// first bytes decide (detect.go).
type framer interface {
	// next returns the next frame of the input, read by the reader
	// only. The frame's bytes are valid until the next call. A frame too
	// long to take is skipped without being held, and reported (skipped,
	// with its size and first bytes). At the end of the input next returns
	// io.EOF, or the read error, with the size of the frame it ended
	// inside, if any, which is lost.
	next() (inFrame, error)
	// buffered reports whether the next call to next returns without
	// reading: a whole frame is buffered (the reader then defers the
	// answers it makes, to write them together before it waits for
	// input). It may report false when next would not block, never true
	// when it would. Read by the reader only.
	buffered() bool
	// headroom is the room a frame keeps before its body, for what seal
	// puts there.
	headroom() int
	// seal delimits the frame f, whose body is complete, so that its
	// bytes from f.off on can be written as they are. Any goroutine may
	// call it.
	seal(f *frame)
}

// inFrame is a frame of the input, as the framer found it.
type inFrame struct {
	body    []byte // the frame, nil when skipped
	size    int64  // its length, delimiters excluded
	skipped bool   // it was longer than MaxFrameSize, and skipped
	prefix  []byte // when skipped: its first bytes, as far as they were read
	// malformed, when skipped, says why the framing could not be read
	// (a bad header block); a frame skipped without it was too long.
	malformed error
	// warning, on a frame delivered, is a fault of its framing that does
	// not keep it from being read (a Content-Type that is not JSON).
	warning error
}
