// Package replaytest connects a *sdkproto.Client to a replay of a
// recording (package sdkproto/replay) in process, for tests: what
// net/http/httptest is to net/http. Client is the whole of it for a test
// whose client follows the recording; Start lets a test take the replay's
// error (a *replay.Departure) for tests of departures.
//
//	rec, err := replay.Load(f)
//	...
//	c := replaytest.Client(t, rec, nil)
//	params, _ := rec.InitializeParams()
//	c.Initialize(t.Context(), params)
//	res, err := c.Run(t.Context(), "main", sdkproto.TextBlock("say hi"))
//
// When the test ends, a cleanup closes the Client (its shutdown request is
// a client frame like any other: the recording's next one), fails the
// test unless the client followed the recording to its end, and checks
// that nothing the replay started outlived the test. Every wait is
// bounded by MaxWait.
//
// It is kept apart from package replay so that a program that serves a
// recording (dshrpc serve-replay) does not link package testing.
package replaytest

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/replay"
)

// MaxWait bounds the waits of Replay.Wait and of the cleanup of Start and
// Client: a wait that reaches it fails the test with what it waited for,
// instead of hanging until go test's -timeout.
const MaxWait = rpctest.MaxWait

// Replay is a recording served in process to one *sdkproto.Client, for a
// test: see Start.
type Replay struct {
	// Client is connected to the replay; it is not initialized.
	Client *sdkproto.Client

	t    testing.TB
	done chan struct{} // closed once Serve has returned
	err  error         // what Serve returned, once done is closed

	mu     sync.Mutex
	waited bool // the test took Serve's error with Wait
}

// Start serves rec (Recording.Serve) in process, over two io.Pipes, to a Client made by
// sdkproto.NewClient with opts, and returns them. The Client is not
// initialized: the recording's client frames, initialize among them, are
// the test's to send (InitializeParams and Prompts return them).
//
// When the test ends, a cleanup closes the Client (its shutdown is a
// client frame like any other: it must be the recording's next one),
// waits for Serve to return, and fails the test if Serve returned an
// error (a *replay.Departure, say) that the test did not take with Wait, or if
// either wait reached MaxWait; a goroutine leak check (rpctest.CheckNoLeak)
// then fails the test if anything the replay started outlived it. Tests
// that use it must not run in parallel.
func Start(t testing.TB, rec *replay.Recording, opts *sdkproto.ClientOptions) *Replay {
	t.Helper()
	rpctest.CheckNoLeak(t)
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	r := &Replay{t: t, done: make(chan struct{})}
	go func() {
		err := rec.Serve(context.Background(), c2sR, s2cW)
		s2cW.Close() // the client sees the end of its input
		c2sR.Close() // and its writes fail
		r.err = err
		close(r.done)
	}()
	r.Client = sdkproto.NewClient(s2cR, c2sW, opts)
	t.Cleanup(r.cleanup)
	return r
}

// Client returns a Client connected to a replay of rec, as Start does;
// when the test ends, anything but a replay followed to its end fails it.
func Client(t testing.TB, rec *replay.Recording, opts *sdkproto.ClientOptions) *sdkproto.Client {
	t.Helper()
	return Start(t, rec, opts).Client
}

// Wait waits for Serve to return (once the recording went across, the
// client departed from it, or its input ended) and returns what it
// returned: nil, or a *replay.Departure, say. The test owns that error: the
// cleanup no longer reports it. Wait fails the test if Serve has not
// returned within MaxWait.
func (r *Replay) Wait() error {
	r.t.Helper()
	r.mu.Lock()
	r.waited = true
	r.mu.Unlock()
	if !within(r.done) {
		r.t.Fatalf("replaytest: Serve did not return within %v (the recording still expects client frames, and the client sent none and kept its input open)", MaxWait)
	}
	return r.err
}

// Done is closed once Serve has returned.
func (r *Replay) Done() <-chan struct{} { return r.done }

// cleanup closes the Client and reports what went wrong. It is a helper:
// its failures are reported at the line of the test that called Start or
// Client, which registered it.
func (r *Replay) cleanup() {
	r.t.Helper()
	closed := make(chan error, 1)
	go func() { closed <- r.Client.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			r.t.Errorf("replaytest: closing the Client: %v", err)
		}
	case <-time.After(MaxWait):
		r.t.Errorf("replaytest: the Client's Close did not return within %v", MaxWait)
		return
	}
	if !within(r.done) {
		r.t.Errorf("replaytest: Serve did not return within %v of the Client's Close", MaxWait)
		return
	}
	r.mu.Lock()
	waited := r.waited
	r.mu.Unlock()
	if r.err != nil && !waited {
		r.t.Errorf("%v", r.err)
	}
}

// within waits for ch to be closed, at most MaxWait.
func within(ch <-chan struct{}) bool {
	t := time.NewTimer(MaxWait)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
