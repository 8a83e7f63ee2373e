package rpc_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/linerpc/linerpc/rpc"
)

// A caller whose context cannot end may wait for its response by reading
// it: the lead of the read loop comes to it with a response, and after the
// call it lies free for the next caller, for a moment, before a goroutine
// of the Conn takes it back. These tests hold the Conn to its promises
// around that: nothing the peer sends waits for long, Close and the end of
// the input still end everything.

// answer reads the next request and answers it with {"echo":text}.
func (p *peer) answer(text string) {
	p.t.Helper()
	id, _ := p.nextRequest()
	p.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"echo":"` + text + `"}}`)
}

// afterACall starts a peer and completes one call whose context cannot
// end: the lead of the read loop most likely lies free when it returns.
func afterACall(t *testing.T, opts *rpc.Options) *peer {
	t.Helper()
	p := newPeer(t, opts)
	first := call(context.Background(), p.conn, "a")
	p.answer("a")
	if r := within(t, first); r.err != nil {
		t.Fatalf("first call: %v", r.err)
	}
	return p
}

// waitEnds checks that Wait returns, with err.
func waitEnds(t *testing.T, c *rpc.Conn, err error) {
	t.Helper()
	waited := make(chan error, 1)
	go func() { waited <- c.Wait() }()
	if got := within(t, waited); !errors.Is(got, err) {
		t.Fatalf("Wait = %v, want %v", got, err)
	}
}

func TestPeerRequestsAreServedBetweenCalls(t *testing.T) {
	p := newPeer(t, &rpc.Options{Handler: echoRegistry()})
	for i := range 50 {
		res := call(context.Background(), p.conn, "x")
		p.answer("x")
		if r := within(t, res); r.err != nil || r.r.Echo != "x" {
			t.Fatalf("call %d: %+v", i, r)
		}
		// Nobody calls now: the lead, free after the call, must come back
		// to a goroutine of the Conn, which serves the request.
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"s%d","method":"echo","params":{"text":"y"}}`, i))
		p.expect(fmt.Sprintf(`{"jsonrpc":"2.0","id":"s%d","result":{"echo":"y"}}`, i))
	}
}

func TestCallerThatReadsServesPeerRequests(t *testing.T) {
	p := newPeer(t, &rpc.Options{Handler: echoRegistry()})
	for i := range 50 {
		first := call(context.Background(), p.conn, "a")
		p.answer("a")
		within(t, first)
		// The second call likely finds the lead free and reads: the
		// request the peer sends before answering reaches its handler.
		second := call(context.Background(), p.conn, "b")
		p.nextRequest()
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"text":"z"}}`, 1000+i))
		p.expect(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"echo":"z"}}`, 1000+i))
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"echo":"b"}}`, 2*i+2))
		if r := within(t, second); r.err != nil || r.r.Echo != "b" {
			t.Fatalf("round %d: %+v", i, r)
		}
	}
}

func TestCloseEndsACallerThatReads(t *testing.T) {
	for range 20 {
		p := afterACall(t, nil)
		second := call(context.Background(), p.conn, "b")
		p.nextRequest() // and no answer: the caller, if it reads, is blocked
		p.conn.Close()
		if r := within(t, second); !errors.Is(r.err, rpc.ErrClosed) {
			t.Fatalf("err = %v, want ErrClosed", r.err)
		}
		waitEnds(t, p.conn, rpc.ErrClosed)
	}
}

func TestInputEndWhileTheLeadLiesFree(t *testing.T) {
	for range 20 {
		p := afterACall(t, nil)
		p.in.Close()
		within(t, p.conn.Done())
		if err := p.conn.Err(); !errors.Is(err, rpc.ErrInputEnded) {
			t.Fatalf("Err = %v", err)
		}
	}
}

func TestCloseWhileTheLeadLiesFree(t *testing.T) {
	for range 20 {
		p := afterACall(t, nil)
		p.conn.Close()
		waitEnds(t, p.conn, rpc.ErrClosed)
	}
}
