package bench

import (
	"testing"
	"time"
)

// The short tests run every workload once, small, for every contender over
// every pipe, so that a broken adapter or harness fails in `go test -short`
// before anyone benchmarks it.

func TestRoundTrip(t *testing.T) {
	forEachT(t, func(t *testing.T, kind string, c *contender) {
		_, cl, stop := c.connect(kind, &handlers{prompt: servePrompt})
		defer stop()
		for range 3 {
			if err := checkReply(cl.callPrompt(bg, &helloPrompt)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestConcurrent(t *testing.T) {
	forEachT(t, func(t *testing.T, kind string, c *contender) {
		_, cl, stop := c.connect(kind, &handlers{prompt: servePrompt})
		defer stop()
		if err := callConcurrently(cl, 4*callers); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStream(t *testing.T) {
	forEachT(t, func(t *testing.T, kind string, c *contender) {
		const n = 500
		rec := newEventRecorder(n)
		srv, _, stop := c.connect(kind, &handlers{event: rec.handle})
		defer stop()
		for i := range n {
			ev := newEvent(int64(i))
			if err := srv.notifyEvent(bg, &ev); err != nil {
				t.Fatal(err)
			}
		}
		reordered, err := rec.wait(30 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if reordered > 0 {
			if c.unordered == "" {
				t.Fatalf("%d of %d events out of order", reordered, n)
			}
			t.Logf("%d of %d events out of order (%s)", reordered, n, c.unordered)
		}
	})
}

func TestLarge(t *testing.T) {
	forEachT(t, func(t *testing.T, kind string, c *contender) {
		_, cl, stop := c.connect(kind, &handlers{blob: serveBlob})
		defer stop()
		p := Blob{Data: blobData}
		for range 2 {
			if err := checkReply(cl.callBlob(bg, &p)); err != nil {
				t.Fatal(err)
			}
		}
		// A corrupted payload must fail, not pass: the check is live.
		bad := Blob{Data: blobData[:len(blobData)-4] + "AAAA"}
		if bad.Data != blobData {
			if _, err := cl.callBlob(bg, &bad); err == nil {
				t.Fatal("a corrupted blob was accepted")
			}
		}
	})
}

// TestGarbage checks diesOnGarbage, the claim behind the n/a of the mixed
// stream of workload 5: a contender that claims to survive garbage lines
// handles the valid frames around them; one that claims to die does not
// handle the frame after the first garbage line.
func TestGarbage(t *testing.T) {
	forEachT(t, func(t *testing.T, kind string, c *contender) {
		f := startNoteFeed(kind, c)
		defer f.stop()
		if err := f.feed(2, false, 10*time.Second); err != nil {
			t.Fatal("valid lines:", err)
		}
		err := f.feed(4, true, 500*time.Millisecond)
		switch {
		case c.diesOnGarbage == "" && err != nil:
			t.Fatal("mixed lines:", err)
		case c.diesOnGarbage != "" && err == nil:
			t.Fatalf("claimed to die on garbage (%s), but handled every valid line", c.diesOnGarbage)
		case err != nil:
			t.Logf("n/a as claimed: %v", err)
		}
	})
}

func TestOversize(t *testing.T) {
	forEachT(t, func(t *testing.T, kind string, c *contender) {
		o := startOversize(kind, c)
		defer o.stop()
		size := 8 << 20
		for id := uint64(1); id <= 2; id++ {
			peak, err := o.op(id, size, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("op %d: heap peak %.1f MiB", id, peak)
		}
	})
}
