package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
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

// measureEnv, set to 1, makes the test binary a measuring parent rather
// than a test run (see measureAsChild).
const measureEnv = "DSHRPC_TEST_MEASURE"

// measureAsChild, called first in TestMain, makes the test binary started
// with measureEnv=1 run its arguments as a command on its own stdio, write
// the command's peak RSS in bytes to file descriptor 3, and exit with the
// command's status (128+N when signal N ended it). Floods measure the
// binary through it: the peak RSS that wait4 reports of a child includes
// the peak of the process that started it (Go starts children with vfork,
// and exec folds the memory it shared into the child's high-water mark),
// and a test process's peak may be far above what a flood bounds, where
// this parent is fresh.
func measureAsChild() {
	if os.Getenv(measureEnv) != "1" {
		return
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "measuring:", err)
		os.Exit(125)
	}
	fmt.Fprintln(os.NewFile(3, "report"), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss<<10)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(cmd.ProcessState.ExitCode())
}

// runFlood runs cmd, a run of the binary that a flood measures, through
// the test binary as a measuring parent (measureAsChild), and returns its
// peak RSS in bytes; cmd.ProcessState then holds the parent's exit, which
// is the command's. An exit status other than 0 is the caller's to judge.
// The run is waited for until floodTimeout, then killed with its process
// group, and the test fails saying what it waited for.
func runFlood(t *testing.T, cmd *exec.Cmd, what string) int64 {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	report, reportW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer report.Close()
	cmd.Args = append([]string{self, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = self
	cmd.Env = append(testEnv(), measureEnv+"=1")
	cmd.ExtraFiles = []*os.File{reportW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second // a grandchild holding a pipe open
	err = cmd.Start()
	reportW.Close()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(floodTimeout):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("%s did not end within %s", what, floodTimeout)
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("%s: %v", what, err)
	}
	out, _ := io.ReadAll(report)
	rss, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatalf("%s: no peak RSS reported (%q)", what, out)
	}
	return rss
}
