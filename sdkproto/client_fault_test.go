package sdkproto_test

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/proctest"
	"github.com/linerpc/linerpc/rpc/rpctest"

	"github.com/linerpc/linerpc/sdkproto"
)

// Faults of the runtime under the Client: a runtime that stops reading its
// input, one whose own child holds its output, a writer that never returns.

// faultWait is the slack these tests allow on top of the bounds the Client
// promises, and bounds their waits for a real child process: generous, so
// that a loaded machine does not fail them.
const faultWait = 30 * time.Second

// closeBound is the bound that Close documents for opts.
func closeBound(o *sdkproto.ClientOptions) time.Duration {
	return o.ShutdownTimeout + o.EOFGrace + 5*o.KillGrace + 500*time.Millisecond
}

// A runtime that never reads its stdin, whose own background child holds
// its stdout and stderr: a 1 MiB prompt cannot be written, its deadline
// still ends it; Close sends shutdown (which cannot be written either),
// runs the ladder within its bound, and neither the child nor the
// grandchild survives it.
func TestCloseRuntimeNotReadingWithGrandchild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc; process groups are unix-only")
	}
	t.Parallel()
	opts := &sdkproto.ClientOptions{ShutdownTimeout: 200 * time.Millisecond, EOFGrace: 200 * time.Millisecond, KillGrace: 500 * time.Millisecond}
	// The first line of the child's stderr comes to lines; the wait for it
	// keeps a bound, as a real child process may never write it.
	lines := make(chan string, 1)
	cmd := exec.Command("sh", "-c", `sleep 1000 & echo "$!" >&2; exec sleep 1000`)
	cmd.Stderr = &rpctest.Recorder{Stream: true, OnFrame: func(f []byte) {
		select {
		case lines <- strings.TrimSuffix(string(f), "\n"):
		default:
		}
	}}
	c, err := sdkproto.Launch(cmd, opts)
	if err != nil {
		t.Fatal(err)
	}
	var grandchild int
	select {
	case l := <-lines:
		if grandchild, err = strconv.Atoi(l); err != nil {
			t.Fatalf("grandchild pid %q", l)
		}
	case <-time.After(faultWait):
		t.Fatal("the runtime did not report its child")
	}
	child := cmd.Process.Pid

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	promptDone := make(chan error, 1)
	go func() {
		_, err := c.Prompt(ctx, "main", sdkproto.TextBlock(strings.Repeat("x", 1<<20)))
		promptDone <- err
	}()
	select {
	case err := <-promptDone:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Prompt: %v, want its deadline", err)
		}
		t.Logf("Prompt of 1 MiB with a 1s deadline returned after %v", time.Since(start).Round(time.Millisecond))
	case <-time.After(faultWait):
		t.Fatal("Prompt did not return after its deadline")
	}

	start = time.Now()
	closeDone := make(chan error, 1)
	go func() { closeDone <- c.Close() }()
	select {
	case err := <-closeDone:
		took := time.Since(start)
		t.Logf("Close returned after %v (bound %v): %v", took.Round(time.Millisecond), closeBound(opts), err)
		if err != nil {
			t.Errorf("Close: %v", err)
		}
		if took > closeBound(opts)+faultWait/2 {
			t.Errorf("Close took %v, far beyond its bound %v", took, closeBound(opts))
		}
	case <-time.After(closeBound(opts) + faultWait):
		t.Fatal("Close did not return")
	}
	st := c.ProcessState()
	if st == nil {
		t.Fatal("the child was not reaped")
	}
	t.Logf("child %d: %v", child, st)
	if !proctest.Gone(t, child) {
		t.Errorf("child %d still running", child)
	}
	if !proctest.Gone(t, grandchild) {
		t.Errorf("grandchild %d still running after Close", grandchild)
	}
	var tc *sdkproto.TransportClosedError
	if _, err := c.Prompt(context.Background(), "main", sdkproto.TextBlock("hi")); !errors.As(err, &tc) {
		t.Fatalf("Prompt after Close: %v", err)
	} else if tail := strings.Join(tc.StderrTail, "\n"); !strings.Contains(tail, "shutdown request failed") {
		t.Errorf("stderr tail %q does not say the shutdown failed", tail)
	}
}

// Over io.Pipe with nobody reading the runtime's side: a request stuck in
// Write ends at its deadline, and Close returns within its bound (closing
// the pipe ends the Write).
func TestCloseOverPipeNobodyReading(t *testing.T) {
	t.Parallel()
	opts := &sdkproto.ClientOptions{ShutdownTimeout: 100 * time.Millisecond, KillGrace: 300 * time.Millisecond}
	_, c2sW := io.Pipe() // its reader is never read
	s2cR, s2cW := io.Pipe()
	defer s2cW.Close()
	c := sdkproto.NewClient(s2cR, c2sW, opts)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.Initialize(ctx, clInitParams()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Initialize: %v, want its deadline", err)
	}
	start := time.Now()
	err := c.Close()
	took := time.Since(start)
	t.Logf("Close returned after %v: %v", took.Round(time.Millisecond), err)
	if err != nil {
		t.Errorf("Close: %v", err)
	}
	if took > closeBound(opts)+faultWait {
		t.Errorf("Close took %v, far beyond its bound %v", took, closeBound(opts))
	}
	select {
	case <-c.Done():
	default:
		t.Error("the connection has not ended after Close")
	}
}

// stuckWriter blocks every Write until released, and cannot be closed.
type stuckWriter struct{ release chan struct{} }

func (w stuckWriter) Write(b []byte) (int, error) {
	<-w.release
	return 0, io.ErrClosedPipe
}

// A writer whose Write never returns and that the Client cannot close:
// Close still returns within its bound, and says which goroutine it had to
// leave behind.
func TestCloseWriterStuckForever(t *testing.T) {
	t.Parallel()
	opts := &sdkproto.ClientOptions{ShutdownTimeout: 100 * time.Millisecond, KillGrace: 200 * time.Millisecond}
	w := stuckWriter{make(chan struct{})}
	defer close(w.release)
	s2cR, s2cW := io.Pipe()
	defer s2cW.Close()
	c := sdkproto.NewClient(s2cR, w, opts)
	start := time.Now()
	err := c.Close()
	took := time.Since(start)
	t.Logf("Close returned after %v: %v", took.Round(time.Millisecond), err)
	if err == nil || !strings.Contains(err.Error(), "cannot be interrupted") {
		t.Errorf("Close: %v, want it to say a write could not be interrupted", err)
	}
	if took > closeBound(opts)+faultWait {
		t.Errorf("Close took %v, far beyond its bound %v", took, closeBound(opts))
	}
}
