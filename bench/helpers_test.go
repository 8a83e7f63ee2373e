package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	jsonv2 "github.com/goccy/go-json/v2"
)

// forEach runs fn as the sub-benchmark pipe=KIND/lib=NAME of every pipe kind
// and contender, so that `benchstat -col /lib` puts the contenders side by
// side. Select a subset with -bench, e.g.
// -bench 'RoundTrip/pipe=net/lib=(floor|linerpc)$'.
func forEach(b *testing.B, fn func(b *testing.B, kind string, c *contender)) {
	for _, kind := range pipeKinds {
		for _, c := range contenders {
			b.Run("pipe="+kind+"/lib="+c.name, func(b *testing.B) { fn(b, kind, c) })
		}
	}
}

// forEachT is forEach for tests.
func forEachT(t *testing.T, fn func(t *testing.T, kind string, c *contender)) {
	for _, kind := range pipeKinds {
		for _, c := range contenders {
			t.Run("pipe="+kind+"/lib="+c.name, func(t *testing.T) { fn(t, kind, c) })
		}
	}
}

var bg = context.Background()

var naOnce sync.Map

// na skips a benchmark that a contender cannot run, and says why on the
// standard output once per benchmark name, as a line benchstat ignores:
//
//	n/a BenchmarkName reason
func na(b *testing.B, reason string) {
	if _, dup := naOnce.LoadOrStore(b.Name(), true); !dup {
		fmt.Printf("n/a %s %s\n", b.Name(), reason)
	}
	b.Skip("n/a: " + reason)
}

// servePrompt is the handler of "session/prompt": it checks the params and
// answers {"messageId":"m-1"}.
func servePrompt(p *Prompt) (Reply, error) {
	if err := checkPrompt(p); err != nil {
		return Reply{}, err
	}
	return m1, nil
}

// serveBlob is the handler of "blob/put".
func serveBlob(p *Blob) (Reply, error) {
	if err := checkBlob(p.Data); err != nil {
		return Reply{}, err
	}
	return m1, nil
}

// memDelta measures what the whole process allocated between start and
// stop (every goroutine of both ends, as -benchmem does).
type memDelta struct{ m runtime.MemStats }

func startMem() *memDelta {
	d := new(memDelta)
	runtime.ReadMemStats(&d.m)
	return d
}

func (d *memDelta) stop(n int) (allocsPerOp, bytesPerOp float64) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.Mallocs-d.m.Mallocs) / float64(n), float64(m.TotalAlloc-d.m.TotalAlloc) / float64(n)
}

// cpuDelta measures the CPU time, user and system, that the whole process
// (both ends, every goroutine) spent between start and stop.
type cpuDelta struct{ start time.Duration }

func startCPU() cpuDelta { return cpuDelta{processCPU()} }

// stop reports the CPU time per op as cpu-ns/op.
func (d cpuDelta) stop(b *testing.B) {
	b.ReportMetric(float64(processCPU()-d.start)/float64(b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// eventRecorder checks a stream of events: every sequence number of [0, n)
// exactly once, each event equal to the one sent, and counts the events that
// did not arrive right after their predecessor.
type eventRecorder struct {
	mu        sync.Mutex
	seen      []bool
	got       int
	last      int64
	reordered int
	err       error
	done      chan struct{}
}

func newEventRecorder(n int) *eventRecorder {
	return &eventRecorder{seen: make([]bool, n), last: -1, done: make(chan struct{})}
}

func (r *eventRecorder) handle(e *Event) {
	err := checkEvent(e)
	r.mu.Lock()
	defer r.mu.Unlock()
	seq := e.Event.Seq
	switch {
	case r.err != nil:
		return
	case err != nil:
		r.err = err
	case seq < 0 || seq >= int64(len(r.seen)):
		r.err = fmt.Errorf("event %d out of range", seq)
	case r.seen[seq]:
		r.err = fmt.Errorf("event %d received twice", seq)
	}
	if r.err != nil {
		close(r.done)
		return
	}
	r.seen[seq] = true
	if seq != r.last+1 {
		r.reordered++
	}
	r.last = seq
	r.got++
	if r.got == len(r.seen) {
		close(r.done)
	}
}

// wait waits until every event arrived or one was wrong; it returns the
// number of events that arrived out of order.
func (r *eventRecorder) wait(timeout time.Duration) (reordered int, err error) {
	select {
	case <-r.done:
	case <-time.After(timeout):
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.reordered, fmt.Errorf("%d of %d events received after %v", r.got, len(r.seen), timeout)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reordered, r.err
}

// eventFrameSize is the size of one session.event frame on the wire.
var eventFrameSize = func() int {
	b, err := jsonv2.Marshal(floorNotification[Event]{JSONRPC: "2.0", Method: notifyEvent, Params: newEvent(1 << 20)})
	if err != nil {
		panic(err)
	}
	return len(b) + 1
}()
