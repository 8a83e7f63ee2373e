//go:build unix

package transport_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/rpc/transport"
)

// noWait is a grace that no test waits out: a child reaped only after it
// makes the wait for the step under test, bounded by WaitBound, fail
// rather than pass late; and the test still ends, once it has passed.
const noWait = 2 * linetest.WaitBound

// prefixed reads rest, then r, and keeps r's read deadline, as
// ChildOptions.Connect asks of a reader put in front of the child's
// stdout.
type prefixed struct {
	rest []byte
	r    io.Reader
}

func (p *prefixed) Read(b []byte) (int, error) {
	if len(p.rest) > 0 {
		n := copy(b, p.rest)
		p.rest = p.rest[n:]
		return n, nil
	}
	return p.r.Read(b)
}

func (p *prefixed) SetReadDeadline(t time.Time) error {
	return p.r.(interface{ SetReadDeadline(time.Time) error }).SetReadDeadline(t)
}

// groupGone fails the test unless the process group pgid is gone.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the child's process group is still there: %v", err)
	}
}

// endWithin runs end (a Child's Close or Terminate) on a goroutine of its
// own, and fails the test unless it returns nil within WaitBound.
func endWithin(t *testing.T, end func() error, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- end() }()
	if err := linetest.Within(t, done, what+" to return"); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wantSignaled fails the test unless st says that sig ended the process.
func wantSignaled(t *testing.T, st *os.ProcessState, sig syscall.Signal) {
	t.Helper()
	if st == nil {
		t.Errorf("the child was not reaped, want it ended by %v", sig)
		return
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != sig {
		t.Errorf("the child ended with %v, want %v", st, sig)
	}
}

// Connect is called once, with the pipes as they are, before any Conn: it
// writes a greeting and reads the child's answer on the raw streams, then
// makes the Conn with what it read past the answer put back in front, and
// StartChild starts that Conn. The child answers the greeting, writes a
// notification, and becomes cat: the Conn's call comes back to it as a
// request, which its own registry answers, and the answer comes back too.
func TestChildConnect(t *testing.T) {
	needsProcessGroups(t)
	rpctest.CheckNoLeak(t)
	early := make(chan string, 1)
	reg := linetest.EchoRegistry()
	rpc.HandleNotification(reg, rpc.NewNotification[string]("early"), func(_ context.Context, text string) { early <- text })
	calls := 0
	var notStarted error
	connect := func(ctx context.Context, stdout io.Reader, stdin io.Writer) (*rpc.Conn, error) {
		calls++
		if _, ok := stdout.(interface{ SetReadDeadline(time.Time) error }); !ok {
			t.Errorf("stdout is a %T, without SetReadDeadline", stdout)
		}
		if _, ok := stdin.(interface{ SetWriteDeadline(time.Time) error }); !ok {
			t.Errorf("stdin is a %T, without SetWriteDeadline", stdin)
		}
		if _, err := io.WriteString(stdin, "greeting\n"); err != nil {
			return nil, err
		}
		var got []byte
		buf := make([]byte, 4096)
		for !bytes.Contains(got, []byte("\n")) {
			n, err := stdout.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				return nil, err
			}
		}
		answer, rest, _ := bytes.Cut(got, []byte("\n"))
		if string(answer) != "hello greeting" {
			return nil, errors.New("the child answered " + string(answer))
		}
		conn := rpc.NewConn(&prefixed{rest: rest, r: stdout}, stdin, &rpc.Options{Handler: reg})
		notStarted = conn.Call(ctx, "anything", nil, nil) // before Start: ErrNotStarted
		return conn, nil
	}
	script := `read -r line; echo "hello $line"; echo '{"jsonrpc":"2.0","method":"early","params":"before the Conn"}'; exec cat`
	cmd := exec.Command("sh", "-c", script)
	ch, err := transport.StartChild(cmd, &transport.ChildOptions{Connect: connect, EOFGrace: linetest.WaitBound, KillGrace: linetest.WaitBound})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	if calls != 1 || !errors.Is(notStarted, rpc.ErrNotStarted) {
		t.Fatalf("Connect called %d times, its Conn not started then (%v)", calls, notStarted)
	}
	if got := linetest.Within(t, early, "the notification the child wrote before the Conn"); got != "before the Conn" {
		t.Errorf("early: %q", got)
	}
	if res := linetest.Within(t, linetest.Call(t.Context(), ch.Conn(), "through cat"), "the echo"); res.Err != nil || res.Result.Echo != "through cat" {
		t.Fatalf("echo: %+v", res)
	}
	if err := ch.Close(); err != nil {
		t.Fatal(err)
	}
	if st := ch.ProcessState(); st == nil || st.ExitCode() != 0 {
		t.Errorf("the child ended with %v, want exit 0 at the end of its input", st)
	}
	gone(t, "the child", cmd.Process.Pid)
	groupGone(t, cmd.Process.Pid)
}

