package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/linerpc/linerpc/internal/bounded"
	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/rpc"
)

// Defaults of ChildOptions, used when a field is zero.
const (
	// DefaultChildEOFGrace is how long Child.Close waits for the child to
	// exit after closing its stdin, before SIGTERM.
	DefaultChildEOFGrace = 5 * time.Second
	// DefaultChildKillGrace is how long Child.Close waits after SIGTERM,
	// and again after SIGKILL.
	DefaultChildKillGrace = 3 * time.Second
	// DefaultChildStderrLines is how many of the child's last stderr
	// lines a Child keeps.
	DefaultChildStderrLines = 100
)

// ChildOptions configure a Child. A nil *ChildOptions means all defaults;
// a zero field means that field's default.
type ChildOptions struct {
	// Options configure the Conn over the child's stdio, when Connect is
	// nil; Connect makes a Conn of its own.
	Options *rpc.Options
	// EOFGrace is how long Close waits for the child to exit once its
	// stdin is closed, before it sends SIGTERM.
	EOFGrace time.Duration
	// KillGrace is how long Close waits for the child after SIGTERM, and
	// again after SIGKILL; and for what is left of its process group.
	KillGrace time.Duration
	// StderrLines is how many of the child's last stderr lines are kept
	// for StderrTail.
	StderrLines int

	// Connect, when set, makes the Child's Conn in place of
	// rpc.NewConn(stdout, stdin, Options), for a protocol that must speak
	// on the raw streams before its Conn can be made: a client that tells
	// the child's framing from the first bytes it answers to a request
	// written by hand (cmd/rpcurl's framing probe), a greeting that is not
	// JSON-RPC.
	//
	// StartChild calls it once, on the caller's goroutine, as soon as the
	// child has started, with the read end of the child's stdout, the
	// write end of its stdin, and StartChildContext's ctx (StartChild's
	// never ends). Connect may write and read the streams as it needs to,
	// then returns a Conn that reads stdout and writes stdin (with what it
	// read already in front of stdout, if the Conn is to read it), started
	// or not: StartChild starts it (Start is idempotent). The streams
	// belong to the Child, which closes them: Connect must not, nor use
	// them but through the Conn once it has returned.
	//
	// stdout has SetReadDeadline and stdin SetWriteDeadline (they are the
	// pipes' *os.File): a reader or a writer that Connect puts in front of
	// them must keep the method, which rpc.NewConn looks for, so that
	// Conn.Close interrupts a read or a write in progress. (Child.Close
	// interrupts it anyway, by closing the pipe; but a Conn closed alone,
	// by its Shutdown say, would wait for it.) When ctx ends while Connect
	// runs, both deadlines are set in the past, which interrupts Connect's
	// reads and writes.
	//
	// When Connect fails, or ctx ends before it has returned, StartChild
	// ends the child (with Close's ladder; with Terminate's when ctx
	// ended, since the child is then abandoned), closes the Conn if
	// Connect returned one, and returns a *ChildConnectError that holds
	// the error and how the child ended.
	Connect func(ctx context.Context, stdout io.Reader, stdin io.Writer) (*rpc.Conn, error)
}

// Child is a child process spoken to over its stdin and stdout, with a
// Conn, and whose end is in the hands of its Close (or Terminate): see
// StartChild.
type Child struct {
	cmd   *exec.Cmd
	conn  *rpc.Conn
	group bool // the child leads a process group of its own (unix)

	eofGrace, killGrace time.Duration

	stdin  *os.File // the write end of the child's stdin
	stdout *os.File // the read end of the child's stdout
	stderr *os.File // the read end of the child's stderr
	tail   *lines.Tail

	exited     chan struct{} // closed once the child is reaped, after state is set
	state      *os.ProcessState
	stderrDone chan struct{}  // closed once the stderr reader has ended
	wg         sync.WaitGroup // the stderr reader and the waiter

	closeOnce sync.Once
	closeErr  error
}

