package floods

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records a skip instead of ending the
// goroutine.
type recorder struct {
	testing.TB
	skipped string
}

func (r *recorder) Helper()                          {}
func (r *recorder) Skipf(format string, args ...any) { r.skipped = fmt.Sprintf(format, args...) }

// A flood skips by default, naming the make target and the variable that
// run it, and runs when the variable is 1.
func TestSkipUnlessEnabled(t *testing.T) {
	for value, skips := range map[string]bool{"": true, "0": true, "yes": true, "1": false} {
		t.Setenv(Env, value)
		r := &recorder{TB: t}
		SkipUnlessEnabled(r, "a test")
		if got := r.skipped != ""; got != skips {
			t.Errorf("%s=%q: skipped %v, want %v", Env, value, got, skips)
		}
		if skips && (!strings.Contains(r.skipped, "make test") || !strings.Contains(r.skipped, Env+"=1 go test")) {
			t.Errorf("%s=%q: skip message %q does not say how to run it", Env, value, r.skipped)
		}
		if Enabled() == skips {
			t.Errorf("%s=%q: Enabled() = %v", Env, value, Enabled())
		}
	}
}
