package rpc

import (
	"context"
	"io"
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
