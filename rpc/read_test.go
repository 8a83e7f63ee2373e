package rpc

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// deadlined is an io.PipeReader with the read deadline a caller needs to
// read its own response: a deadline that has passed ends the pipe.
type deadlined struct{ *io.PipeReader }

func (p deadlined) SetReadDeadline(t time.Time) error {
	if !t.IsZero() && !t.After(time.Now()) {
		p.CloseWithError(io.ErrClosedPipe)
	}
	return nil
}

// A caller takes the reading role only while its call awaits its
// response: once a worker settled it and let the role go, as a worker
// that delivers a lone call's response does, the caller that finds the
// role free takes its outcome, and does not read for a response that came
// already (it did, and read for ever).
func TestCallerDoesNotReadForASettledCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, peer := io.Pipe()
		c := NewConn(deadlined{in}, io.Discard, nil)
		defer func() { c.Close(); peer.Close(); c.Wait() }()
		c.lock()
		c.setPhase(&c.st, phaseOpen, nil)
		c.st.reading = readFree // free, with no worker on its way: a worker that handed it over
		c.st.looking++
		c.mu.Unlock()
		pc := c.newCall()
		pc.id, pc.mayRead = 1, true // settled: out of the table, its done not yet signalled
		f := c.newFrame()
		returned := make(chan error, 1)
		go func() {
			_, err := c.awaitOutcome(context.Background(), pc, f, 0)
			returned <- err
		}()
		synctest.Wait()
		c.lock()
		reading := c.st.reading
		c.mu.Unlock()
		if reading != readFree {
			t.Fatalf("the caller of a settled call took the reading role (%d)", reading)
		}
		pc.done <- struct{}{} // the worker signals it
		if err := <-returned; err != nil {
			t.Fatalf("awaitOutcome = %v", err)
		}
		c.lock()
		c.st.looking--
		c.mu.Unlock()
	})
}

// The worker that reads defers the answers of the handlers it runs while
// more input is buffered, to write them before it waits for input. When it
// must wait for something else first, here for room in the write queue
// for its own reply to a method not found, a worker writes what it
// deferred (it waited for that room for ever).
func TestReaderWaitingForRoomHasItsDeferredAnswersWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		connIn, peerOut := io.Pipe()
		peerIn, connOut := io.Pipe()
		reg := NewRegistry()
		Handle(reg, NewMethod[NoParams, string]("big"), func(context.Context, NoParams) (string, error) {
			return strings.Repeat("x", 900), nil
		})
		c := NewConn(connIn, connOut, &Options{Handler: reg, MaxWriteQueue: 1000})
		c.Start()
		defer func() { c.Close(); peerOut.Close(); peerIn.Close(); c.Wait() }()
		go io.WriteString(peerOut, `{"jsonrpc":"2.0","id":1,"method":"big"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"nope"}`+"\n")
		out := bufio.NewReader(peerIn)
		start := time.Now()
		for _, want := range []string{`"id":1,"result":"xxx`, `"id":2,"error":{"code":-32601`} {
			line, err := out.ReadString('\n') // a deadlock fails the bubble
			if err != nil || !strings.Contains(line, want) {
				t.Fatalf("read %.60q, %v; want %s", line, err, want)
			}
		}
		// At once: not at the watchdog's next tick, which writes deferred
		// answers too.
		if d := time.Since(start); d != 0 {
			t.Fatalf("the answers came after %v of the bubble's time", d)
		}
	})
}
