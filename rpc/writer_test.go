package rpc

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// gateWriter blocks its first Write until released, so that other frames
// queue up behind it; it records every Write and can fail on demand.
type gateWriter struct {
	mu      sync.Mutex
	entered chan struct{}
	release chan struct{}
	writes  []string
	fail    error
}

func newGateWriter() *gateWriter {
	return &gateWriter{entered: make(chan struct{}, 1), release: make(chan struct{})}
}

func (g *gateWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	first := len(g.writes) == 0
	g.writes = append(g.writes, string(p))
	fail := g.fail
	g.mu.Unlock()
	if first {
		g.entered <- struct{}{}
		<-g.release
	}
	if fail != nil {
		return 0, fail
	}
	return len(p), nil
}

// queueBehind starts a first write that blocks in the gate, then n more
// writes that queue behind it, and returns their outcomes.
func queueBehind(t *testing.T, w *writer, g *gateWriter, n int) (first chan error, rest []chan error) {
	t.Helper()
	first = make(chan error, 1)
	go func() { first <- w.write([]byte("first\n")) }()
	<-g.entered
	for i := range n {
		ch := make(chan error, 1)
		rest = append(rest, ch)
		go func() { ch <- w.write([]byte{'a' + byte(i), '\n'}) }()
	}
	// Wait until all of them are queued.
	deadline := time.Now().Add(10 * time.Second)
	for {
		w.mu.Lock()
		queued := len(w.next)
		w.mu.Unlock()
		if queued == 2*n {
			return first, rest
		}
		if time.Now().After(deadline) {
			t.Fatal("frames did not queue")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWriterCoalescesQueuedFrames(t *testing.T) {
	g := newGateWriter()
	var w writer
	w.init(g)
	first, rest := queueBehind(t, &w, g, 5)
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for _, ch := range rest {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	if len(g.writes) != 2 || g.writes[0] != "first\n" || len(g.writes[1]) != 10 {
		t.Fatalf("writes = %q, want the first frame, then the 5 queued ones in one Write", g.writes)
	}
}

func TestWriterErrorsAreSticky(t *testing.T) {
	boom := errors.New("boom")
	g := newGateWriter()
	g.fail = boom
	var w writer
	w.init(g)
	first, rest := queueBehind(t, &w, g, 3)
	close(g.release)
	if err := <-first; !errors.Is(err, boom) {
		t.Fatalf("first: %v", err)
	}
	for _, ch := range rest {
		if err := <-ch; !errors.Is(err, boom) {
			t.Fatalf("queued: %v", err)
		}
	}
	if err := w.write([]byte("later\n")); !errors.Is(err, boom) {
		t.Fatalf("later: %v", err)
	}
	if len(g.writes) != 1 {
		t.Fatalf("wrote %q after the failure", g.writes[1:])
	}
}

func TestWriterCloseFailsQueuedFrames(t *testing.T) {
	g := newGateWriter()
	var w writer
	w.init(g)
	first, rest := queueBehind(t, &w, g, 2)
	w.close()
	close(g.release)
	if err := <-first; err != nil {
		t.Fatalf("the Write in progress when Close came: %v", err)
	}
	for _, ch := range rest {
		if err := <-ch; !errors.Is(err, ErrClosed) {
			t.Fatalf("queued: %v, want ErrClosed", err)
		}
	}
	if err := w.write([]byte("later\n")); !errors.Is(err, ErrClosed) {
		t.Fatalf("later: %v", err)
	}
	if len(g.writes) != 1 {
		t.Fatalf("wrote %q after Close", g.writes[1:])
	}
}

// flush waits for the Write in progress too: the frames it carries were
// posted before flush was called (Shutdown relies on it to have the last
// replies out before the program exits).
func TestFlushWaitsForTheWriteInProgress(t *testing.T) {
	g := newGateWriter()
	var w writer
	w.init(g)
	if err := w.post([]byte("posted\n")); err != nil {
		t.Fatal(err)
	}
	go w.kick() // takes the posted frame and blocks in the gate with it
	<-g.entered
	flushed := make(chan struct{})
	go func() { w.flush(); close(flushed) }()
	select {
	case <-flushed:
		t.Fatal("flush returned while the Write carrying the posted frame was blocked")
	case <-time.After(50 * time.Millisecond):
	}
	close(g.release)
	select {
	case <-flushed:
	case <-time.After(10 * time.Second):
		t.Fatal("flush did not return after the Write did")
	}
	if len(g.writes) != 1 || g.writes[0] != "posted\n" {
		t.Fatalf("writes = %q", g.writes)
	}
}
