package bench

import (
	"bufio"
	"flag"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var floodFrames = flag.Int("flood-frames", 100000, "requests of BenchmarkNoReadPeer and BenchmarkBlockedHandlers (5000 with -short)")

func floodCount() int {
	if testing.Short() {
		return 5000
	}
	return *floodFrames
}

// floodLine is a blob/put request with about 1 KiB of data.
func floodLine(id int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"blob/put","params":{"data":"%s"}}`+"\n", id, strings.Repeat("A", 1000))
}

// Workload 7: a peer that sends requests and never reads the replies. One
// op writes floodCount() requests of 1 KiB from a raw client, reading
// nothing, until it has written them all or its Write has made no progress
// for a second (the server stopped reading: backpressure). peak-heap-MiB
// is the heap growth sampled meanwhile (as in workload 6, garbage not yet
// collected included), held-MiB the live heap the server holds then (after
// a GC, before the handlers are let go), read-frames the requests the
// server took in. A contender past -oversize-cap-mib is
// stopped and reported n/a.
func BenchmarkNoReadPeer(b *testing.B) {
	forEach(b, func(b *testing.B, kind string, c *contender) {
		flood(b, kind, c, func() (*handlers, func()) {
			return &handlers{blob: func(p *Blob) (Reply, error) { return m1, nil }}, func() {}
		}, false)
	})
}

// Workload 8: handlers that never return (until the connection closes),
// and a peer that sends requests and reads whatever comes back. A server
// with a bound on its running handlers and waiting requests answers the
// rest at once (linerpc: CodeOverloaded); one without holds them all.
func BenchmarkBlockedHandlers(b *testing.B) {
	forEach(b, func(b *testing.B, kind string, c *contender) {
		flood(b, kind, c, func() (*handlers, func()) {
			release := make(chan struct{})
			return &handlers{blob: func(p *Blob) (Reply, error) {
				<-release
				return m1, nil
			}}, func() { close(release) }
		}, true)
	})
}

// flood runs the ops of workloads 7 and 8: serve makes each op's handlers
// and the function that lets them return, called before the server closes.
func flood(b *testing.B, kind string, c *contender, serve func() (*handlers, func()), read bool) {
	n := floodCount()
	lines := make([][]byte, n)
	for i := range lines {
		lines[i] = floodLine(i + 1)
	}
	var peak, held float64
	var taken int64
	for range b.N {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		a, e := newPipe(kind)
		h, release := serve()
		s := c.serve(a, h)
		replies := make(chan int, 1)
		if read {
			go func() {
				r, count := bufio.NewReader(e), 0
				for {
					if _, err := r.ReadSlice('\n'); err != nil && err != bufio.ErrBufferFull {
						replies <- count
						return
					}
					count++
				}
			}()
		}
		sampler := startHeapSampler()
		var written atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, l := range lines {
				if _, err := e.Write(l); err != nil {
					return
				}
				written.Add(1)
			}
		}()
		stalled, capped := false, false
		for last := int64(-1); !stalled && !capped; {
			select {
			case <-done:
				stalled = true // not stalled: finished; ends the loop
			case <-time.After(time.Second):
				w := written.Load()
				stalled = w == last
				last = w
				capped = sampler.peak() > float64(*heapCapMiB)
			}
		}
		p := sampler.stop()
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		held = max(held, float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20))
		release()
		a.Close()
		e.Close()
		s.close()
		<-done
		if read {
			<-replies
		}
		if capped {
			na(b, fmt.Sprintf("heap above %d MiB after %d requests", *heapCapMiB, written.Load()))
		}
		peak = max(peak, p)
		taken = max(taken, written.Load())
	}
	b.ReportMetric(peak, "peak-heap-MiB")
	b.ReportMetric(held, "held-MiB")
	b.ReportMetric(float64(taken), "read-frames")
}

// Workload 9: idle connections. One op opens 1000 server ends, makes one
// round trip on each, and measures the heap they hold once idle
// (bytes-per-idle-conn, after a GC, goroutine stacks excluded) and their
// goroutines (goroutines-per-idle-conn), the clients' share included.
func BenchmarkIdleConn(b *testing.B) {
	const conns = 1000
	forEach(b, func(b *testing.B, kind string, c *contender) {
		var bytesPer, goroutinesPer float64
		for range b.N {
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			g0 := runtime.NumGoroutine()
			stops := make([]func(), 0, conns)
			for range conns {
				_, cl, stop := c.connect(kind, &handlers{prompt: servePrompt})
				if err := checkReply(cl.callPrompt(bg, &helloPrompt)); err != nil {
					b.Fatal(err)
				}
				stops = append(stops, stop)
			}
			time.Sleep(3 * time.Second) // past linerpc's idle timeout of 2 s
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			bytesPer = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / conns
			goroutinesPer = float64(runtime.NumGoroutine()-g0) / conns
			for _, stop := range stops {
				stop()
			}
		}
		b.ReportMetric(bytesPer, "bytes-per-idle-conn")
		b.ReportMetric(goroutinesPer, "goroutines-per-idle-conn")
	})
}
