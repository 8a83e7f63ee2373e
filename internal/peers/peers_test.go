package peers_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/peers"
)

// recorder is a testing.TB that records how Missing ended it. Fatalf and
// Skipf do not stop the goroutine here, so the test can inspect them.
type recorder struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = true
	r.msg = fmt.Sprintf(format, args...)
}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = true
	r.msg = fmt.Sprintf(format, args...)
}

func TestMissing(t *testing.T) {
	errPeer := errors.New("not installed: run `make interop-install`")
	for _, tc := range []struct {
		env           string
		err           error
		failed, skips bool
	}{
		{env: "", err: nil},
		{env: "1", err: nil},
		{env: "", err: errPeer, skips: true},
		{env: "0", err: errPeer, skips: true},
		{env: "1", err: errPeer, failed: true},
	} {
		t.Setenv(peers.Env, tc.env)
		r := &recorder{TB: t}
		peers.Missing(r, tc.err)
		if r.failed != tc.failed || r.skipped != tc.skips {
			t.Errorf("%s=%q, err %v: failed %v skipped %v, want failed %v skipped %v",
				peers.Env, tc.env, tc.err, r.failed, r.skipped, tc.failed, tc.skips)
		}
		if tc.err != nil && !strings.Contains(r.msg, "make interop-install") {
			t.Errorf("%s=%q: message %q does not carry the error's make target", peers.Env, tc.env, r.msg)
		}
	}
}
