package rpctest

import "time"

// MaxWait bounds every wait of this package: for a frame (Peer.Next,
// Expect, NextCall, TryNext), for the thing under test to read a line
// (Peer.Send, TrySend), for a Recorder's writes (WaitFor, WaitForFrames),
// for the peer's readers to end (Peer.Close) and for goroutines to exit
// (CheckNoLeak). A wait that reaches it fails the test, on the test's
// goroutine, with what it waited for, instead of hanging until go test's
// -timeout. It is a failure report, never a pacing device: it is generous
// (a loaded machine running the race detector stays far below it), and a
// test that passes never waits it out.
const MaxWait = time.Minute

// newBound returns a timer that fires once MaxWait has passed.
func newBound() *time.Timer { return time.NewTimer(MaxWait) }

// waitBounded waits for done to be closed, and reports whether it was
// before MaxWait passed.
func waitBounded(done <-chan struct{}) bool {
	timer := newBound()
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		return false
	}
}
