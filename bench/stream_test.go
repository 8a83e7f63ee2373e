package bench

import (
	"testing"
	"time"
)

// Workload 3: a stream of ~1 KiB session.event notifications (an
// assistant/message event with 800 characters of text) from the server to
// the client, decoded into Event on the client and checked: every event
// equal to the one sent, each sequence number exactly once, in order. An op
// is one event; the clock stops when the last one has been received.
//
// A contender that documents no ordering guarantee (jrpc2) is not failed for
// reordering: reordered-% reports the share of events that did not arrive
// right after their predecessor. Any other contender fails on the first.
func BenchmarkStream(b *testing.B) {
	forEach(b, func(b *testing.B, kind string, c *contender) {
		rec := newEventRecorder(b.N)
		srv, _, stop := c.connect(kind, &handlers{event: rec.handle})
		defer stop()
		ev := newEvent(0)
		b.SetBytes(int64(eventFrameSize))
		b.ReportAllocs()
		b.ResetTimer()
		cpu := startCPU()
		for i := range b.N {
			ev.Event.Seq = int64(i)
			if err := srv.notifyEvent(bg, &ev); err != nil {
				b.Fatal(err)
			}
		}
		reordered, err := rec.wait(time.Minute)
		b.StopTimer()
		cpu.stop(b)
		if err != nil {
			b.Fatal(err)
		}
		if reordered > 0 && c.unordered == "" {
			b.Fatalf("%d of %d events out of order", reordered, b.N)
		}
		b.ReportMetric(100*float64(reordered)/float64(b.N), "reordered-%")
	})
}
