package sdkproto_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/sdkproto"
)

// Fake runtimes made of sh, to test process handling without node.

// procCtx bounds a call that a real child process answers, which can
// hang where a scripted peer cannot: a failure bound, not a pace.
func procCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func launchSh(t *testing.T, script string, opts *sdkproto.ClientOptions) *sdkproto.Client {
	t.Helper()
	c, err := sdkproto.Launch(exec.Command("sh", "-c", script), opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A runtime that dies: the pending call fails with the exit code and the
// last stderr lines.
func TestLaunchCrash(t *testing.T) {
	t.Parallel()
	c := launchSh(t, `read line; echo "booting" >&2; echo "fatal: crashed" >&2; exit 3`, nil)
	defer c.Close()
	_, err := c.Initialize(procCtx(t), clInitParams())
	var tc *sdkproto.TransportClosedError
	if !errors.As(err, &tc) || !errors.Is(err, rpc.ErrInputEnded) {
		t.Fatalf("got %v, want a *TransportClosedError", err)
	}
	if !tc.Exited || tc.ExitCode != 3 || strings.Join(tc.StderrTail, "|") != "booting|fatal: crashed" {
		t.Errorf("exited %v code %d tail %q", tc.Exited, tc.ExitCode, tc.StderrTail)
	}
	if !strings.Contains(err.Error(), "\nexit code: 3\nstderr tail:\nbooting\nfatal: crashed") {
		t.Errorf("message %q", err.Error())
	}
}

func TestLaunchSpawnError(t *testing.T) {
	t.Parallel()
	_, err := sdkproto.Launch(exec.Command("/nonexistent/dsh-runtime"), nil)
	var tc *sdkproto.TransportClosedError
	if !errors.As(err, &tc) || !strings.HasPrefix(err.Error(), "spawn error: ") {
		t.Fatalf("got %v", err)
	}
	if _, err := sdkproto.Launch(&exec.Cmd{Path: "sh", Stdout: new(strings.Builder)}, nil); err == nil {
		t.Error("Launch accepted a command with Stdout set")
	}
}

// The teardown ladder stops at the first step that works.
func TestLaunchTeardownLadder(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX signals")
	}
	t.Parallel()
	fast := &sdkproto.ClientOptions{ShutdownTimeout: 50 * time.Millisecond, EOFGrace: 300 * time.Millisecond, KillGrace: 300 * time.Millisecond}
	cases := []struct {
		name, script string
		exitCode     int
		signal       syscall.Signal
	}{
		// Answers shutdown and exits 0, as the real runtime does.
		{"shutdown", `read line; id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/'); printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id"; exit 0`, 0, 0},
		// Ignores shutdown but exits on stdin EOF.
		{"stdin-eof", `cat >/dev/null; exit 4`, 4, 0},
		// Ignores stdin EOF, as the real runtime does: SIGTERM ends it.
		{"sigterm", `exec sleep 30`, -1, syscall.SIGTERM},
		// Ignores SIGTERM too: SIGKILL.
		{"sigkill", `trap "" TERM; while :; do sleep 0.05; done`, -1, syscall.SIGKILL},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := launchSh(t, tc.script, fast)
			start := time.Now()
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Close took %v", d)
			}
			st := c.ProcessState()
			if st == nil {
				t.Fatal("process not reaped")
			}
			ws := st.Sys().(syscall.WaitStatus)
			if st.ExitCode() != tc.exitCode || (tc.signal != 0 && (!ws.Signaled() || ws.Signal() != tc.signal)) {
				t.Errorf("exit %v, want code %d signal %v", st, tc.exitCode, tc.signal)
			}
		})
	}
}

// The stderr tail keeps the last lines only.
func TestLaunchStderrTail(t *testing.T) {
	t.Parallel()
	// The Client copies the child's stderr here after it took the bytes into
	// its tail: once the last line is here, the tail holds it.
	stderr := &rpctest.Recorder{Stream: true}
	cmd := exec.Command("sh", "-c", `for i in 1 2 3 4 5; do echo "line $i" >&2; done; read line; exit 1`)
	cmd.Stderr = stderr
	c, err := sdkproto.Launch(cmd, &sdkproto.ClientOptions{StderrLines: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stderr.WaitFor(t, func(d []byte) bool { return bytes.Contains(d, []byte("line 5\n")) })
	_, err = c.Prompt(procCtx(t), "main", sdkproto.TextBlock("hi"))
	var tc *sdkproto.TransportClosedError
	if !errors.As(err, &tc) || strings.Join(tc.StderrTail, "|") != "line 4|line 5" {
		t.Fatalf("got %v", err)
	}
}

// A shutdown request that failed is the last line of the stderr tail,
// after what the runtime wrote as Close ended it, within StderrLines.
func TestLaunchShutdownFailureInStderrTail(t *testing.T) {
	t.Parallel()
	stderr := &rpctest.Recorder{Stream: true}
	// It reads shutdown without answering it, and exits at the end of its
	// input, saying so.
	cmd := exec.Command("sh", "-c", `for i in 1 2 3; do echo "line $i" >&2; done; cat >/dev/null; echo "bye" >&2`)
	cmd.Stderr = stderr
	c, err := sdkproto.Launch(cmd, &sdkproto.ClientOptions{StderrLines: 3, ShutdownTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	stderr.WaitFor(t, func(d []byte) bool { return bytes.Contains(d, []byte("line 3\n")) })
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if st := c.ProcessState(); st == nil || st.ExitCode() != 0 {
		t.Fatalf("the runtime ended with %v, want exit 0 at the end of its input", st)
	}
	_, err = c.Prompt(procCtx(t), "main", sdkproto.TextBlock("hi"))
	var tc *sdkproto.TransportClosedError
	if !errors.As(err, &tc) || !errors.Is(err, sdkproto.ErrClientClosed) {
		t.Fatalf("Prompt after Close: %v", err)
	}
	if len(tc.StderrTail) != 3 || tc.StderrTail[0] != "line 3" || tc.StderrTail[1] != "bye" ||
		!strings.HasPrefix(tc.StderrTail[2], "shutdown request failed: ") {
		t.Errorf("stderr tail %q, want line 3, bye, then the failed shutdown", tc.StderrTail)
	}
}