// StartChild starts cmd and returns a Child whose Conn, started, speaks
// JSON-RPC over the child's stdin and stdout: rpc.NewConn's over the
// pipes, or the one ChildOptions.Connect makes. cmd must be unstarted,
// with Stdin and Stdout unset; its Path, Args, Env, Dir and SysProcAttr
// are used as given. The error of starting it is cmd.Start's, as it is;
// that of Connect a *ChildConnectError.
//
// The child's stderr is read continuously, so that the child never blocks
// on it: its last lines are kept (StderrTail, for error messages) and,
// when cmd.Stderr was set, copied there too. The pipes are made with
// os.Pipe, so that Close can interrupt their reads and writes.
//
// On unix the child is started as the leader of a new process group
// (SysProcAttr.Setpgid), unless cmd already asks for a session of its own
// (Setsid, which makes it a group leader too) or to join another group,
// so that Close also ends the processes the child started; on other
// platforms only the child itself is signalled, and its own children may
// outlive it.
//
// Close must be called, also once the child has exited on its own: it
// reaps the child and ends the goroutines of the Child (the Conn's, one
// that waits for the child, one that reads its stderr).
func StartChild(cmd *exec.Cmd, opts *ChildOptions) (*Child, error) {
	return StartChildContext(context.Background(), cmd, opts)
}

// StartChildContext is StartChild, with ctx bounding the start, as
// net.Dialer.DialContext's bounds a dial: when ctx has ended already, the
// child is not started and the error is ctx's; when it ends while
// ChildOptions.Connect runs, StartChildContext interrupts Connect's reads
// and writes, ends the child as Terminate does, and returns a
// *ChildConnectError whose Err is ctx.Err(). Once StartChildContext has
// returned, the end of ctx does nothing to the child. Without Connect,
// starting does not wait, so ctx is only looked at before.
func StartChildContext(ctx context.Context, cmd *exec.Cmd, opts *ChildOptions) (*Child, error) {
	if cmd.Process != nil || cmd.Stdin != nil || cmd.Stdout != nil {
		return nil, errors.New("transport: StartChild needs an unstarted exec.Cmd without Stdin and Stdout")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var o ChildOptions
	if opts != nil {
		o = *opts
	}
	var pipes [6]*os.File // stdin r/w, stdout r/w, stderr r/w
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeFiles(pipes[:]...)
			return nil, err
		}
		pipes[i], pipes[i+1] = r, w
	}
	stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW := pipes[0], pipes[1], pipes[2], pipes[3], pipes[4], pipes[5]
	copyTo := cmd.Stderr
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	group := ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, copyTo
		closeFiles(pipes[:]...)
		return nil, err
	}
	closeFiles(stdinR, stdoutW, stderrW) // the child holds its own copies

	ch := &Child{
		cmd:        cmd,
		group:      group,
		eofGrace:   orDefault(o.EOFGrace, DefaultChildEOFGrace),
		killGrace:  orDefault(o.KillGrace, DefaultChildKillGrace),
		stdin:      stdinW,
		stdout:     stdoutR,
		stderr:     stderrR,
		tail:       lines.NewTail(orDefault(o.StderrLines, DefaultChildStderrLines)),
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	ch.wg.Add(2)
	go ch.readStderr(copyTo)
	go ch.wait()
	if o.Connect == nil {
		ch.conn = rpc.NewConn(stdoutR, stdinW, o.Options)
		ch.conn.Start()
		return ch, nil
	}
	conn, err := ch.connect(ctx, o.Connect)
	ch.conn = conn
	if err != nil {
		ce := &ChildConnectError{Err: err}
		if ctx.Err() != nil { // the child is abandoned, not done with

			ce.CloseErr = ch.Terminate()
		} else {
			ce.CloseErr = ch.Close()
		}
		ce.ProcessState, ce.StderrTail = ch.ProcessState(), ch.StderrTail()
		return nil, ce
	}
	conn.Start()
	return ch, nil
}

