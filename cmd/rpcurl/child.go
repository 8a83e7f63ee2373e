package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/linerpc/linerpc/internal/lines"
)

// child is the server started for a '-- CMD' target: a child process whose
// stdin and stdout rpcurl reads and writes as they are (the framing probe
// is written before any rpc.Conn exists), and whose end its close sees to.
//
// It is transport.StartChild's process handling, which rpcurl cannot use
// as it is: StartChild starts its Conn over the pipes at once, with a
// framing given in advance, and hands out no raw stream to probe on. The
// rules are StartChild's: the child leads a process group of its own (on
// unix), its stderr is read all along (its last lines kept for errors),
// and close ends it with a bounded ladder, then what is left of its group.
type child struct {
	cmd   *exec.Cmd
	group bool // the child leads a process group of its own (unix)

	stdin  *os.File // the write end of the child's stdin
	stdout *os.File // the read end of the child's stdout
	stderr *os.File // the read end of the child's stderr
	tail   *lines.Tail

	exited chan struct{} // closed once the child is reaped, after state is set
	state  *os.ProcessState
	wg     sync.WaitGroup // the waiter, the stderr reader, the stdout drain

	stderrDone chan struct{}
	closeOnce  sync.Once
	closeErr   error
}

// The teardown ladder's waits: transport's defaults, but for a shorter
// wait at the end of the input, since rpcurl's work is done by then.
const (
	childEOFGrace  = 2 * time.Second // after closing its stdin, before SIGTERM
	childKillGrace = 3 * time.Second // after SIGTERM, after SIGKILL; for the group left
	stderrDrain    = 500 * time.Millisecond
	childTailLines = 20
)

// startChild starts argv with its stdin and stdout on pipes, and its
// stderr read continuously: its last lines are kept, and copied to
// copyStderr when that is set.
func startChild(argv []string, copyStderr io.Writer) (*child, error) {
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
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	group := ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		closeFiles(pipes[:]...)
		return nil, err
	}
	closeFiles(stdinR, stdoutW, stderrW) // the child holds its own copies
	c := &child{
		cmd: cmd, group: group,
		stdin: stdinW, stdout: stdoutR, stderr: stderrR,
		tail:       lines.NewTail(childTailLines),
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
	}
	c.wg.Add(2)
	go c.wait()
	go c.readStderr(copyStderr)
	return c, nil
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// stream returns the child's stdout and stdin as one stream.
func (c *child) stream() rawStream { return pipeStream{c.stdout, c.stdin} }

// pipeStream reads one pipe and writes another.
type pipeStream struct{ r, w *os.File }

func (p pipeStream) Read(b []byte) (int, error)         { return p.r.Read(b) }
func (p pipeStream) Write(b []byte) (int, error)        { return p.w.Write(b) }
func (p pipeStream) SetReadDeadline(t time.Time) error  { return p.r.SetReadDeadline(t) }
func (p pipeStream) SetWriteDeadline(t time.Time) error { return p.w.SetWriteDeadline(t) }

func (c *child) wait() {
	defer c.wg.Done()
	_ = c.cmd.Wait()
	c.state = c.cmd.ProcessState
	close(c.exited)
}

func (c *child) readStderr(copyTo io.Writer) {
	defer c.wg.Done()
	defer close(c.stderrDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := c.stderr.Read(buf)
		if n > 0 {
			c.tail.Write(buf[:n])
			if copyTo != nil {
				copyTo.Write(buf[:n])
			}
		}
		if err != nil {
			c.tail.Flush()
			return
		}
	}
}

// processState returns how the child ended once it is reaped, else nil.
func (c *child) processState() *os.ProcessState {
	select {
	case <-c.exited:
		return c.state
	default:
		return nil
	}
}

// stderrTail returns the last lines of the child's stderr, once its
// reader has taken in what the pipe held (close waits for that).
func (c *child) stderrTail() []string { return c.tail.Lines() }

// close ends the child, once the rpc.Conn over its pipes has ended: its
// stdin is closed and its stdout read on (and discarded) while it exits;
// after eofGrace (none when not graceful: Ctrl-C, --timeout) it gets
// SIGTERM, after childKillGrace more SIGKILL; once it is reaped, what is
// left of its process group gets SIGTERM and, after childKillGrace,
// SIGKILL. Every goroutine of the child has ended when close returns, but
// for a child that SIGKILL did not end (the error says so). Idempotent.
func (c *child) close(graceful bool) error {
	c.closeOnce.Do(func() { c.closeErr = c.stop(graceful) })
	return c.closeErr
}

func (c *child) stop(graceful bool) error {
	c.wg.Add(1)
	go func() { // the child's last words must not block it
		defer c.wg.Done()
		io.Copy(io.Discard, c.stdout)
	}()
	c.stdin.Close()
	var err error
	eofGrace := childEOFGrace
	if !graceful {
		eofGrace = 0
	}
	if !c.waitExit(eofGrace) {
		if c.signal(sigTerm) != nil || !c.waitExit(childKillGrace) {
			killErr := c.signal(os.Kill)
			if !c.waitExit(childKillGrace) {
				err = fmt.Errorf("the server's process %d did not exit within %s of SIGKILL (%v)", c.cmd.Process.Pid, childKillGrace, killErr)
			}
		}
	}
	if err == nil {
		c.sweep()
	}
	c.stdout.Close() // ends the drain
	if c.processState() == nil {
		c.stderr.Close()
		return err // the waiter stays blocked for as long as the process lives
	}
	drain := time.NewTimer(stderrDrain)
	select {
	case <-c.stderrDone:
	case <-drain.C:
		c.stderr.Close() // a grandchild holds the pipe open
	}
	drain.Stop()
	c.wg.Wait()
	c.stderr.Close()
	return err
}

// waitExit waits up to d for the child to be reaped.
func (c *child) waitExit(d time.Duration) bool {
	select {
	case <-c.exited:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-t.C:
		return false
	}
}

// signal sends sig to the child's process group, or to the child alone
// when it has none.
func (c *child) signal(sig os.Signal) error {
	if c.group && signalGroup(c.cmd.Process.Pid, sig) == nil {
		return nil
	}
	err := c.cmd.Process.Signal(sig)
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// sweepPoll is how often sweep looks whether the group is gone: the
// processes left in it are not our children, so no exit can be waited for.
const sweepPoll = 5 * time.Millisecond

// sweep ends what is left of the child's process group once the child is
// reaped: SIGTERM, up to childKillGrace for it to go, then SIGKILL.
func (c *child) sweep() {
	pid := c.cmd.Process.Pid
	if !c.group || !groupAlive(pid) {
		return
	}
	signalGroup(pid, sigTerm)
	deadline := time.NewTimer(childKillGrace)
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
