package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"io"

	xj "golang.org/x/exp/jsonrpc2"
)

// golang.org/x/exp/jsonrpc2 (the jsonrpc2 of gopls, extracted): a symmetric
// Connection made with jsonrpc2.Dial over a Dialer that hands it our pipe,
// with lineFramer below (the package ships only a header framer and a raw
// framer, the latter a streaming json.Decoder that ignores line ends).
// Handlers are queued and run one at a time on the delivery goroutine (the
// library's only mode); payloads go through encoding/json.

var xexpContender = &contender{
	name:  "xexp",
	serve: func(rw *end, h *handlers) server { return startXexp(rw, h) },
	dial:  func(rw *end, h *handlers) client { return startXexp(rw, h) },
	diesOnGarbage: "a Read error from the framer ends the connection, and " +
		"Reader.Read has no way to say 'skip this frame': lineFramer, like " +
		"the package's own framers, returns the DecodeMessage error",
}

// lineFramer is a newline framer written against the public
// jsonrpc2.Framer interface: one compact JSON message per '\n'-terminated
// line, blank lines skipped, one Write per message. It has no maximum line
// length, like the package's own HeaderFramer (which allocates whatever
// Content-Length says).
type lineFramer struct{}

func (lineFramer) Reader(r io.Reader) xj.Reader { return &xexpLineReader{in: bufio.NewReader(r)} }
func (lineFramer) Writer(w io.Writer) xj.Writer { return &xexpLineWriter{out: w} }

type xexpLineReader struct {
	in   *bufio.Reader
	long []byte // reused for lines longer than the bufio buffer
}

func (r *xexpLineReader) Read(ctx context.Context) (xj.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		line, err := r.in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			r.long = append(r.long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = r.in.ReadSlice('\n')
				r.long = append(r.long, line...)
			}
			line = r.long
		}
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, 0, err
		}
		n := int64(len(line))
		line = trimSpace(line)
		if len(line) == 0 {
			continue
		}
		// DecodeMessage copies what it keeps (json.RawMessage members), so
		// the line buffer can be reused.
		msg, err := xj.DecodeMessage(line)
		if cap(r.long) > 1<<20 {
			r.long = nil // do not pin a huge line's buffer
		}
		return msg, n, err
	}
}

type xexpLineWriter struct {
	out io.Writer
	buf []byte // the Connection serialises writes
}

func (w *xexpLineWriter) Write(ctx context.Context, msg xj.Message) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	data, err := xj.EncodeMessage(msg)
	if err != nil {
		return 0, err
	}
	w.buf = append(append(w.buf[:0], data...), '\n')
	n, err := w.out.Write(w.buf)
	if cap(w.buf) > 1<<20 {
		w.buf = nil
	}
	return int64(n), err
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

type pipeDialer struct{ rw io.ReadWriteCloser }

func (d pipeDialer) Dial(context.Context) (io.ReadWriteCloser, error) { return d.rw, nil }

type xexpEnd struct{ c *xj.Connection }

func startXexp(rw *end, h *handlers) *xexpEnd {
	return startXexpFramer(rw, h, lineFramer{})
}

// startXexpFramer starts a Connection with the given framer.
func startXexpFramer(rw *end, h *handlers, framer xj.Framer) *xexpEnd {
	handle := func(ctx context.Context, req *xj.Request) (any, error) {
		switch {
		case req.Method == methodPrompt && h.prompt != nil && req.IsCall():
			var p Prompt
			if err := json.Unmarshal(req.Params, &p); err != nil {
				return nil, xj.ErrInvalidParams
			}
			return h.prompt(&p)
		case req.Method == methodBlob && h.blob != nil && req.IsCall():
			var p Blob
			if err := json.Unmarshal(req.Params, &p); err != nil {
				return nil, xj.ErrInvalidParams
			}
			return h.blob(&p)
		case req.Method == notifyNote && h.note != nil && !req.IsCall():
			var p Prompt
			if json.Unmarshal(req.Params, &p) == nil {
				h.note(&p)
			}
			return nil, nil
		case req.Method == notifyEvent && h.event != nil && !req.IsCall():
			var e Event
			if json.Unmarshal(req.Params, &e) == nil {
				h.event(&e)
			}
			return nil, nil
		case !req.IsCall():
			return nil, nil // unknown notifications are ignored
		}
		return nil, xj.ErrNotHandled
	}
	c, err := xj.Dial(context.Background(), pipeDialer{rw}, xj.ConnectionOptions{
		Framer:  framer,
		Handler: xj.HandlerFunc(handle),
	})
	if err != nil {
		panic(err)
	}
	return &xexpEnd{c}
}

func (e *xexpEnd) callPrompt(ctx context.Context, p *Prompt) (Reply, error) {
	var r Reply
	err := e.c.Call(ctx, methodPrompt, *p).Await(ctx, &r)
	return r, err
}

func (e *xexpEnd) callBlob(ctx context.Context, p *Blob) (Reply, error) {
	var r Reply
	err := e.c.Call(ctx, methodBlob, *p).Await(ctx, &r)
	return r, err
}

func (e *xexpEnd) notifyEvent(ctx context.Context, ev *Event) error {
	return e.c.Notify(ctx, notifyEvent, *ev)
}

// close closes the stream and waits for the Connection to wind down.
func (e *xexpEnd) close() { e.c.Close() }
