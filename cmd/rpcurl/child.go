package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

// childTarget is the server of a '-- CMD' target: a child process that
// transport.StartChildContext starts and ends (its own process group, its
// stderr read all along, the teardown ladder), over whose pipes rpcurl
// makes the Conn itself, with ChildOptions.Connect, once the framing probe
// has told the framing (client.open). What is rpcurl's own: the ladder's
// waits, and the messages that say how the child ended.
type childTarget struct {
	pid    int
	ch     *transport.Child             // nil when Connect failed
	failed *transport.ChildConnectError // how the child ended then
}

// The teardown ladder's waits: transport's defaults, but for a shorter
// wait at the end of the input, since rpcurl's work is done by then; and
// the stderr lines kept for the message of a child that failed.
const (
	childEOFGrace  = 2 * time.Second // after closing its stdin, before SIGTERM
	childKillGrace = 3 * time.Second // after SIGTERM, after SIGKILL; for the group left
	childTailLines = 20
)

// startChild starts the target's command, its stderr copied to rpcurl's
// with -v, and makes the Conn over its pipes (see open). The child is
// ended already when the Conn cannot be made (the error is then a
// *waitError, and c.child says how the child ended).
func (c *client) startChild(ctx context.Context) error {
	argv := c.o.target.argv
	cmd := exec.Command(argv[0], argv[1:]...)
	if c.o.verbose {
		cmd.Stderr = c.e.stderr
	}
	t := &childTarget{}
	ch, err := transport.StartChildContext(ctx, cmd, &transport.ChildOptions{
		EOFGrace:    childEOFGrace,
		KillGrace:   childKillGrace,
		StderrLines: childTailLines,
		Connect: func(ctx context.Context, stdout io.Reader, stdin io.Writer) (*rpc.Conn, error) {
			t.pid = cmd.Process.Pid
			c.verbosef("started %s (pid %d)", c.o.target, t.pid)
			return c.open(ctx, stdout, stdin)
		},
	})
	var failed *transport.ChildConnectError
	switch {
	case errors.As(err, &failed):
		t.failed, c.child = failed, t
		var we *waitError
		if errors.As(failed.Err, &we) {
			return we
		}
		// ctx's error, in place of open's.
		awaited := "the start"
		if c.probing {
			awaited = "the answer to " + c.probeMethod
		}
		return &waitError{awaited: awaited, err: failed.Err}
	case err != nil && ctx.Err() != nil:
		return &waitError{awaited: "the start", err: ctx.Err()}
	case errors.Is(err, exec.ErrNotFound):
		return &startError{fmt.Errorf("cannot start the server: %q not found (is it installed and on $PATH?)", argv[0])}
	case err != nil:
		return &startError{fmt.Errorf("cannot start the server %q: %w", argv[0], err)}
	}
	t.ch, c.child, c.conn = ch, t, ch.Conn()
	return nil
}

// close ends the child, once the Conn has ended: graceful, with the
// ladder that begins with the end of its input, else (Ctrl-C, --timeout)
// with SIGTERM at once. A child whose Conn could not be made is ended
// already. The error is the teardown's, said in rpcurl's terms.
func (t *childTarget) close(graceful bool) error {
	var err error
	switch {
	case t.ch == nil:
		err = t.failed.CloseErr
	case graceful:
		err = t.ch.Close()
	default:
		err = t.ch.Terminate()
	}
	var nr *transport.ChildNotReapedError
	if errors.As(err, &nr) {
		msg := fmt.Sprintf("the server's process %d did not exit within %s of SIGKILL", t.pid, nr.Grace)
		if nr.KillErr != nil {
			msg += fmt.Sprintf(" (%v)", nr.KillErr)
		}
		return errors.New(msg)
	}
	return err
}

// hangUp says how the child ended the exchange before awaited came, once
// it is closed: its exit status and, with tail, the end of its stderr.
func (t *childTarget) hangUp(awaited string, tail bool) string {
	var st *os.ProcessState
	var lines []string
	if t.ch != nil {
		st, lines = t.ch.ProcessState(), t.ch.StderrTail()
	} else {
		st, lines = t.failed.ProcessState, t.failed.StderrTail
	}
	what := "closed its output"
	if st != nil {
		what = "exited (" + exitStatus(st) + ")"
	}
	msg := "the server " + what + " before " + awaited
	if tail && len(lines) > 0 {
		msg += "; its stderr ended with:\n  " + strings.Join(lines, "\n  ")
	}
	return msg
}

// exitStatus describes how a process ended.
func exitStatus(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal: " + ws.Signal().String()
	}
	return "exit code " + strconv.Itoa(st.ExitCode())
}