// connect runs Connect, interrupting its reads and writes when ctx ends.
// It returns the Conn Connect returned, if any, also with an error.
func (ch *Child) connect(ctx context.Context, connect func(context.Context, io.Reader, io.Writer) (*rpc.Conn, error)) (*rpc.Conn, error) {
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		past := time.Unix(1, 0)
		ch.stdout.SetReadDeadline(past)
		ch.stdin.SetWriteDeadline(past)
		close(fired)
	})
	conn, err := connect(ctx, ch.stdout, ch.stdin)
	if !stop() {
		// ctx ended, and the deadlines are in the past: the Child is not
		// to be used, even if Connect got through.
		<-fired
		return conn, ctx.Err()
	}
	if err == nil && conn == nil {
		err = errors.New("transport: ChildOptions.Connect returned neither a Conn nor an error")
	}
	return conn, err
}

// ChildConnectError is the error of StartChild when ChildOptions.Connect
// failed, or of StartChildContext when its ctx ended before Connect
// returned. The child has been ended and reaped by then (but when
// CloseErr says it could not be), and the error says how it ended, which
// is often why Connect failed: it exited, or closed its stdout.
type ChildConnectError struct {
	// Err is Connect's error, or ctx.Err() when ctx ended first.
	Err error
	// ProcessState says how the child ended; nil when it could not be
	// reaped.
	ProcessState *os.ProcessState
	// StderrTail is the last lines of the child's stderr, as
	// Child.StderrTail returns them once the child has exited.
	StderrTail []string
	// CloseErr is the teardown's error, Close's (or Terminate's): nil
	// when the child was reaped and the Child's goroutines ended.
	CloseErr error
}

// Error returns Err's message, with how the child ended and, when the
// teardown failed, why.
func (e *ChildConnectError) Error() string {
	msg := "transport: connecting to the child: " + e.Err.Error()
	if e.ProcessState != nil {
		msg += " (the child ended: " + e.ProcessState.String() + ")"
	}
	if e.CloseErr != nil {
		msg += "; " + e.CloseErr.Error()
	}
	return msg
}

