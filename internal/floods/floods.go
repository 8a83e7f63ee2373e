// Package floods decides whether a flood test runs: a test that pushes
// tens or hundreds of MiB, or hundreds of thousands of messages, through
// the code to bound its memory, and so takes seconds rather than
// milliseconds.
//
// By default a flood skips, with a message that says how to run it, so
// that `go test ./...` stays quick. With LINERPC_FLOODS=1, which `make
// test` (and so CI) sets, every flood runs: a flood never passes there by
// skipping.
package floods

import (
	"os"
	"testing"
)

// Env names the environment variable that, set to 1, makes floods run.
const Env = "LINERPC_FLOODS"

// Enabled reports whether Env is set to 1.
func Enabled() bool { return os.Getenv(Env) == "1" }

// SkipUnlessEnabled skips tb, a flood, unless floods are enabled; what
// says what the flood pushes and how long it takes, for the skip message.
func SkipUnlessEnabled(tb testing.TB, what string) {
	tb.Helper()
	if !Enabled() {
		tb.Skipf("a flood (%s): make test runs it, as does %s=1 go test", what, Env)
	}
}
