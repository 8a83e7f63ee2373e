// Package bounded waits for what may never end, for a bounded time.
package bounded

import "time"

// Wait runs wait on a goroutine and waits up to d for it to return, and
// reports whether it did. When it does not, the goroutine is left to end
// when wait returns: the caller has said it cannot wait for it.
func Wait(wait func(), d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wait()
		close(done)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
