package rpc_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/vectortest"
	"github.com/linerpc/linerpc/rpc"
)

// peer is the far end of a Conn under test, speaking raw lines, so that a
// test reads like a script of the wire: send a line, expect a frame.
type peer struct {
	t      *testing.T
	conn   *rpc.Conn
	in     *io.PipeWriter // what the peer sends; the Conn reads it
	out    *io.PipeReader // what the Conn writes
	frames *bufio.Reader
}

// newPeer starts a Conn with opts and returns its peer. The Conn is closed,
// its streams too, and its goroutines are checked gone when the test ends.
func newPeer(t *testing.T, opts *rpc.Options) *peer {
	t.Helper()
	checkNoLeak(t)
	connIn, peerOut := io.Pipe()
	peerIn, connOut := io.Pipe()
	c := rpc.NewConn(interruptible{connIn}, connOut, opts)
	p := &peer{t: t, conn: c, in: peerOut, out: peerIn, frames: bufio.NewReader(peerIn)}
	t.Cleanup(func() {
		c.Close()
		peerOut.Close()
		peerIn.Close()
		c.Wait()
	})
	c.Start()
	return p
}

// interruptible gives the Conn's input the SetReadDeadline of the streams
// whose blocked reads Close can interrupt (net.Conn, os.Pipe), as far as
// a Conn uses it: a deadline that has passed ends the pipe. With it, a
// caller whose context cannot end may wait for its response by reading
// (see rpc.Method.Call), so the scripted tests exercise that path.
type interruptible struct{ *io.PipeReader }

func (p interruptible) SetReadDeadline(t time.Time) error {
	if !t.IsZero() && !t.After(time.Now()) {
		p.CloseWithError(os.ErrDeadlineExceeded)
	}
	return nil
}

// send writes one line (an LF is appended) to the Conn.
func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("send: %v", err)
	}
}

// next reads the next frame the Conn wrote.
func (p *peer) next() string {
	p.t.Helper()
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := p.frames.ReadString('\n')
		ch <- result{line, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			p.t.Fatalf("reading a frame: %v", r.err)
		}
		return strings.TrimSuffix(r.line, "\n")
	case <-time.After(10 * time.Second):
		p.t.Fatal("no frame written within 10s")
		return ""
	}
}

// expect reads the next frame and matches it against want (placeholders of
// the vectors allowed, numbers compared by value).
func (p *peer) expect(want string) {
	p.t.Helper()
	got := p.next()
	if err := vectortest.Match(json.RawMessage(want), json.RawMessage(got)); err != nil {
		p.t.Fatalf("frame %s\nwant %s\n%v", got, want, err)
	}
}

// nextID reads the next frame, a request, and returns its raw id.
func (p *peer) nextRequest() (id, method string) {
	p.t.Helper()
	var f struct {
		ID     json.RawMessage
		Method string
	}
	line := p.next()
	if err := json.Unmarshal([]byte(line), &f); err != nil || f.ID == nil {
		p.t.Fatalf("want a request, got %s", line)
	}
	return string(f.ID), f.Method
}

// checkNoLeak fails the test if it leaves more goroutines running than
// it found, once its cleanups (which close its Conns and wait for them)
// have run. The tests of this package run one at a time, so the count
// tells without naming any function: a goroutine that outlived its Conn's
// Wait, or a Conn never waited for, shows as one too many. Goroutines take
// a moment to exit after the WaitGroup they signal, so the count is read
// again until it falls, for a bounded while.
func checkNoLeak(t *testing.T) {
	if _, seen := leakChecked.LoadOrStore(t, true); seen {
		return // the first check registered runs last, after every Close
	}
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines outlived the test (%d before it):\n%s",
					runtime.NumGoroutine()-before, before, buf[:runtime.Stack(buf, true)])
				return
			}
			runtime.Gosched()
			time.Sleep(time.Millisecond)
		}
	})
}

var leakChecked sync.Map

// within fails the test unless ch delivers within 10 seconds.
func within[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out after 10s")
		var zero T
		return zero
	}
}
