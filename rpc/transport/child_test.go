package transport_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/internal/proctest"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/rpc/transport"
)

// needsProcessGroups skips the tests that signal process groups and read
// /proc.
func needsProcessGroups(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc; process groups are unix-only")
	}
}

// startSh starts sh -c script as a Child; what it writes to stderr also
// goes to the Recorder returned. The Child is closed when the test ends.
func startSh(t *testing.T, script string, opts *transport.ChildOptions) (*transport.Child, *exec.Cmd, *rpctest.Recorder) {
	t.Helper()
	stderr := &rpctest.Recorder{Stream: true}
	cmd := exec.Command("sh", "-c", script)
	cmd.Stderr = stderr
	ch, err := transport.StartChild(cmd, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	return ch, cmd, stderr
}

// waitStderr waits until the child has written line to its stderr.
func waitStderr(t *testing.T, stderr *rpctest.Recorder, line string) {
	t.Helper()
	stderr.WaitFor(t, func(d []byte) bool { return bytes.Contains(d, []byte(line+"\n")) })
}

// gone fails the test unless the process pid is gone.
func gone(t *testing.T, what string, pid int) {
	t.Helper()
	if !proctest.Gone(t, pid) {
		t.Errorf("%s %d is still running", what, pid)
	}
}

// Close's ladder stops at the first step after which the child is
// reaped: the end of its input, SIGTERM, SIGKILL. Each child is reaped,
// and its group is gone. The graces that a child must wait out are
// short; those that bound a step the child does take are the tests'
// failure bound.
func TestChildCloseLadder(t *testing.T) {
	needsProcessGroups(t)
	cases := []struct {
		name, script string
		opts         transport.ChildOptions
		exitCode     int
		signal       syscall.Signal
	}{
		// Exits at the end of its input.
		{"stdin-eof", `cat >/dev/null; exit 4`, transport.ChildOptions{EOFGrace: linetest.WaitBound, KillGrace: linetest.WaitBound}, 4, 0},
		// Ignores the end of its input: SIGTERM ends it.
		{"sigterm", `echo ready >&2; exec sleep 1000`, transport.ChildOptions{EOFGrace: 50 * time.Millisecond, KillGrace: linetest.WaitBound}, -1, syscall.SIGTERM},
		// Ignores SIGTERM too (sleep inherits the ignored signal): SIGKILL.
		{"sigkill", `trap "" TERM; echo ready >&2; exec sleep 1000`, transport.ChildOptions{EOFGrace: 50 * time.Millisecond, KillGrace: 300 * time.Millisecond}, -1, syscall.SIGKILL},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rpctest.CheckNoLeak(t)
			ch, cmd, stderr := startSh(t, tc.script, &tc.opts)
			if tc.signal != 0 {
				waitStderr(t, stderr, "ready") // its signal dispositions are set
			}
			if err := ch.Close(); err != nil {
				t.Fatal(err)
			}
			st := ch.ProcessState()
			if st == nil {
				t.Fatal("Close returned before the child was reaped")
			}
			ws := st.Sys().(syscall.WaitStatus)
			if st.ExitCode() != tc.exitCode || (tc.signal != 0 && (!ws.Signaled() || ws.Signal() != tc.signal)) {
				t.Errorf("the child ended with %v, want code %d signal %v", st, tc.exitCode, tc.signal)
			}
			gone(t, "the child", cmd.Process.Pid)
			if err := syscall.Kill(-cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("the child's process group is still there: %v", err)
			}
			if err := ch.Conn().Call(t.Context(), "anything", nil, nil); err == nil {
				t.Error("a call succeeded after Close")
			}
		})
	}
}

