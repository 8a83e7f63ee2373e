package bench

import (
	"sync"
	"sync/atomic"
	"testing"
)

// callers is the number of concurrent callers of workload 2.
const callers = 64

// Workload 2: 64 goroutines calling on one connection, the round trip of
// workload 1 each; an op is one call.
func BenchmarkConcurrent(b *testing.B) {
	forEach(b, func(b *testing.B, kind string, c *contender) {
		_, cl, stop := c.connect(kind, &handlers{prompt: servePrompt})
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

// callConcurrently makes n calls from 64 goroutines.
func callConcurrently(cl client, n int) error {
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		err     error
	)
	for range callers {
		wg.Go(func() {
			p := helloPrompt
			for next.Add(1) <= int64(n) {
				if e := checkReply(cl.callPrompt(bg, &p)); e != nil {
					errOnce.Do(func() { err = e })
					next.Store(int64(n)) // stop the others
					return
				}
			}
		})
	}
	wg.Wait()
	return err
}
