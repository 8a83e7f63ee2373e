package main

import (
	"errors"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/floods"
)

// floodTimeout bounds a flood's run of the binary: generous, since make
// test runs the floods beside the race-instrumented tests of other
// packages on a machine that may be shared.
const floodTimeout = 5 * time.Minute

// startFlood skips a flood unless floods are enabled (what says what it
// pushes and how long it takes) or the system cannot measure it.
func startFlood(t *testing.T, what string) {
	t.Helper()
	floods.SkipUnlessEnabled(t, what)
	if runtime.GOOS != "linux" {
		t.Skip("peak RSS is measured with ru_maxrss, in KiB on Linux")
	}
}

// runFlood runs cmd, a run of the binary that a flood measures, and
// returns its peak RSS in bytes; an exit status other than 0 is the
// caller's to judge. The run is waited for until floodTimeout, then
// killed, and the test fails saying what it waited for.
func runFlood(t *testing.T, cmd *exec.Cmd, what string) int64 {
	t.Helper()
	cmd.Env = testEnv()
	cmd.WaitDelay = 5 * time.Second // a grandchild holding a pipe open
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(floodTimeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not end within %s", what, floodTimeout)
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("%s: %v", what, err)
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
}
