package transport_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
)

// waitBound bounds every wait of these tests for an event: a failure
// report after a generous time, never a pace.
const waitBound = time.Minute

// within returns what ch yields, or fails the test, saying what it
// waited for, when nothing comes within waitBound.
func within[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(waitBound)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("waited %v for %s", waitBound, what)
		panic("unreachable")
	}
}

type echoParams struct {
	Text string `json:"text"`
}

type echoResult struct {
	Echo string `json:"echo"`
}

// echo answers its text.
var echo = rpc.NewMethod[echoParams, echoResult]("echo")

// echoRegistry serves echo.
func echoRegistry() *rpc.Registry {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echo, func(ctx context.Context, p echoParams) (echoResult, error) {
		return echoResult{Echo: p.Text}, nil
	})
	return reg
}

// call runs a typed call of echo on its own goroutine and hands back its
// outcome.
func call(ctx context.Context, c *rpc.Conn, text string) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		r, err := echo.Call(ctx, c, echoParams{text})
		ch <- callResult{r, err}
	}()
	return ch
}

type callResult struct {
	r   echoResult
	err error
}

// blocker is a registry (echo's) whose method "block" reports each
// request's context as its handler starts, then waits for its context to
// end or for release, and reports the context's cause as it returns.
type blocker struct {
	reg     *rpc.Registry
	started chan context.Context
	ended   chan error // context.Cause at the handler's return
	release chan struct{}
}

var block = rpc.NewMethod[echoParams, echoResult]("block")

func newBlocker() *blocker {
	b := &blocker{
		reg:     echoRegistry(),
		started: make(chan context.Context, 16),
		ended:   make(chan error, 16),
		release: make(chan struct{}),
	}
	rpc.Handle(b.reg, block, func(ctx context.Context, p echoParams) (echoResult, error) {
		b.started <- ctx
		select {
		case <-ctx.Done():
		case <-b.release:
		}
		b.ended <- context.Cause(ctx)
		return echoResult{Echo: "released"}, ctx.Err()
	})
	return b
}

// liveHeap returns the bytes of live heap objects, after a collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC() // the second empties the pools' victim caches

	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
