package linetest

import (
	"testing"
	"time"
)

// WaitBound bounds every wait of the module's tests for an event. It is
// a failure report after a generous time, never a pace: a test that
// reaches it has hung, so it can be long enough for a loaded machine.
const WaitBound = time.Minute

// Within returns what ch yields, or fails the test, saying what it waited
// for, when nothing comes within WaitBound. It never returns without a
// value from ch.
func Within[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(WaitBound)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("waited %v for %s", WaitBound, what)
		panic("unreachable")
	}
}
