package bench

import (
	"context"

	"github.com/linerpc/linerpc/rpc"
)

// linerpc with its typed API: method and notification descriptors, typed
// handlers, default Options (64 MiB maximum frame, 256 concurrent request
// handlers). Both ends are rpc.Conn, which serve and call alike.

var (
	lrPrompt = rpc.NewMethod[Prompt, Reply](methodPrompt)
	lrBlob   = rpc.NewMethod[Blob, Reply](methodBlob)
	lrNote   = rpc.NewNotification[Prompt](notifyNote)
	lrEvent  = rpc.NewNotification[Event](notifyEvent)
)

var linerpcContender = &contender{
	name: "linerpc",
	serve: func(rw *end, h *handlers) server {
		return startLinerpc(rw, h)
	},
	dial: func(rw *end, h *handlers) client {
		return startLinerpc(rw, h)
	},
}

type linerpcEnd struct{ c *rpc.Conn }

func startLinerpc(rw *end, h *handlers) *linerpcEnd {
	return startLinerpcFraming(rw, h, rpc.NewlineFraming)
}

// startLinerpcFraming starts a Conn that speaks the given framing.
func startLinerpcFraming(rw *end, h *handlers, framing rpc.Framing) *linerpcEnd {
	reg := rpc.NewRegistry()
	if h.prompt != nil {
		rpc.Handle(reg, lrPrompt, func(_ context.Context, p Prompt) (Reply, error) { return h.prompt(&p) })
	}
	if h.blob != nil {
		rpc.Handle(reg, lrBlob, func(_ context.Context, p Blob) (Reply, error) { return h.blob(&p) })
	}
	if h.note != nil {
		rpc.HandleNotification(reg, lrNote, func(_ context.Context, p Prompt) { h.note(&p) })
	}
	if h.event != nil {
		rpc.HandleNotification(reg, lrEvent, func(_ context.Context, e Event) { h.event(&e) })
	}
	// The concrete reader and writer (net.Conn, *os.File, *io.PipeReader),
	// so that Close can interrupt a blocked read where the stream allows it.
	c := rpc.NewConn(rw.r, rw.w, &rpc.Options{Handler: reg, Framing: framing})
	c.Start()
	return &linerpcEnd{c}
}

func (e *linerpcEnd) callPrompt(ctx context.Context, p *Prompt) (Reply, error) {
	return lrPrompt.Call(ctx, e.c, *p)
}

func (e *linerpcEnd) callBlob(ctx context.Context, p *Blob) (Reply, error) {
	return lrBlob.Call(ctx, e.c, *p)
}

func (e *linerpcEnd) notifyEvent(ctx context.Context, ev *Event) error {
	return lrEvent.Notify(ctx, e.c, *ev)
}

func (e *linerpcEnd) close() { e.c.Close() }
