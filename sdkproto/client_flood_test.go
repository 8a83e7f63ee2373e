package sdkproto_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/floods"
	"github.com/linerpc/linerpc/sdkproto"
)

// liveHeap returns the heap in use after a full collection: what is live.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A long turn streamed and consumed as it arrives: 30 000 text deltas of
// 1 KiB (30 MiB of text). Stream keeps nothing it yielded, so the live heap
// stays bounded by the few deltas in flight, not by the turn. The runtime
// writes them in batches of floodBatch and waits for the consumer to have
// taken each batch, so that at most about two batches are ever unread.
func TestStreamFloodBoundedMemory(t *testing.T) {
	floods.SkipUnlessEnabled(t, "a turn of 30 MiB streamed, about 10 s")
	const (
		deltas     = 30_000
		floodBatch = 100
		bound      = 16 << 20 // live heap growth allowed during the turn
	)
	c, p := newClPeer(t, nil)
	text := strings.Repeat("x", 1<<10)
	taken := make(chan int, 1)
	stop := make(chan struct{}) // closed when the test ends
	t.Cleanup(func() { close(stop) })
	// The runtime's part runs on a goroutine of its own, as the test's
	// goroutine consumes the Stream. A part that fails ends the client's
	// input with its failure, so the Stream ends with it too.
	script := make(chan error, 1)
	go func() {
		err := func() error {
			r, err := p.tryExpect("session/prompt")
			if err != nil {
				return err
			}
			p.send("%s", clReceipt("main", "m-1", 0))
			p.result(r, `{"messageId":"m-1"}`)
			var batch []string
			for i := 1; i <= deltas; i++ {
				batch = append(batch, clDelta("main", text, i))
				if i%floodBatch == 0 {
					// One write of the whole batch, as a runtime flushes.
					if err := p.TrySend(strings.Join(batch, "\n")); err != nil {
						return fmt.Errorf("writing the deltas up to %d: %w", i, err)
					}
					batch = batch[:0]
					select {
					case <-taken:
					case <-stop:
						return nil
					}
				}
			}
			p.send("%s", clTurnEnd("main", "completed", deltas+1))
			p.send("%s", clStatus("main", "idle"))
			return nil
		}()
		if err != nil {
			p.CloseInput(err)
		}
		script <- err
	}()

	base := liveHeap()
	var peak uint64
	n, got := 0, 0
	for note, err := range c.Stream(floodCtx(t), "main", sdkproto.TextBlock("flood")) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if d, ok := note.TextDelta(); ok {
			got += len(d)
			if k := got / len(text); k%floodBatch == 0 {
				if k%(10*floodBatch) == 0 {
					peak = max(peak, liveHeap())
				}
				taken <- k
			}
		}
	}
	if err := <-script; err != nil {
		t.Fatal(err)
	}
	peak = max(peak, liveHeap())
	growth := int64(peak) - int64(base)
	t.Logf("%d notifications, %d MiB of text streamed; live heap %s at start, peak %s (growth %s, bound %s)",
		n, got>>20, mib(base), mib(peak), mib(uint64(max(growth, 0))), mib(bound))
	if got != deltas*len(text) {
		t.Fatalf("streamed %d bytes of text, want %d", got, deltas*len(text))
	}
	if growth > bound {
		t.Errorf("live heap grew by %s while streaming, bound %s", mib(uint64(growth)), mib(bound))
	}
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// floodCtx bounds a flood test: generous, as the race detector slows it
// many times over.
func floodCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// 200 000 subagents (three times the default bound) over a Client's life:
// the lineage remembers the last DefaultMaxLineage of them, so its memory
// is bounded (when every edge was kept for good, 500 000 of them took
// 55 MiB).
func TestLineageFloodBounded(t *testing.T) {
	floods.SkipUnlessEnabled(t, "200 000 subagents, about 3 s")
	const (
		children = 200_000
		bound    = 12 << 20 // every edge kept took 16 MiB
	)
	c, p := newClPeer(t, nil)
	base := liveHeap()
	sub := c.Subscribe(func(n sdkproto.Notification) bool { return n.Method == sdkproto.SessionStatus.Name() })
	defer sub.Close()
	go func() {
		// Writes only: a client that is gone makes them fail, and the test
		// sees that through its subscription.
		var batch []byte
		for i := range children {
			batch = fmt.Appendf(batch, `{"jsonrpc":"2.0","method":"subagent.started","params":{"parentSessionId":"main","childSessionId":"child-%07d"}}`+"\n", i)
			if len(batch) > 64<<10 {
				_ = p.TrySend(string(batch[:len(batch)-1]))
				batch = batch[:0]
			}
		}
		if len(batch) > 0 {
			_ = p.TrySend(string(batch[:len(batch)-1]))
		}
		p.send("%s", clStatus("main", "idle"))
	}()
	if _, err := sub.Next(floodCtx(t)); err != nil {
		t.Fatal(err)
	}
	peak := liveHeap()
	growth := int64(peak) - int64(base)
	t.Logf("%d subagent.started: live heap %s at start, %s after (growth %s, bound %s)", children, mib(base), mib(peak), mib(uint64(max(growth, 0))), mib(bound))
	if growth > bound {
		t.Errorf("live heap grew by %s, bound %s", mib(uint64(growth)), mib(bound))
	}
	if _, ok := c.ParentOf(fmt.Sprintf("child-%07d", children-1)); !ok {
		t.Error("the last child was forgotten")
	}
	if _, ok := c.ParentOf("child-0000000"); ok {
		t.Error("the first child is still remembered")
	}
}

// A subscription nobody reads fails with ErrSubscriptionOverflow after
// DefaultMaxQueued notifications, rather than holding every one.
func TestSubscriptionDefaultBound(t *testing.T) {
	if testing.Short() {
		t.Skip("flood")
	}
	c, p := newClPeer(t, nil)
	sub := c.Subscribe(nil)
	defer sub.Close()
	marker := c.Subscribe(func(n sdkproto.Notification) bool { return n.Method == "test.last" })
	defer marker.Close()
	go func() {
		for range sdkproto.DefaultMaxQueued + 10 {
			p.send("%s", clStatus("main", "running"))
		}
		p.send(`{"jsonrpc":"2.0","method":"test.last"}`)
	}()
	if _, err := marker.Next(floodCtx(t)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, err := sub.Next(floodCtx(t))
		if err != nil {
			if !errors.Is(err, sdkproto.ErrSubscriptionOverflow) {
				t.Fatalf("after %d notifications: %v, want ErrSubscriptionOverflow", n, err)
			}
			break
		}
		n++
	}
	if n != sdkproto.DefaultMaxQueued {
		t.Errorf("%d notifications before the overflow, want %d", n, sdkproto.DefaultMaxQueued)
	}
}
