package bench

import (
	"context"
	"encoding/json"
	"io"
	"log"

	sg "github.com/sourcegraph/jsonrpc2"
)

// github.com/sourcegraph/jsonrpc2 with jsonrpc2.NewPlainObjectStream: its
// only codec that writes newline-terminated frames (a json.Encoder, whose
// Encode appends '\n'). Its reading side is a streaming json.Decoder, which
// does not look at line ends at all: it reads one JSON value after the other.
// (NewBufferedStream with PlainObjectCodec{} builds the same Encoder and
// Decoder straight on the connection, bypassing its own bufio buffers; the
// other codecs, VarintObjectCodec and VSCodeObjectCodec, are length-prefixed.)
// A Conn both serves and calls; the Handler runs inline on the read loop (the
// library's default); payloads go through encoding/json.

var sourcegraphContender = &contender{
	name:  "sourcegraph",
	serve: func(rw *end, h *handlers) server { return startSourcegraph(rw, h) },
	dial:  func(rw *end, h *handlers) client { return startSourcegraph(rw, h) },
	diesOnGarbage: "the stream is one json.Decoder: a syntax error is sticky " +
		"and ends the connection (it cannot resynchronise at the next line)",
}

type sourcegraphEnd struct{ c *sg.Conn }

var sgQuiet = sg.SetLogger(log.New(io.Discard, "", 0))

func startSourcegraph(rw *end, h *handlers) *sourcegraphEnd {
	c := sg.NewConn(context.Background(), sg.NewPlainObjectStream(rw), sgHandler{h}, sgQuiet)
	return &sourcegraphEnd{c}
}

type sgHandler struct{ h *handlers }

func (s sgHandler) Handle(ctx context.Context, c *sg.Conn, req *sg.Request) {
	h := s.h
	var params []byte
	if req.Params != nil {
		params = *req.Params
	}
	if req.Notif {
		switch {
		case req.Method == notifyNote && h.note != nil:
			var p Prompt
			if json.Unmarshal(params, &p) == nil {
				h.note(&p)
			}
		case req.Method == notifyEvent && h.event != nil:
			var e Event
			if json.Unmarshal(params, &e) == nil {
				h.event(&e)
			}
		}
		return
	}
	var (
		r   Reply
		err error
	)
	switch {
	case req.Method == methodPrompt && h.prompt != nil:
		var p Prompt
		if err = json.Unmarshal(params, &p); err != nil {
			c.ReplyWithError(ctx, req.ID, &sg.Error{Code: sg.CodeInvalidParams, Message: err.Error()})
			return
		}
		r, err = h.prompt(&p)
	case req.Method == methodBlob && h.blob != nil:
		var p Blob
		if err = json.Unmarshal(params, &p); err != nil {
			c.ReplyWithError(ctx, req.ID, &sg.Error{Code: sg.CodeInvalidParams, Message: err.Error()})
			return
		}
		r, err = h.blob(&p)
	default:
		c.ReplyWithError(ctx, req.ID, &sg.Error{Code: sg.CodeMethodNotFound, Message: "method not found"})
		return
	}
	if err != nil {
		c.ReplyWithError(ctx, req.ID, &sg.Error{Code: sg.CodeInternalError, Message: err.Error()})
		return
	}
	c.Reply(ctx, req.ID, r)
}

func (e *sourcegraphEnd) callPrompt(ctx context.Context, p *Prompt) (Reply, error) {
	var r Reply
	err := e.c.Call(ctx, methodPrompt, *p, &r)
	return r, err
}

func (e *sourcegraphEnd) callBlob(ctx context.Context, p *Blob) (Reply, error) {
	var r Reply
	err := e.c.Call(ctx, methodBlob, *p, &r)
	return r, err
}

func (e *sourcegraphEnd) notifyEvent(ctx context.Context, ev *Event) error {
	return e.c.Notify(ctx, notifyEvent, *ev)
}

// close closes the Conn and its stream.
func (e *sourcegraphEnd) close() { e.c.Close() }