// A grandchild left running in the child's process group when the child
// exits is swept by Close; so is one that holds the child's stderr open,
// which does not hold Close up for more than its drain.
func TestChildGrandchildSwept(t *testing.T) {
	needsProcessGroups(t)
	rpctest.CheckNoLeak(t)
	ch, cmd, stderr := startSh(t, `sleep 1000 & echo "grandchild $!" >&2; cat >/dev/null`, &transport.ChildOptions{EOFGrace: linetest.WaitBound, KillGrace: linetest.WaitBound})
	line := stderr.WaitFor(t, func(d []byte) bool { return bytes.HasSuffix(d, []byte("\n")) })
	grandchild, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(string(line)), "grandchild "))
	if err != nil {
		t.Fatalf("stderr %q", line)
	}
	if proctest.Gone(t, grandchild) {
		t.Fatal("the grandchild is not running")
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
	if st := ch.ProcessState(); st == nil || st.ExitCode() != 0 {
		t.Errorf("the child ended with %v, want exit 0 at the end of its input", st)
	}
	gone(t, "the child", cmd.Process.Pid)
	gone(t, "the grandchild", grandchild)
}

// The stderr tail keeps the last lines, the unterminated last one
// included, and the child's stderr is copied to cmd.Stderr as well.
func TestChildStderrTail(t *testing.T) {
	rpctest.CheckNoLeak(t)
	ch, _, stderr := startSh(t, `for i in 1 2 3 4; do echo "line $i" >&2; done; read line; echo "line 5" >&2; printf 'no newline' >&2; exit 1`, &transport.ChildOptions{StderrLines: 3})
	waitStderr(t, stderr, "line 4") // it is in the tail before it is copied
	if got := strings.Join(ch.StderrTail(), "|"); got != "line 2|line 3|line 4" {
		t.Errorf("tail %q while the child runs, want the last 3 of lines 1 to 4", got)
	}
	if err := ch.Conn().Notify(t.Context(), "go on", nil); err != nil {
		t.Fatal(err)
	}
	linetest.Within(t, ch.Exited(), "the child to exit")
	// Once the child has exited, StderrTail lets the reader take in the
	// rest of the pipe.
	want := "line 3|line 4|line 5|no newline"
	if got := strings.Join(ch.StderrTail(), "|"); got != "line 4|line 5|no newline" {
		t.Errorf("tail %q, want the last 3 of %q", got, want)
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
	if got := string(stderr.Bytes()); got != "line 1\nline 2\nline 3\nline 4\nline 5\nno newline" {
		t.Errorf("copied to cmd.Stderr: %q", got)
	}
	if code := ch.ProcessState().ExitCode(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
}

// StartChild refuses a command it cannot own, and returns cmd.Start's
// error as it is.
func TestChildStartErrors(t *testing.T) {
	rpctest.CheckNoLeak(t)
	_, err := transport.StartChild(exec.Command("/nonexistent/child"), nil)
	if !errors.Is(err, fs.ErrNotExist) || strings.HasPrefix(err.Error(), "transport:") {
		t.Errorf("a child that cannot start: %v, want cmd.Start's error", err)
	}
	cmd := exec.Command("sh")
	cmd.Stdout = new(strings.Builder)
	if _, err := transport.StartChild(cmd, nil); err == nil {
		t.Error("StartChild accepted a command with Stdout set")
	}
	// A context that has ended already: nothing is started.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	cmd = exec.Command("sh")
	if _, err := transport.StartChildContext(ctx, cmd, nil); !errors.Is(err, context.Canceled) || cmd.Process != nil {
		t.Errorf("StartChildContext with an ended context: %v, process %v", err, cmd.Process)
	}
}

// A Child speaks to a Go child serving its stdio; Close ends it at the
// end of its input, the first step.
func TestChildOverServeStdio(t *testing.T) {
	rpctest.CheckNoLeak(t)
	ch, cmd, _ := startHelper(t, &transport.ChildOptions{EOFGrace: linetest.WaitBound, KillGrace: linetest.WaitBound})
	if res := linetest.Within(t, linetest.Call(t.Context(), ch.Conn(), "hello"), "the echo"); res.Err != nil || res.Result.Echo != "hello" {
		t.Fatalf("echo: %+v", res)
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
	if st := ch.ProcessState(); st == nil || st.ExitCode() != 0 {
		t.Errorf("the child ended with %v, want exit 0", st)
	}
	if tail := ch.StderrTail(); len(tail) != 1 || tail[0] != "serving" {
		t.Errorf("stderr tail %q", tail)
	}
	if runtime.GOOS == "linux" {
		gone(t, "the child", cmd.Process.Pid)
	}
}
