package linetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/linerpc/linerpc/rpc"
)

// EchoParams are the params of Echo and Block: {"text": ...}.
type EchoParams struct {
	Text string `json:"text"`
}

// EchoResult is the result of Echo and Block: {"echo": ...}.
type EchoResult struct {
	Echo string `json:"echo"`
}

// Echo is the method "echo", which EchoRegistry serves.
var Echo = rpc.NewMethod[EchoParams, EchoResult]("echo")

// EchoRegistry returns a new registry serving Echo, which answers its text,
// except for a few texts that ask for the handler's other outcomes: "fail"
// returns a plain error, "coded" a wrapped *rpc.Error (code 42, message
// "coded", data {"k":"v"}), and "panic" panics. Tests add their own
// methods to it.
func EchoRegistry() *rpc.Registry {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, Echo, func(ctx context.Context, p EchoParams) (EchoResult, error) {
		switch p.Text {
		case "fail":
			return EchoResult{}, errors.New("it failed")
		case "coded":
			return EchoResult{}, fmt.Errorf("wrapped: %w", &rpc.Error{Code: 42, Message: "coded", Data: json.RawMessage(`{"k":"v"}`)})
		case "panic":
			panic("boom")
		}
		return EchoResult{Echo: p.Text}, nil
	})
	return reg
}

// CallResult is the outcome of a call of Echo or Block.
type CallResult struct {
	Result EchoResult
	Err    error
}

// Call runs a typed call of Echo with text on c on its own goroutine, so
// that the test can drive the peer meanwhile, and hands back its outcome
// on a channel buffered for it (the goroutine never blocks on sending).
func Call(ctx context.Context, c *rpc.Conn, text string) <-chan CallResult {
	ch := make(chan CallResult, 1)
	go func() {
		r, err := Echo.Call(ctx, c, EchoParams{text})
		ch <- CallResult{Result: r, Err: err}
	}()
	return ch
}

// Block is the method "block", which a Blocker's registry serves.
var Block = rpc.NewMethod[EchoParams, EchoResult]("block")

// Blocker is a registry (EchoRegistry's) that also serves Block with a
// handler the test controls: it sends each request's context on Started
// as it starts, then waits for its context to end or for Release to be
// closed, sends context.Cause of its context on Ended, and returns what
// its params ask for: for the text "result" the result "done anyway",
// for any other the result "released" with ctx.Err() (nil when released).
// Started and Ended hold 16 each, so up to 16 handlers run without the
// test reading them.
type Blocker struct {
	Reg     *rpc.Registry
	Started chan context.Context
	Ended   chan error // context.Cause at the handler's return
	Release chan struct{}
}

// NewBlocker returns a Blocker whose handlers wait until Release is closed.
func NewBlocker() *Blocker {
	b := &Blocker{
		Reg:     EchoRegistry(),
		Started: make(chan context.Context, 16),
		Ended:   make(chan error, 16),
		Release: make(chan struct{}),
	}
	rpc.Handle(b.Reg, Block, func(ctx context.Context, p EchoParams) (EchoResult, error) {
		b.Started <- ctx
		select {
		case <-ctx.Done():
		case <-b.Release:
		}
		b.Ended <- context.Cause(ctx)
		if p.Text == "result" {
			return EchoResult{Echo: "done anyway"}, nil
		}
		return EchoResult{Echo: "released"}, ctx.Err()
	})
	return b
}
