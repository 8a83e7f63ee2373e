package sdkproto_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

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
	if testing.Short() {
		t.Skip("flood")
	}
	const (
		deltas     = 30_000
		floodBatch = 100
		bound      = 16 << 20 // live heap growth allowed during the turn
	)
	c, p := newClPeer(t, nil)
	text := strings.Repeat("x", 1<<10)
	taken := make(chan int, 1)
	go func() {
		r := p.expect("session/prompt")
		p.send("%s", clReceipt("main", "m-1", 0))
		p.result(r, `{"messageId":"m-1"}`)
		for i := 1; i <= deltas; i++ {
			p.send("%s", clDelta("main", text, i))
			if i%floodBatch == 0 {
				<-taken
			}
		}
		p.send("%s", clTurnEnd("main", "completed", deltas+1))
		p.send("%s", clStatus("main", "idle"))
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
