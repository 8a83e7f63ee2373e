package rpc_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
)

// gated is a registry whose methods report when their handler starts and
// return when released: "work" runs concurrently, "barrier" exclusively.
type gated struct {
	reg     *rpc.Registry
	started chan string // the text of each request whose handler started
	release map[string]chan struct{}
	// running counts the handlers running, and exclusive the exclusive
	// ones; overlap records a handler that started beside an exclusive one.
	running, exclusive atomic.Int32
	overlap            atomic.Value
}

var barrier = rpc.NewMethod[echoParams, echoResult]("barrier")

func newGated(texts ...string) *gated {
	g := &gated{reg: rpc.NewRegistry(), started: make(chan string, 16), release: map[string]chan struct{}{}}
	for _, s := range texts {
		g.release[s] = make(chan struct{})
	}
	h := func(ctx context.Context, p echoParams) (echoResult, error) {
		n := g.running.Add(1)
		alone := rpc.RequestFromContext(ctx).Method == barrier.Name()
		if alone && n > 1 || !alone && g.exclusive.Load() > 0 {
			g.overlap.Store(p.Text)
		}
		g.started <- p.Text
		<-g.release[p.Text]
		g.running.Add(-1)
		return echoResult{Echo: p.Text}, nil
	}
	rpc.Handle(g.reg, echo, h)
	rpc.Handle(g.reg, barrier, func(ctx context.Context, p echoParams) (echoResult, error) {
		g.exclusive.Add(1)
		defer g.exclusive.Add(-1)
		return h(ctx, p)
	}, rpc.Exclusive)
	return g
}

// checkAlone fails the test if a handler ran beside an exclusive one.
func (g *gated) checkAlone(t *testing.T) {
	t.Helper()
	if s := g.overlap.Load(); s != nil {
		t.Fatalf("handler %q ran beside an exclusive one", s)
	}
}

// expectStart fails the test unless the next handler to start is want's.
func (g *gated) expectStart(t *testing.T, want string) {
	t.Helper()
	if got := linetest.Within(t, g.started, "handler "+want+" to start"); got != want {
		t.Fatalf("handler %q started, want %q", got, want)
	}
}

// Exclusive requests back to back run one after the other, in arrival
// order, whatever the concurrency allows, and a request between two of
// them runs between them.
func TestExclusiveRequestsKeepArrivalOrder(t *testing.T) {
	const n = 300
	var order []string
	reg := rpc.NewRegistry()
	h := func(ctx context.Context, p echoParams) (echoResult, error) {
		order = append(order, p.Text) // exclusive: no other handler runs
		return echoResult{Echo: p.Text}, nil
	}
	rpc.Handle(reg, barrier, h, rpc.Exclusive)
	p := newPeer(t, &rpc.Options{Handler: reg})
	for i := range n {
		p.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"barrier","params":{"text":"%d"}}`, i, i))
	}
	for i := range n {
		p.Expect(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"echo":"%d"}}`, i, i))
	}
	for i, s := range order {
		if s != fmt.Sprint(i) {
			t.Fatalf("handler %d ran %s", i, s)
		}
	}
}

// Requests held behind an exclusive one count against the waiting room:
// beyond it they are answered CodeOverloaded.
func TestRequestsHeldBehindABarrierAreBounded(t *testing.T) {
	g := newGated("x", "a", "b")
	p := newPeer(t, &rpc.Options{Handler: g.reg, MaxWaiting: 1})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"barrier","params":{"text":"x"}}`)
	g.expectStart(t, "x")
	p.Send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"a"}}`)
	p.Send(`{"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":"b"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":3,"error":{"code":-32050,"message":"{{string}}"}}`)
	close(g.release["x"])
	close(g.release["a"])
	p.Expect(`{"jsonrpc":"2.0","id":1,"result":{"echo":"x"}}`)
	g.expectStart(t, "a")
	p.Expect(`{"jsonrpc":"2.0","id":2,"result":{"echo":"a"}}`)
	g.checkAlone(t)
}
