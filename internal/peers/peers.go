// Package peers decides what a test does when a peer it needs from the npm
// registry (the real DSH runtime under realruntime/, the TypeScript
// packages under interop/) is not installed.
//
// By default such a test skips, with a message naming the make target that
// installs the peer, so that `go test ./...` passes on a machine with only
// Go. With LINERPC_REQUIRE_PEERS=1, which `make test` (and so CI) sets, a
// missing peer fails the test instead.
package peers

import (
	"os"
	"testing"
)

// Env names the environment variable that, set to 1, turns a missing peer
// from a skip into a failure.
const Env = "LINERPC_REQUIRE_PEERS"

// Required reports whether Env is set to 1.
func Required() bool { return os.Getenv(Env) == "1" }

// Missing ends tb when err, the reason a peer cannot be used, is not nil:
// it fails tb when peers are required and skips it otherwise. err should
// name the make target that installs the peer. Missing returns only when
// err is nil.
func Missing(tb testing.TB, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if Required() {
		tb.Fatalf("%v (%s=1: a missing peer fails the test)", err, Env)
	} else {
		tb.Skipf("%v (set %s=1 to fail instead of skipping)", err, Env)
	}
}
