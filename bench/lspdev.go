package bench

import (
	"context"
	"io"

	lsp "go.lsp.dev/jsonrpc2"
)

// go.lsp.dev/jsonrpc2 v1 in its general mode: jsonrpc2.NewConn over
// jsonrpc2.NewNDJSONStream (newline-delimited JSON), the bidirectional peer
// that both serves and calls, as linerpc's Conn does. Its default codec is
// encoding/json/v2 (github.com/go-json-experiment/json); lspdev-gojson swaps
// in the go-json codec of lspdev_gojson.go.
//
// The library also has specialised client-only modes, not used here because
// they are not the comparable feature set (they cannot serve, nor receive
// server-initiated requests): NewSingleClient / NewSyncClient (one call in
// flight, the caller owns the read loop), NewPipelineClient (concurrent
// client-only calls with dense numeric ids) and NewBatchClient (raw batch
// frames).
//
// Handlers run inline on the read loop by default (the library's default;
// AsyncHandler would release each one to a goroutine). The workloads'
// handlers never block, so inline is the library's fastest correct setting.

var lspdevContender = &contender{
	name:  "lspdev",
	serve: func(rw *end, h *handlers) server { return startLspdev(rw, h, nil) },
	dial:  func(rw *end, h *handlers) client { return startLspdev(rw, h, nil) },
	diesOnGarbage: "a line that is not valid JSON is a read error for Conn: " +
		"the read loop stops and the connection ends",
}

type lspdevEnd struct{ c lsp.Conn }

// startLspdev starts a Conn with the given payload codec (nil: the default).
func startLspdev(rw *end, h *handlers, codec lsp.Codec) *lspdevEnd {
	return startLspdevStream(rw, h, codec, lsp.NewNDJSONStream)
}

// startLspdevStream starts a Conn over the stream (the framing) newStream
// makes of rw.
func startLspdevStream(rw *end, h *handlers, codec lsp.Codec, newStream func(io.ReadWriteCloser) lsp.Stream) *lspdevEnd {
	unmarshal := lsp.DefaultCodec.Unmarshal
	var opts []lsp.Option
	if codec != nil {
		unmarshal = codec.Unmarshal
		opts = append(opts, lsp.WithCodec(codec))
	}
	c := lsp.NewConn(newStream(rw), opts...)
	c.Go(context.Background(), func(ctx context.Context, req *lsp.Request) (any, error) {
		switch req.Method() {
		case methodPrompt:
			if h.prompt != nil && req.IsCall() {
				var p Prompt
				if err := unmarshal(req.Params(), &p); err != nil {
					return nil, lsp.ErrInvalidParams
				}
				return h.prompt(&p)
			}
		case methodBlob:
			if h.blob != nil && req.IsCall() {
				var p Blob
				if err := unmarshal(req.Params(), &p); err != nil {
					return nil, lsp.ErrInvalidParams
				}
				return h.blob(&p)
			}
		case notifyNote:
			if h.note != nil && !req.IsCall() {
				var p Prompt
				if unmarshal(req.Params(), &p) == nil {
					h.note(&p)
				}
				return nil, nil
			}
		case notifyEvent:
			if h.event != nil && !req.IsCall() {
				var e Event
				if unmarshal(req.Params(), &e) == nil {
					h.event(&e)
				}
				return nil, nil
			}
		}
		if !req.IsCall() {
			// An error returned for a notification fails the connection:
			// unknown notifications are ignored.
			return nil, nil
		}
		return nil, lsp.ErrMethodNotFound
	})
	return &lspdevEnd{c}
}

func (e *lspdevEnd) callPrompt(ctx context.Context, p *Prompt) (Reply, error) {
	var r Reply
	_, err := e.c.Call(ctx, methodPrompt, *p, &r)
	return r, err
}

func (e *lspdevEnd) callBlob(ctx context.Context, p *Blob) (Reply, error) {
	var r Reply
	_, err := e.c.Call(ctx, methodBlob, *p, &r)
	return r, err
}

func (e *lspdevEnd) notifyEvent(ctx context.Context, ev *Event) error {
	return e.c.Notify(ctx, notifyEvent, *ev)
}

// close closes the Conn, which closes the stream; it waits for in-flight
// work and the read loop.
func (e *lspdevEnd) close() { e.c.Close() }
