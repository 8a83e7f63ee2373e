package linetest

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
// signals a WaitGroup, so the count is read again, yielding in between,
// until it falls or ten seconds pass. Calls after the first in a test do
// nothing.
func CheckNoLeak(t testing.TB) {
	if _, seen := leakChecked.LoadOrStore(t, true); seen {
		return
	}
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines outlived the test (%d before it):\n%s",
					runtime.NumGoroutine()-before, before, buf[:runtime.Stack(buf, true)])
				return
			}
			runtime.Gosched()
			time.Sleep(time.Millisecond) // polling for exits, not ordering events
		}
		leakChecked.Delete(t)
	})
}

var leakChecked sync.Map
