package bench

import (
	"context"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/channel"
	"github.com/creachadair/jrpc2/handler"
)

// github.com/creachadair/jrpc2 with its newline framing, channel.Line. jrpc2
// has distinct Server and Client types: the serving end is a jrpc2.Server
// (default options, plus AllowPush so that it can send the server→client
// notifications of workload 3, a jrpc2 extension), the calling end a
// jrpc2.Client whose OnNotify receives them. Payloads go through
// encoding/json (Request.UnmarshalParams, Response.UnmarshalResult).

var jrpc2Contender = &contender{
	name:  "jrpc2",
	serve: startJrpc2Server,
	dial:  startJrpc2Client,
	unordered: "the Client hands every received message to a new goroutine " +
		"(Client.accept), so OnNotify callbacks, though never concurrent, " +
		"may run out of arrival order",
}

type jrpc2Server struct{ s *jrpc2.Server }

func startJrpc2Server(rw *end, h *handlers) server {
	m := handler.Map{}
	if h.prompt != nil {
		m[methodPrompt] = func(ctx context.Context, req *jrpc2.Request) (any, error) {
			var p Prompt
			if err := req.UnmarshalParams(&p); err != nil {
				return nil, err
			}
			return h.prompt(&p)
		}
	}
	if h.blob != nil {
		m[methodBlob] = func(ctx context.Context, req *jrpc2.Request) (any, error) {
			var p Blob
			if err := req.UnmarshalParams(&p); err != nil {
				return nil, err
			}
			return h.blob(&p)
		}
	}
	if h.note != nil {
		m[notifyNote] = func(ctx context.Context, req *jrpc2.Request) (any, error) {
			var p Prompt
			if req.UnmarshalParams(&p) == nil {
				h.note(&p)
			}
			return nil, nil
		}
	}
	s := jrpc2.NewServer(m, &jrpc2.ServerOptions{AllowPush: true})
	s.Start(channel.Line(rw, rw))
	return &jrpc2Server{s}
}

func (s *jrpc2Server) notifyEvent(ctx context.Context, e *Event) error {
	return s.s.Notify(ctx, notifyEvent, *e)
}

// close waits for the server to stop by itself at the end of its input (the
// streams are closed first, see connect): Stop races the read loop when it
// is answering a malformed line, and jrpc2 v1.3.6 then crashes.
func (s *jrpc2Server) close() { s.s.Wait() }

type jrpc2Client struct{ c *jrpc2.Client }

func startJrpc2Client(rw *end, h *handlers) client {
	var opts jrpc2.ClientOptions
	if h.event != nil {
		opts.OnNotify = func(req *jrpc2.Request) {
			if req.Method() != notifyEvent {
				return
			}
			var e Event
			if req.UnmarshalParams(&e) == nil {
				h.event(&e)
			}
		}
	}
	return &jrpc2Client{jrpc2.NewClient(channel.Line(rw, rw), &opts)}
}

func (c *jrpc2Client) callPrompt(ctx context.Context, p *Prompt) (Reply, error) {
	var r Reply
	err := c.c.CallResult(ctx, methodPrompt, *p, &r)
	return r, err
}

func (c *jrpc2Client) callBlob(ctx context.Context, p *Blob) (Reply, error) {
	var r Reply
	err := c.c.CallResult(ctx, methodBlob, *p, &r)
	return r, err
}

func (c *jrpc2Client) close() { c.c.Close() }
