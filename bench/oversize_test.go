package bench

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	oversizeMiB = flag.Int("oversize-mib", 256, "length of the oversize line of BenchmarkOversize, in MiB (8 with -short)")
	heapCapMiB  = flag.Int("oversize-cap-mib", 2048, "heap above which BenchmarkOversize gives up on a contender (n/a)")
)

// oversizeLen is the length of the oversize line, '\n' excluded.
func oversizeLen() int {
	if testing.Short() {
		return 8 << 20
	}
	return *oversizeMiB << 20
}

// Workload 6: one oversize line, then a valid frame. The line is a
// well-formed notification for a method nobody handles,
// {"jsonrpc":"2.0","method":"session/oversize","params":{"data":"AAAA…"}},
// 256 MiB long (no newline inside; -oversize-mib sets the size), written in
// 1 MiB Writes from one reused chunk (the writer itself allocates nothing);
// then the round-trip request with id k, one line. An op ends when the
// response to that request has been read back: ns/op is the time until the
// valid frame is served.
//
// peak-heap-MiB is the highest heap-objects level sampled every 500 µs
// during the op (runtime/metrics /memory/classes/heap/objects:bytes) above
// its level after a GC before the op, the highest of the ops; alloc-MiB/op
// is what the process allocated per op. A contender whose heap passes
// -oversize-cap-mib, or that does not answer within two minutes, is stopped
// and reported n/a (skipped, with the reason).
//
// A contender with a maximum frame size (linerpc: 64 MiB by default; the
// floor: the same) skips the line; the others buffer and parse all of it.
func BenchmarkOversize(b *testing.B) {
	forEach(b, func(b *testing.B, kind string, c *contender) {
		o := startOversize(kind, c)
		defer o.stop()
		var peak float64
		var total uint64
		b.ReportAllocs()
		for i := range b.N {
			b.StopTimer()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			b.StartTimer()
			p, err := o.op(uint64(i+1), oversizeLen(), 2*time.Minute)
			b.StopTimer()
			if err != nil {
				na(b, fmt.Sprintf("%v (heap peak %.0f MiB)", err, p))
			}
			runtime.ReadMemStats(&ms)
			total += ms.TotalAlloc - before
			peak = max(peak, p)
			b.StartTimer()
		}
		b.ReportMetric(peak, "peak-heap-MiB")
		b.ReportMetric(float64(total)/float64(b.N)/(1<<20), "alloc-MiB/op")
	})
}

// oversizeRun is a serving end fed an oversize line and a request at a time.
type oversizeRun struct {
	w     io.Writer
	resps chan uint64 // ids of the successful responses read back
	rerr  chan error
	stop  func()
}

func startOversize(kind string, c *contender) *oversizeRun {
	a, b := newPipe(kind)
	s := c.serve(a, &handlers{prompt: servePrompt})
	o := &oversizeRun{w: b, resps: make(chan uint64, 16), rerr: make(chan error, 1)}
	var once sync.Once
	o.stop = func() {
		once.Do(func() {
			b.Close()
			s.close()
			a.Close()
		})
	}
	go func() {
		lr := newLineReader(b, 1<<20)
		for {
			line, err := lr.next()
			if err != nil {
				o.rerr <- err
				return
			}
			var r struct {
				ID     json.RawMessage `json:"id"`
				Result *Reply          `json:"result"`
			}
			if json.Unmarshal(line, &r) != nil || r.Result == nil || r.Result.MessageID != "m-1" {
				continue // error responses to the oversize line, if any
			}
			id, err := strconv.ParseUint(string(r.ID), 10, 64)
			if err == nil {
				o.resps <- id
			}
		}
	}()
	return o
}

var (
	oversizeHead  = []byte(`{"jsonrpc":"2.0","method":"` + notifyOversize + `","params":{"data":"`)
	oversizeTail  = []byte("\"}}\n")
	oversizeChunk = bytes.Repeat([]byte{'A'}, 1<<20)
)

func requestLine(id uint64) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatUint(id, 10) +
		`,"method":"session/prompt","params":` + string(promptJSON) + "}\n")
}

// op writes an oversize line of size bytes and request id, and waits for
// its response. It returns the peak heap growth in MiB.
func (o *oversizeRun) op(id uint64, size int, timeout time.Duration) (float64, error) {
	sampler := startHeapSampler()
	capped := make(chan struct{})
	go func() { // stop a contender that would exhaust the machine
		for !sampler.stopped.Load() {
			if sampler.peak() > float64(*heapCapMiB) {
				close(capped)
				o.stop()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	werr := make(chan error, 1)
	go func() {
		werr <- o.write(id, size)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var err error
	for err == nil {
		select {
		case got := <-o.resps:
			if got == id {
				return sampler.stop(), nil
			}
		case e := <-werr:
			if e != nil {
				err = fmt.Errorf("writing: %w", e)
			}
		case e := <-o.rerr:
			err = fmt.Errorf("connection ended: %w", e)
		case <-capped:
			err = fmt.Errorf("heap above %d MiB", *heapCapMiB)
		case <-timer.C:
			err = fmt.Errorf("no response after %v", timeout)
		}
	}
	p := sampler.stop()
	o.stop()
	return p, err
}

func (o *oversizeRun) write(id uint64, size int) error {
	if _, err := o.w.Write(oversizeHead); err != nil {
		return err
	}
	n := size - len(oversizeHead) - len(oversizeTail) + 1
	for n > 0 {
		k := min(n, len(oversizeChunk))
		if _, err := o.w.Write(oversizeChunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	if _, err := o.w.Write(oversizeTail); err != nil {
		return err
	}
	_, err := o.w.Write(requestLine(id))
	return err
}

// heapSampler samples the heap-objects level every 500 µs.
type heapSampler struct {
	base    uint64
	max     atomic.Uint64
	stopped atomic.Bool
	done    chan struct{}
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func readHeap(s []metrics.Sample) uint64 {
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapSampler() *heapSampler {
	s := []metrics.Sample{{Name: heapMetric}}
	h := &heapSampler{base: readHeap(s), done: make(chan struct{})}
	h.max.Store(h.base)
	go func() {
		defer close(h.done)
		s := []metrics.Sample{{Name: heapMetric}}
		for !h.stopped.Load() {
			if v := readHeap(s); v > h.max.Load() {
				h.max.Store(v)
			}
			time.Sleep(500 * time.Microsecond)
		}
	}()
	return h
}

func (h *heapSampler) peak() float64 {
	return float64(h.max.Load()-h.base) / (1 << 20)
}

func (h *heapSampler) stop() float64 {
	if !h.stopped.Swap(true) {
		<-h.done
	}
	return h.peak()
}