// When Connect fails, StartChild ends the child with Close's ladder (this
// one exits at the end of its input), closes the Conn Connect returned,
// if any, and returns a *ChildConnectError that wraps Connect's error and
// says how the child ended.
func TestChildConnectError(t *testing.T) {
	needsProcessGroups(t)
	errRefused := errors.New("the child refused")
	cases := []struct {
		name     string
		withConn bool // Connect returns a Conn beside its error
		noConn   bool // Connect returns neither
	}{
		{name: "error"},
		{name: "error and a Conn", withConn: true},
		{name: "neither", noConn: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rpctest.CheckNoLeak(t)
			var conn *rpc.Conn
			connect := func(_ context.Context, stdout io.Reader, stdin io.Writer) (*rpc.Conn, error) {
				if _, err := io.WriteString(stdin, "x\n"); err != nil {
					return nil, err
				}
				switch {
				case tc.noConn:
					return nil, nil
				case tc.withConn:
					conn = rpc.NewConn(stdout, stdin, nil)
					conn.Start()
					return conn, errRefused
				}
				return nil, errRefused
			}
			cmd := exec.Command("sh", "-c", `read -r line; echo "refused $line" >&2; cat >/dev/null; exit 5`)
			ch, err := transport.StartChild(cmd, &transport.ChildOptions{Connect: connect, EOFGrace: noWait, KillGrace: linetest.WaitBound})
			if ch != nil {
				t.Fatal("StartChild returned a Child with its error")
			}
			var ce *transport.ChildConnectError
			if !errors.As(err, &ce) {
				t.Fatalf("StartChild: %v, want a *ChildConnectError", err)
			}
			if tc.noConn {
				if !strings.Contains(err.Error(), "neither a Conn nor an error") {
					t.Errorf("error %q", err)
				}
			} else if !errors.Is(err, errRefused) || ce.Err != errRefused {
				t.Errorf("error %v, want Connect's", err)
			}
			if ce.CloseErr != nil {
				t.Errorf("the teardown failed: %v", ce.CloseErr)
			}
			if st := ce.ProcessState; st == nil || st.ExitCode() != 5 {
				t.Errorf("the child ended with %v, want exit 5 at the end of its input", st)
			}
			if got := strings.Join(ce.StderrTail, "|"); got != "refused x" {
				t.Errorf("stderr tail %q", got)
			}
			if want := "(the child ended: exit status 5)"; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			if conn != nil {
				linetest.Within(t, conn.Done(), "Connect's Conn to be closed")
			}
			gone(t, "the child", cmd.Process.Pid)
			groupGone(t, cmd.Process.Pid)
		})
	}
}

// When StartChildContext's ctx ends while Connect waits for the child,
// Connect's read is interrupted, the child gets SIGTERM without EOFGrace
// (Terminate's ladder: it is abandoned), and the error is ctx's.
func TestChildConnectContext(t *testing.T) {
	needsProcessGroups(t)
	rpctest.CheckNoLeak(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	reading := make(chan struct{})
	readErr := make(chan error, 1)
	connect := func(_ context.Context, stdout io.Reader, _ io.Writer) (*rpc.Conn, error) {
		close(reading)
		_, err := stdout.Read(make([]byte, 1)) // the child writes nothing
		readErr <- err
		return nil, err
	}
	stderr := &rpctest.Recorder{Stream: true}
	cmd := exec.Command("sh", "-c", `echo ready >&2; exec sleep 1000`)
	cmd.Stderr = stderr
	type started struct {
		ch  *transport.Child
		err error
	}
	done := make(chan started, 1)
	go func() {
		ch, err := transport.StartChildContext(ctx, cmd, &transport.ChildOptions{Connect: connect, EOFGrace: noWait, KillGrace: linetest.WaitBound})
		done <- started{ch, err}
	}()
	linetest.Within(t, reading, "Connect to read")
	waitStderr(t, stderr, "ready") // its signal dispositions are set
	cancel()
	r := linetest.Within(t, done, "StartChildContext to return once ctx ended")
	if r.ch != nil {
		t.Fatal("StartChildContext returned a Child with its error")
	}
	var ce *transport.ChildConnectError
	if !errors.As(r.err, &ce) || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("StartChildContext: %v, want a *ChildConnectError of context.Canceled", r.err)
	}
	if err := <-readErr; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Connect's read ended with %v, want a deadline's error", err)
	}
	wantSignaled(t, ce.ProcessState, syscall.SIGTERM)
	gone(t, "the child", cmd.Process.Pid)
	groupGone(t, cmd.Process.Pid)
}

// Terminate skips the wait of the ladder's first step: a child that
// ignores the end of its input gets SIGTERM at once. Close then returns
// the same result.
func TestChildTerminate(t *testing.T) {
	needsProcessGroups(t)
	rpctest.CheckNoLeak(t)
	ch, cmd, stderr := startSh(t, `echo ready >&2; exec sleep 1000`, &transport.ChildOptions{EOFGrace: noWait, KillGrace: linetest.WaitBound})
	waitStderr(t, stderr, "ready")
	endWithin(t, ch.Terminate, "Terminate")
	wantSignaled(t, ch.ProcessState(), syscall.SIGTERM)
	if err := ch.Close(); err != nil {
		t.Errorf("Close after Terminate: %v", err)
	}
	gone(t, "the child", cmd.Process.Pid)
	groupGone(t, cmd.Process.Pid)
}

// Once the Conn has ended (shut down before Close, say), Close reads and
// discards what the child writes on its way out: a child that writes more
// than the pipe holds after the end of its input exits on its own, rather
// than block until SIGTERM.
func TestChildCloseDrainsStdout(t *testing.T) {
	needsProcessGroups(t)
	rpctest.CheckNoLeak(t)
	ch, cmd, _ := startSh(t, `cat >/dev/null; head -c 1048576 /dev/zero; exit 3`, &transport.ChildOptions{EOFGrace: noWait, KillGrace: linetest.WaitBound})
	ch.Conn().Close()
	linetest.Within(t, ch.Conn().Done(), "the Conn to end")
	endWithin(t, ch.Close, "Close")
	if st := ch.ProcessState(); st == nil || st.ExitCode() != 3 {
		t.Errorf("the child ended with %v, want exit 3 once its last words were read", st)
	}
	gone(t, "the child", cmd.Process.Pid)
}
