package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRunEchoingRuntime: a --runtime that echoes what it reads (cat) is
// named for what it does, with the exit status of a failed runtime; the
// client's own answer to the echoed initialize, echoed back in turn, is
// not taken for the runtime refusing initialize.
func TestRunEchoingRuntime(t *testing.T) {
	if _, err := exec.LookPath("cat"); err != nil {
		t.Skip("no cat on $PATH")
	}
	r := dshrpc(t, "", "run", "--runtime", "cat", "hi")
	r.wantCode(t, exitRuntime)
	wantContains(t, "stderr", r.stderr, "the peer echoed our initialize request back", "is it a DSH runtime (such as dsh --profile sdk)?")
	for _, wrong := range []string{"method not found", "refused initialize"} {
		if strings.Contains(r.stderr, wrong) {
			t.Errorf("stderr says %q:\n%s", wrong, r.stderr)
		}
	}
	if r.stdout != "" {
		t.Errorf("stdout: %q", r.stdout)
	}
}
