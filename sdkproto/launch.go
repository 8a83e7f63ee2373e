package sdkproto

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/rpc"
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
func Launch(cmd *exec.Cmd, opts *ClientOptions) (*Client, error) {
	if cmd.Process != nil || cmd.Stdin != nil || cmd.Stdout != nil {
		return nil, errors.New("sdkproto: Launch needs an unstarted exec.Cmd without Stdin and Stdout")
	}
	c := newClient(opts)
	// os.Pipe (rather than cmd.StdoutPipe) keeps Wait from closing stdout
	// under the reader, and its reads can be interrupted by Close.
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
		return nil, &TransportClosedError{Cause: fmt.Errorf("spawn error: %w", err)}
	}
	closeFiles(stdinR, stdoutW, stderrW) // the child holds its own copies

	p := &process{cmd: cmd, group: group, tail: newTail(c.opts.StderrLines), exited: make(chan struct{}), stderrDone: make(chan struct{}), stderr: stderrR}
	p.wg.Add(2)
	go p.readStderr(copyTo)
	go p.wait()
	c.proc = p
	c.stdin = stdinW
	c.streams = []io.Closer{stdoutR}
	c.conn = rpc.NewConn(stdoutR, stdinW, &rpc.Options{Handler: c.registry(nil), Logger: c.opts.Logger})
	c.conn.Start()
	return c, nil
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// process is the runtime child of a launched Client.
type process struct {
	cmd    *exec.Cmd
	group  bool // the child leads a process group of its own (unix)
	tail   *tail
	stderr *os.File // the read end of the child's stderr

	exited     chan struct{} // closed once the child is reaped
	stderrDone chan struct{} // closed once the stderr reader has ended
	state      *os.ProcessState
	wg         sync.WaitGroup // the stderr reader and the waiter
}

// wait reaps the child. There is nothing to copy (the Client reads the
// pipes itself), so Wait returns as soon as the child has exited.
func (p *process) wait() {
	defer p.wg.Done()
	_ = p.cmd.Wait()
	p.state = p.cmd.ProcessState
	close(p.exited)
}

// waitExit waits up to d for the child to be reaped; d <= 0 only looks.
func (p *process) waitExit(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// status returns the exit status once the child is reaped.
func (p *process) status() (exited bool, code int, signal string) {
	if !p.waitExit(0) {
		return false, 0, ""
	}
	code = p.state.ExitCode()
	if ws, ok := p.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		signal = ws.Signal().String()
	}
	return true, code, signal
}

// stop runs the teardown ladder of docs/wire.md §6.4 after the shutdown
// request: close stdin and wait eofGrace; SIGTERM and wait grace; SIGKILL
// and wait grace. Signals go to the child's process group when it has one,
// and once the child is reaped, what is left of its group is swept (see
// sweep). Every step is bounded; the error says the child could not be
// reaped.
func (p *process) stop(stdin io.Closer, eofGrace, grace time.Duration) error {
	stdin.Close() // also when the child is gone: the pipe must not leak
	if p.waitExit(0) || p.waitExit(eofGrace) {
		p.sweep(grace)
		return nil
	}
	// The real runtime does not exit on stdin EOF; SIGTERM disposes it.
	if err := p.signal(syscall.SIGTERM); err == nil && p.waitExit(grace) {
		p.sweep(grace)
		return nil
	}
	how := "accepted"
	if err := p.signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		how = "refused"
	}
	if p.waitExit(grace) {
		p.sweep(grace)
		return nil
	}
	return fmt.Errorf("runtime process did not exit within %dms after SIGKILL was %s", grace.Milliseconds(), how)
}

// signal sends sig to the child's process group, or to the child alone
// when it has none (or the group is gone).
func (p *process) signal(sig syscall.Signal) error {
	if p.group && signalGroup(p.cmd.Process.Pid, sig) == nil {
		return nil
	}
	if sig == syscall.SIGKILL {
		return p.cmd.Process.Kill()
	}
	return p.cmd.Process.Signal(sig)
}

// sweepPoll is how often sweep looks whether the group is gone: the
// processes left in it are not the Client's children, so there is no
// exit to wait for.
const sweepPoll = 5 * time.Millisecond

// sweep ends the processes left in the child's group after the child was
// reaped (grandchildren that kept running): SIGTERM, up to grace for them
// to go, then SIGKILL, which is not waited for (they are reaped by
// whoever inherited them). It takes at most grace.
func (p *process) sweep(grace time.Duration) {
	pid := p.cmd.Process.Pid
	if !p.group || !groupAlive(pid) {
		return
	}
	signalGroup(pid, syscall.SIGTERM)
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(sweepPoll)
	defer tick.Stop()
	for groupAlive(pid) {
		select {
		case <-tick.C:
		case <-deadline.C:
			signalGroup(pid, syscall.SIGKILL)
			return
		}
	}
}

// readStderr keeps the tail of the child's stderr and copies it to copyTo.
// It ends at EOF, or when release closes the pipe under it.
func (p *process) readStderr(copyTo io.Writer) {
	defer p.wg.Done()
	defer close(p.stderrDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := p.stderr.Read(buf)
		if n > 0 {
			p.tail.Write(buf[:n])
			if copyTo != nil {
				_, _ = copyTo.Write(buf[:n])
			}
		}
		if err != nil {
			p.tail.Flush()
			return
		}
	}
}

// stderrDrain is how long release lets the stderr reader reach EOF on its
// own after the child exited, so that the last lines are kept.
const stderrDrain = 500 * time.Millisecond

// stderrTail returns the last lines of the child's stderr. Once the child
// has exited, it first lets the reader take in what is still in the pipe
// (for at most stderrDrain), so that the lines written just before the
// exit, usually the ones that say why, are not missing.
func (p *process) stderrTail() []string {
	if p.waitExit(0) {
		select {
		case <-p.stderrDone:
		case <-time.After(stderrDrain):
		}
	}
	return p.tail.Lines()
}

// release waits for the goroutines of the process, once the child is
// reaped. A grandchild may hold the stderr pipe open forever, so after
// stderrDrain the read end is closed, which interrupts the reader.
func (p *process) release() {
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stderrDrain):
		p.stderr.Close()
		<-done
	}
	p.stderr.Close()
}

// tail keeps the last lines of the child's stderr; add appends a line of
// the Client's own (e.g. a failed shutdown).
type tail struct{ *lines.Tail }

func newTail(max int) *tail { return &tail{lines.NewTail(max)} }

func (t *tail) add(line string) { t.Add(line) }

// ProcessState returns the exit state of the runtime child once it has been
// reaped, and nil before that or when the Client was not made by Launch.
func (c *Client) ProcessState() *os.ProcessState {
	if c.proc == nil || !c.proc.waitExit(0) {
		return nil
	}
	return c.proc.state
}