// Unwrap returns Err, and CloseErr when it is set, so that errors.Is and
// errors.As see through to them.
func (e *ChildConnectError) Unwrap() []error {
	if e.CloseErr != nil {
		return []error{e.Err, e.CloseErr}
	}
	return []error{e.Err}
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// Conn returns the connection over the child's stdin and stdout. It
// belongs to the Child: Close closes it.
func (ch *Child) Conn() *rpc.Conn { return ch.conn }

// Exited returns a channel that is closed once the child has exited and
// been reaped; ProcessState then says how it ended.
func (ch *Child) Exited() <-chan struct{} { return ch.exited }

// ProcessState returns how the child ended once it has been reaped (see
// Exited), and nil before.
func (ch *Child) ProcessState() *os.ProcessState {
	select {
	case <-ch.exited:
		return ch.state
	default:
		return nil
	}
}

// CloseInput closes the child's stdin, as the first step of Close does,
// without the rest: the child sees its input end, and the Conn's calls
// and notifications fail from then on, while what the child writes is
// still read.
func (ch *Child) CloseInput() error { return ch.stdin.Close() }

// stderrDrain is how long StderrTail and Close let the stderr reader take
// in what is still in the pipe once the child has exited, so that the
// last lines are kept: a grandchild may hold the pipe open for ever.
const stderrDrain = 500 * time.Millisecond

// StderrTail returns the last lines the child wrote to its stderr (at
// most ChildOptions.StderrLines), the unterminated last one included.
// Once the child has exited, it first lets the reader take in what is
// still in the pipe, for at most 500ms, so that the lines written just
// before the exit, usually the ones that say why, are not missing.
func (ch *Child) StderrTail() []string {
	if ch.ProcessState() != nil {
		t := time.NewTimer(stderrDrain)
		defer t.Stop()
		select {
		case <-ch.stderrDone:
		case <-t.C:
		}
	}
	return ch.tail.Lines()
}

// ChildNotReapedError is Child.Close's error when the child did not exit
// even after SIGKILL: it could not be reaped.
type ChildNotReapedError struct {
	// Grace is how long Close waited after SIGKILL.
	Grace time.Duration
	// KillErr is the error of sending SIGKILL, nil when it was accepted.
	KillErr error
}

// Error says how long Close waited after SIGKILL, and whether SIGKILL
// was accepted or refused.
func (e *ChildNotReapedError) Error() string {
	outcome := "accepted"
	if e.KillErr != nil {
		outcome = "refused"
	}
	return fmt.Sprintf("transport: child process did not exit within %dms after SIGKILL was %s", e.Grace.Milliseconds(), outcome)
}

// Close ends the child and releases everything the Child holds; it is
// idempotent and returns the same result every time. It sends nothing on
// the Conn first: a protocol whose peer expects a shutdown request sends
// it before. The teardown ladder, which stops at the first step after
// which the child is reaped, each step bounded:
//
//  1. the child's stdin is closed (which also ends a Write stuck on it),
//     and Close waits EOFGrace; the Conn goes on reading the child's
//     stdout meanwhile, and once the Conn has ended (the caller may have
//     shut it down first) what the child writes there is read and
//     discarded, so that its last words never block it;
//  2. SIGTERM, and Close waits KillGrace;
//  3. SIGKILL, and Close waits KillGrace (the error is then a
//     *ChildNotReapedError);
//  4. on unix, once the child is reaped, what is left of its process
//     group (grandchildren) gets SIGTERM and, after at most KillGrace,
//     SIGKILL;
//  5. the Conn is closed (its pending calls fail) and the stdout pipe
//     too; Close waits up to KillGrace for the Conn's goroutines (and the
//     reader of step 1), then up to 500ms for the stderr reader (a
//     grandchild may hold the pipe), and closes the stderr pipe.
//
// Close therefore returns within EOFGrace + 4×KillGrace + 500ms.
func (ch *Child) Close() error {
	ch.closeOnce.Do(func() { ch.closeErr = ch.close(ch.eofGrace) })
	return ch.closeErr
}

// Terminate ends the child as Close does, but for step 1's wait: SIGTERM
// follows the closing of its stdin at once. It is for a child that is
// abandoned rather than done with (an interrupt, a timeout), which is not
// to be given EOFGrace to finish: it returns within 4×KillGrace + 500ms.
// Close and Terminate share one teardown: the first called runs it, and
// both return its result.
func (ch *Child) Terminate() error {
	ch.closeOnce.Do(func() { ch.closeErr = ch.close(0) })
	return ch.closeErr
}

func (ch *Child) close(eofGrace time.Duration) error {
	drained := make(chan struct{})
	go ch.drainStdout(drained)
	err := ch.stop(eofGrace)
	if ch.conn != nil {
		ch.conn.Close()
	}
	ch.stdout.Close() // interrupts a read in progress, the Conn's or drainStdout's
	ended := func() {
		if ch.conn != nil {
			ch.conn.Wait()
		}
		<-drained
	}
	if !bounded.Wait(ended, ch.killGrace) {
		err = errors.Join(err, fmt.Errorf("transport: the connection's goroutines had not stopped after %v (a read or a write of the child's pipes could not be interrupted)", ch.killGrace))
	}
	if ch.ProcessState() != nil {
		ch.release()
	} else {
		ch.stderr.Close() // the child is unreapable; at least stop reading
	}
	return err
}

// drainStdout reads and discards the child's stdout once the Conn has
// ended and its goroutines have exited (at once when there is none:
// Connect failed), until close closes the pipe. Otherwise a child whose
// Conn was shut down before Close, and which writes more than the pipe
// holds on its way out, would block until SIGTERM.
func (ch *Child) drainStdout(done chan<- struct{}) {
	defer close(done)
	if ch.conn != nil {
		ch.conn.Wait()
	}
	// The Conn's Close, or StartChildContext's ctx, may have left a
	// deadline in the past.
	ch.stdout.SetReadDeadline(time.Time{})
	_, _ = io.Copy(io.Discard, ch.stdout)
}

// stop runs the ladder's first four steps (see Close); eofGrace is step
// 1's wait, none for Terminate.
func (ch *Child) stop(eofGrace time.Duration) error {
	ch.stdin.Close() // also when the child is gone: the pipe must not leak
	if ch.waitExit(eofGrace) {
		ch.sweep()
		return nil
	}
	if err := ch.signal(sigTerm); err == nil && ch.waitExit(ch.killGrace) {
		ch.sweep()
		return nil
	}
	killErr := ch.signal(os.Kill)
	if errors.Is(killErr, os.ErrProcessDone) {
		killErr = nil // it was reaped in between
	}
	if ch.waitExit(ch.killGrace) {
		ch.sweep()
		return nil
	}
	return &ChildNotReapedError{Grace: ch.killGrace, KillErr: killErr}
}

// waitExit waits up to d for the child to be reaped; d <= 0 only looks.
func (ch *Child) waitExit(d time.Duration) bool {
	select {
	case <-ch.exited:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch.exited:
		return true
	case <-t.C:
		return false
	}
}

// signal sends sig (sigTerm or os.Kill) to the child's process group, or
// to the child alone when it has none (or the group is gone).
func (ch *Child) signal(sig os.Signal) error {
	if ch.group && signalGroup(ch.cmd.Process.Pid, sig) == nil {
		return nil
	}
	if sig == os.Kill {
		return ch.cmd.Process.Kill()
	}
	return ch.cmd.Process.Signal(sig)
}

// sweepPoll is how often sweep looks whether the group is gone: the
// processes left in it are not our children, so there is no exit to wait
// for.
const sweepPoll = 5 * time.Millisecond

// sweep ends the processes left in the child's group after the child was
// reaped (grandchildren that kept running): SIGTERM, up to KillGrace for
// them to go, then SIGKILL, which is not waited for (they are reaped by
// whoever inherited them). It takes at most KillGrace.
func (ch *Child) sweep() {
	pid := ch.cmd.Process.Pid
	if !ch.group || !groupAlive(pid) {
		return
	}
	signalGroup(pid, sigTerm)
	deadline := time.NewTimer(ch.killGrace)
	defer deadline.Stop()
	tick := time.NewTicker(sweepPoll)
	defer tick.Stop()
	for groupAlive(pid) {
		select {
		case <-tick.C:
		case <-deadline.C:
			signalGroup(pid, os.Kill)
			return
		}
	}
}

// wait reaps the child. There is nothing for exec to copy (the pipes are
// read by the Child), so Wait returns as soon as the child has exited.
func (ch *Child) wait() {
	defer ch.wg.Done()
	_ = ch.cmd.Wait()
	ch.state = ch.cmd.ProcessState
	close(ch.exited)
}

// readStderr keeps the tail of the child's stderr and copies it to
// copyTo. It ends at EOF, or when release closes the pipe under it.
func (ch *Child) readStderr(copyTo io.Writer) {
	defer ch.wg.Done()
	defer close(ch.stderrDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := ch.stderr.Read(buf)
		if n > 0 {
			ch.tail.Write(buf[:n])
			if copyTo != nil {
				_, _ = copyTo.Write(buf[:n])
			}
		}
		if err != nil {
			ch.tail.Flush()
			return
		}
	}
}

// release waits for the stderr reader and the waiter, once the child is
// reaped. A grandchild may hold the stderr pipe open for ever, so after
// stderrDrain the read end is closed, which interrupts the reader.
func (ch *Child) release() {
	if !bounded.Wait(ch.wg.Wait, stderrDrain) {
		ch.stderr.Close()
		ch.wg.Wait()
	}
	ch.stderr.Close()
}
