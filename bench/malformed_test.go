package bench

import (
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"
)

// Workload 5: malformed-line throughput. A raw writer feeds the serving end
// "session/note" notifications (the round-trip params, decoded into Prompt
// and checked) one line per Write, as a peer would:
//
//   - lines=valid: two valid frames per op;
//   - lines=mixed: one valid frame and one garbage line per op, the garbage
//     alternating between a line of plain text as long as the frame and the
//     frame cut short by 12 bytes (see garbageLines).
//
// The clock stops when the last valid frame has been handled. Malformed
// lines cost no more than valid ones when mixed ns/op ≤ valid ns/op. What
// the serving end writes back (jrpc2 answers each garbage line with a
// -32700 error response) is read and discarded.
//
// A contender whose connection ends at the first garbage line is reported as
// n/a (skipped with the reason); TestGarbage checks that claim.
func BenchmarkMalformed(b *testing.B) {
	forEach(b, func(b *testing.B, kind string, c *contender) {
		for _, mix := range []string{"valid", "mixed"} {
			b.Run("lines="+mix, func(b *testing.B) {
				if mix == "mixed" && c.diesOnGarbage != "" {
					na(b, c.diesOnGarbage)
				}
				f := startNoteFeed(kind, c)
				defer f.stop()
				b.SetBytes(2 * int64(len(noteFrame)+1))
				b.ReportAllocs()
				b.ResetTimer()
				if err := f.feed(b.N, mix == "mixed", time.Minute); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
			})
		}
	})
}

// noteFeed is a serving end fed raw lines.
type noteFeed struct {
	w      io.Writer
	got    atomic.Int64
	bad    atomic.Bool
	target atomic.Int64
	done   chan struct{}
	stop   func()
}

var (
	noteLine     = []byte(noteFrame + "\n")
	garbageBytes = [2][]byte{[]byte(garbageLines[0] + "\n"), []byte(garbageLines[1] + "\n")}
)

func startNoteFeed(kind string, c *contender) *noteFeed {
	f := &noteFeed{done: make(chan struct{}, 1)}
	a, b := newPipe(kind)
	h := &handlers{note: func(p *Prompt) {
		if checkPrompt(p) != nil {
			f.bad.Store(true)
		}
		if f.got.Add(1) == f.target.Load() {
			f.done <- struct{}{}
		}
	}}
	s := c.serve(a, h)
	go io.Copy(io.Discard, b)
	f.w = b
	f.stop = func() {
		b.Close()
		s.close()
		a.Close()
	}
	return f
}

// feed writes n ops (two lines each) and waits for their valid frames.
func (f *noteFeed) feed(n int, mixed bool, timeout time.Duration) error {
	want := int64(2 * n)
	if mixed {
		want = int64(n)
	}
	f.got.Store(0)
	f.target.Store(want)
	werr := make(chan error, 1)
	go func() { // a connection that died must not block the benchmark
		for i := range n {
			if _, err := f.w.Write(noteLine); err != nil {
				werr <- err
				return
			}
			second := noteLine
			if mixed {
				second = garbageBytes[i%2]
			}
			if _, err := f.w.Write(second); err != nil {
				werr <- err
				return
			}
		}
	}()
	select {
	case <-f.done:
	case err := <-werr:
		return fmt.Errorf("after %d of %d valid frames: %w", f.got.Load(), want, err)
	case <-time.After(timeout):
		return fmt.Errorf("%d of %d valid frames handled after %v", f.got.Load(), want, timeout)
	}
	if f.bad.Load() {
		return fmt.Errorf("a note was decoded wrong")
	}
	return nil
}
