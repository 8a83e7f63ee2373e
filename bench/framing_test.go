package bench

import (
	"testing"
	"time"
)

// The framing suite: workloads 1 to 4 with each framing, for the
// contenders that speak both (framing.go). Benchmarks are named
// BenchmarkFramingWORKLOAD/pipe=KIND/framing=newline|header/lib=NAME, so
// that benchstat can put the framings side by side per contender
// (-row /pipe,/lib -col /framing) or the contenders side by side per
// framing (-row /pipe,/framing -col /lib). An op is what it is in the
// main suite; the stream's bytes per op are those of the event as a line
// in both framings (a header adds about 22 bytes to its 1 KiB).

// forEachFramed runs fn as the sub-benchmark
// pipe=KIND/framing=FRAMING/lib=NAME of every pipe, framing and contender
// of the framing suite.
func forEachFramed(b *testing.B, fn func(b *testing.B, kind, framing string, l *framedLib)) {
	for _, kind := range pipeKinds {
		for _, framing := range framings {
			for _, l := range framedLibs {
				b.Run("pipe="+kind+"/framing="+framing+"/lib="+l.name, func(b *testing.B) { fn(b, kind, framing, l) })
			}
		}
	}
}

// BenchmarkFramingRoundTrip is workload 1 (RoundTrip) in each framing.
func BenchmarkFramingRoundTrip(b *testing.B) {
	forEachFramed(b, func(b *testing.B, kind, framing string, l *framedLib) {
		_, cl, stop := connectFramed(kind, framing, l, l, &handlers{prompt: servePrompt})
		defer stop()
		p := helloPrompt
		b.ReportAllocs()
		cpu := startCPU()
		for b.Loop() {
			if err := checkReply(cl.callPrompt(bg, &p)); err != nil {
				b.Fatal(err)
			}
		}
		cpu.stop(b)
	})
}

// BenchmarkFramingConcurrent is workload 2 (Concurrent: 64 callers) in
// each framing.
func BenchmarkFramingConcurrent(b *testing.B) {
	forEachFramed(b, func(b *testing.B, kind, framing string, l *framedLib) {
		_, cl, stop := connectFramed(kind, framing, l, l, &handlers{prompt: servePrompt})
		defer stop()
		b.ReportAllocs()
		b.ResetTimer()
		cpu := startCPU()
		if err := callConcurrently(cl, b.N); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu.stop(b)
	})
}

// BenchmarkFramingStream is workload 3 (Stream: 1 KiB notifications,
// server to client, in order) in each framing.
func BenchmarkFramingStream(b *testing.B) {
	forEachFramed(b, func(b *testing.B, kind, framing string, l *framedLib) {
		rec := newEventRecorder(b.N)
		srv, _, stop := connectFramed(kind, framing, l, l, &handlers{event: rec.handle})
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
		if reordered > 0 {
			b.Fatalf("%d of %d events out of order", reordered, b.N)
		}
	})
}

// BenchmarkFramingLarge is workload 4 (Large: a 1 MiB param) in each
// framing.
func BenchmarkFramingLarge(b *testing.B) {
	forEachFramed(b, func(b *testing.B, kind, framing string, l *framedLib) {
		_, cl, stop := connectFramed(kind, framing, l, l, &handlers{blob: serveBlob})
		defer stop()
		p := Blob{Data: blobData}
		b.SetBytes(blobSize)
		b.ReportAllocs()
		mem, cpu := startMem(), startCPU()
		for b.Loop() {
			if err := checkReply(cl.callBlob(bg, &p)); err != nil {
				b.Fatal(err)
			}
		}
		cpu.stop(b)
		_, bytes := mem.stop(b.N)
		b.ReportMetric(bytes/blobSize, "alloc-x-payload")
	})
}

// TestFraming runs the framing suite's workloads once, small, for every
// pipe, framing and contender, each end of every connection of another
// contender than the other where both speak the framing: linerpc's
// Content-Length frames are read by go.lsp.dev/jsonrpc2's and x/exp's
// header readers and the other way round, so each contender speaks the
// framing it is named for, on the wire.
func TestFraming(t *testing.T) {
	for _, kind := range pipeKinds {
		for _, framing := range framings {
			for _, srv := range framedLibs {
				for _, cl := range framedLibs {
					if srv != cl && srv != framedLibs[0] && cl != framedLibs[0] {
						continue // each peer against itself and linerpc
					}
					t.Run("pipe="+kind+"/framing="+framing+"/server="+srv.name+"/client="+cl.name, func(t *testing.T) {
						testFramed(t, kind, framing, srv, cl)
					})
				}
			}
		}
	}
}

func testFramed(t *testing.T, kind, framing string, srv, cl *framedLib) {
	h := &handlers{prompt: servePrompt, blob: serveBlob}
	const events = 200
	rec := newEventRecorder(events)
	h.event = rec.handle
	s, c, stop := connectFramed(kind, framing, srv, cl, h)
	defer stop()
	for range 3 {
		if err := checkReply(c.callPrompt(bg, &helloPrompt)); err != nil {
			t.Fatal("round trip:", err)
		}
	}
	if err := callConcurrently(c, 2*callers); err != nil {
		t.Fatal("concurrent:", err)
	}
	if err := checkReply(c.callBlob(bg, &Blob{Data: blobData})); err != nil {
		t.Fatal("1 MiB:", err)
	}
	for i := range events {
		ev := newEvent(int64(i))
		if err := s.notifyEvent(bg, &ev); err != nil {
			t.Fatal("stream:", err)
		}
	}
	reordered, err := rec.wait(time.Minute)
	if err != nil || reordered > 0 {
		t.Fatalf("stream: %v, %d out of order", err, reordered)
	}
}
