package sdkproto

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

// Launch starts cmd as the runtime and returns a Client talking to it over
// the child's stdin and stdout. cmd must be unstarted with Stdin and Stdout
// unset; its Path, Args, Env and Dir are used as given. The child's stderr
// is read continuously (so the child never blocks on it): its last lines
// are kept for error messages (ClientOptions.StderrLines) and, when
// cmd.Stderr was set, copied there too.
//
// Launch does not send initialize: call Initialize next. A failure to
// start is a *TransportClosedError whose cause starts with "spawn error:".
// Close runs the teardown ladder and reaps the child. On unix the child
// is started as the leader of a new process group (SysProcAttr.Setpgid,
// unless cmd already asks for Setsid or for another group), so that Close
// also ends the processes it started; on other platforms only the child
// itself is signalled, and its own children may outlive the Client.
//
// The process handling is transport.StartChild's; the Client adds the shutdown
// request before its teardown ladder, and the runtime's terms in errors.
func Launch(cmd *exec.Cmd, opts *ClientOptions) (*Client, error) {
	if cmd.Process != nil || cmd.Stdin != nil || cmd.Stdout != nil {
		return nil, errors.New("sdkproto: Launch needs an unstarted exec.Cmd without Stdin and Stdout")
	}
	c := newClient(opts)
	child, err := transport.StartChild(cmd, &transport.ChildOptions{
		Options:     &rpc.Options{Handler: c.registry(nil), Logger: c.opts.Logger, OnDrop: c.opts.OnDrop},
		EOFGrace:    c.opts.EOFGrace,
		KillGrace:   c.opts.KillGrace,
		StderrLines: c.opts.StderrLines,
	})
	if err != nil {
		return nil, &TransportClosedError{Cause: fmt.Errorf("spawn error: %w", err)}
	}
	c.child = child
	c.conn = child.Conn()
	return c, nil
}

// waitExit waits up to d for the child to be reaped; d <= 0 only looks.
func waitExit(child *transport.Child, d time.Duration) bool {
	select {
	case <-child.Exited():
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-child.Exited():
		return true
	case <-t.C:
		return false
	}
}

// exitStatus returns the exit status once the child is reaped.
func exitStatus(child *transport.Child) (exited bool, code int, signal string) {
	st := child.ProcessState()
	if st == nil {
		return false, 0, ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		signal = ws.Signal().String()
	}
	return true, st.ExitCode(), signal
}

// runtimeCloseErr says in the runtime's terms (docs/wire.md §6.4) that the
// child could not be reaped, when transport.Child.Close says so.
func runtimeCloseErr(err error) error {
	var stuck *transport.ChildNotReapedError
	if !errors.As(err, &stuck) {
		return err
	}
	outcome := "accepted"
	if stuck.KillErr != nil {
		outcome = "refused"
	}
	errs := []error{fmt.Errorf("runtime process did not exit within %dms after SIGKILL was %s", stuck.Grace.Milliseconds(), outcome)}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if e != error(stuck) {
				errs = append(errs, e)
			}
		}
	}
	return errors.Join(errs...)
}

// ProcessState returns the exit state of the runtime child once it has been
// reaped, and nil before that or when the Client was not made by Launch.
func (c *Client) ProcessState() *os.ProcessState {
	if c.child == nil {
		return nil
	}
	return c.child.ProcessState()
}
