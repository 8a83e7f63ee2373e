package rpctest

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// CheckNoLeak fails t if, once its cleanups have run (those registered
// after this call close and wait for what the test started), more
// goroutines run than when it was called. It counts goroutines rather than
// matching function names in stacks, so the tests of a package that use it
// must not run in parallel. A goroutine takes a moment to exit after it
// signals a WaitGroup, so the count is read again, at growing intervals,
// until it falls or MaxWait passes. Calls after the first in a test do
// nothing.
func CheckNoLeak(t testing.TB) {
	if _, seen := leakChecked.LoadOrStore(t, true); seen {
		return
	}
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		defer leakChecked.Delete(t)
		deadline := time.Now().Add(MaxWait)
		// Polling, as nothing signals an exit: each pause twice the last, up to 100 ms.
		for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
			n := runtime.NumGoroutine()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("rpctest: %d goroutines outlived the test (%d before it) by %v:\n%s",
					n-before, before, MaxWait, buf[:runtime.Stack(buf, true)])
				return
			}
			runtime.Gosched()
			time.Sleep(pause)
		}
	})
}

var leakChecked sync.Map
