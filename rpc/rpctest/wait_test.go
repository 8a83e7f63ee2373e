package rpctest

import (
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The waits run in a synctest bubble, where time passes only when every
// goroutine of the bubble is blocked: a wait that reaches MaxWait takes no
// real time, and the fake clock shows that it lasted exactly MaxWait.

// checkFailure fails t unless got says each of wants.
func checkFailure(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("failure %q does not say %q", got, w)
		}
	}
}

// checkWaited fails t unless exactly d passed on the bubble's clock since start.
func checkWaited(t *testing.T, start time.Time, d time.Duration) {
	t.Helper()
	if waited := time.Since(start); waited != d {
		t.Errorf("waited %v, want %v", waited, d)
	}
}

// A frame that does not come fails Expect after MaxWait with what it
// waited for and what came before; a frame written later is the next one
// taken, as the read stays under way.
func TestPeerNextBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTB{TB: t}
		p := NewPeer(f)
		go p.ConnOut.Write([]byte("{\"seq\":1}\n"))
		p.Expect(`{"seq":1}`)
		start := time.Now()
		if got := p.Expect(`{"seq":2}`); got != "" {
			t.Fatalf("Expect returned %q after failing", got)
		}
		checkWaited(t, start, MaxWait)
		checkFailure(t, f.only(t), "no frame within 1m0s", `waited for a frame matching {"seq":2}`,
			"1 frames taken before", `{"seq":1}`)

		go p.ConnOut.Write([]byte("{\"seq\":2}\n"))
		f.failures = nil
		p.Expect(`{"seq":2}`)
		if len(f.failures) != 0 {
			t.Fatalf("the late frame: %q", f.failures)
		}
	})
}

// The same bound holds for frames read ahead, for NextCall and for
// TryNext, which returns it as its error.
func TestPeerReadAheadBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTB{TB: t}
		p := NewPeer(f)
		p.ReadAhead(nil)
		start := time.Now()
		if r := p.NextCall(); r.Method != "" {
			t.Fatalf("NextCall returned %+v after failing", r)
		}
		checkWaited(t, start, MaxWait)
		checkFailure(t, f.only(t), "no frame within 1m0s", "waited for a request", "no frame taken before")

		start = time.Now()
		if _, err := p.TryNext(); err == nil || err.Error() != "no frame within 1m0s" {
			t.Fatalf("TryNext: %v", err)
		}
		checkWaited(t, start, MaxWait)
	})
}

// Until the test asks for a frame, nothing reads: the thing under test's
// write blocks, as on a pipe whose reader stalls; each Next reads one
// frame.
func TestPeerReadsOnlyWhenAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := NewPeer(t)
		written := make(chan error, 1)
		write := func(frame string) {
			_, err := io.WriteString(p.ConnOut, frame)
			written <- err
		}
		go write("{\"a\":1}\n")
		synctest.Wait()
		select {
		case err := <-written:
			t.Fatalf("the write returned (%v) before the peer took a frame", err)
		default:
		}
		p.Expect(`{"a":1}`)
		if err := <-written; err != nil {
			t.Fatal(err)
		}
		go write("{\"a\":2}\n")
		synctest.Wait()
		select {
		case err := <-written:
			t.Fatalf("the second write returned (%v) before the peer asked for it", err)
		default:
		}
		p.Expect(`{"a":2}`)
		<-written
	})
}

// A line the thing under test does not read fails Send after MaxWait.
func TestPeerSendBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTB{TB: t}
		p := NewPeer(f)
		start := time.Now()
		p.Send(`{"method":"unread"}`)
		checkWaited(t, start, MaxWait)
		checkFailure(t, f.only(t), "did not read the line within 1m0s", `{"method":"unread"}`)
	})
}

// stuckReader is an output whose Read ends only when release is closed,
// whatever Close does.
type stuckReader struct{ release chan struct{} }

func (r stuckReader) Read([]byte) (int, error) { <-r.release; return 0, io.EOF }
func (r stuckReader) Close() error             { return nil }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// A reader that Close cannot stop fails Close after MaxWait.
func TestPeerCloseBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTB{TB: t}
		out := stuckReader{make(chan struct{})}
		defer close(out.release) // before the test's cleanup closes the peer again
		p := Attach(f, nopWriteCloser{io.Discard}, out)
		if _, err := p.TryNext(); err != errNoFrame {
			t.Fatalf("TryNext: %v", err)
		}
		start := time.Now()
		p.Close()
		checkWaited(t, start, MaxWait)
		checkFailure(t, f.only(t), "reader still ran 1m0s after its streams were closed")
	})
}

// A write that does not come fails WaitFor and WaitForFrames after
// MaxWait, with what was written.
func TestRecorderWaitBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTB{TB: t}
		r := &Recorder{}
		r.Write([]byte("a\n"))
		start := time.Now()
		r.WaitForFrames(f, 2)
		checkWaited(t, start, MaxWait)
		checkFailure(t, f.only(t), "no write within 1m0s", "waited for 2 frames", `1 writes so far, of "a\n"`)

		f.failures = nil
		r.Write([]byte(strings.Repeat("x", 600) + "\n"))
		r.WaitFor(f, func([]byte) bool { return false })
		checkFailure(t, f.only(t), "waited for a write that makes the condition true",
			"2 writes so far, of 603 bytes ending \""+strings.Repeat("x", 499)+`\n"`)
	})
}

// cleanupTB keeps the cleanups registered on it, for the test to run.
type cleanupTB struct {
	fakeTB
	cleanups []func()
}

func (c *cleanupTB) Cleanup(f func()) { c.cleanups = append(c.cleanups, f) }

func (c *cleanupTB) runCleanups() {
	for i := len(c.cleanups) - 1; i >= 0; i-- {
		c.cleanups[i]()
	}
}

// Goroutines that outlive their test fail CheckNoLeak after MaxWait.
func TestCheckNoLeakBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &cleanupTB{fakeTB: fakeTB{TB: t}}
		CheckNoLeak(c)
		// CheckNoLeak counts every goroutine of the process, and those
		// that earlier tests left to exit in their own time may end in
		// the meantime: the test leaks more than they can hide.
		stop := make(chan struct{})
		for range 10 {
			go leaked(stop)
		}
		start := time.Now()
		c.runCleanups()
		if waited := time.Since(start); waited < MaxWait || waited > MaxWait+time.Second {
			t.Errorf("waited %v, want MaxWait (%v), give or take a pause of polling", waited, MaxWait)
		}
		checkFailure(t, c.only(t), "goroutines outlived the test", "by 1m0s", "rpctest.leaked(")
		close(stop)
	})
}

func leaked(stop chan struct{}) { <-stop }
