package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/transcript"
	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/rpc"
)

const tapUsage = `Usage: dshrpc tap [--log FILE] [--max-log-frame N] -- CMD ARGS...

Run CMD as a child, pass our stdin to its stdin and its stdout to our stdout
unchanged (byte for byte, as they arrive), and log every frame in both
directions as one JSON line:

  {"t":"<RFC 3339 time, ns>","dir":"c2s"|"s2c","frame":"<the exact line, LF removed>"}

c2s is what the client wrote (our stdin), s2c what the runtime wrote (its
stdout). A last line without LF is logged with "unterminated":true. Invalid
UTF-8 in a frame is logged as U+FFFD, as a wire end decodes it. A frame
longer than --max-log-frame is logged cut to that many bytes, with
"truncated":true and "size":<its length>; the bytes passed through are never
cut. The child's stderr goes to ours. Use it in place of the runtime command
of an existing client to watch it without changing it, then 'dshrpc check'
the log.

SIGINT, SIGTERM and SIGHUP are passed on to the child. When the client stops
reading our stdout (a broken pipe), tap keeps reading and logging what the
runtime writes, closes the runtime's stdin, and after 2s sends it SIGTERM,
then after 2s more SIGKILL. tap exits once the child is reaped, with the
child's exit status (128+N when signal N ended it), 3 when it cannot start.

Flags:
  --log FILE          write the log to FILE (created or truncated) instead
                      of stderr
  --max-log-frame N   the most bytes of one frame logged (default 67108864,
                      the longest frame a reader accepts); tap holds at most
                      that much of a frame per direction
`

func tapCmd(e *env, args []string) int {
	fs := newFlagSet("tap")
	logPath := fs.String("log", "", "")
	maxLog := fs.Int("max-log-frame", rpc.DefaultMaxFrameSize, "")
	// Flags stop at the first non-flag or at "--": everything after is the
	// child's command line, its own flags included.
	argv, code, err := parseArgs(e, "tap", tapUsage, fs, args, false)
	if err != nil {
		return code
	}
	if len(argv) == 0 {
		return usageError(e, "tap", errors.New("missing the runtime command (dshrpc tap [--log FILE] -- CMD ARGS...)"))
	}
	if *maxLog <= 0 {
		return usageError(e, "tap", fmt.Errorf("--max-log-frame must be positive, got %d", *maxLog))
	}
	var logw io.Writer = e.stderr
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			return usageError(e, "tap", fmt.Errorf("--log: %w", err))
		}
		defer f.Close()
		logw = f
	}
	return tap(e, argv, logw, *maxLog)
}

// tapLog writes log records, one per line, each whole: the two
// directions log from different goroutines. A frame is encoded a piece at
// a time into buffers that are reused, so that logging a long frame takes
// no memory beyond the bytes of it that are logged.
type tapLog struct {
	mu      sync.Mutex
	w       *bufio.Writer
	scratch []byte // a piece of the frame, after the bytes carried over
	enc     []byte // its encoding
}

func newTapLog(w io.Writer) *tapLog {
	return &tapLog{w: bufio.NewWriterSize(w, 64<<10)}
}

// logPiece is how many bytes of a frame are encoded at a time.
const logPiece = 32 << 10

// frame logs the line whose first bytes parts hold, in order; size is the
// length of the whole line, more than parts hold when it was cut. The
// record is {"t":…,"dir":…,"frame":…} with "unterminated":true, or
// "truncated":true and "size", when they apply; the frame is encoded as
// wire.Stringify encodes a string (<, > and & as they are).
func (l *tapLog) frame(dir transcript.Dir, parts [][]byte, size int64, unterminated bool) {
	held := 0
	for _, p := range parts {
		held += len(p)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.w
	w.WriteString(`{"t":"`)
	w.WriteString(time.Now().UTC().Format(time.RFC3339Nano))
	w.WriteString(`","dir":"`)
	w.WriteString(string(dir))
	w.WriteString(`","frame":"`)
	// The bytes of a UTF-8 sequence that a piece ends inside are carried
	// over to the next, so that each piece encodes as the whole would.
	var carry []byte
	for i, part := range parts {
		for len(part) > 0 {
			n := min(len(part), logPiece)
			l.scratch = append(append(l.scratch[:0], carry...), part[:n]...)
			part = part[n:]
			keep := 0
			if len(part) > 0 || i < len(parts)-1 {
				keep = wire.IncompleteRuneTail(l.scratch)
			}
			l.enc = wire.AppendStringContent(l.enc[:0], l.scratch[:len(l.scratch)-keep])
			w.Write(l.enc)
			carry = l.scratch[len(l.scratch)-keep:]
		}
	}
	w.Write(wire.AppendStringContent(l.enc[:0], carry))
	w.WriteByte('"')
	if unterminated {
		w.WriteString(`,"unterminated":true`)
	}
	if size > int64(held) {
		w.WriteString(`,"truncated":true,"size":`)
		w.WriteString(strconv.FormatInt(size, 10))
	}
	w.WriteString("}\n")
	w.Flush() // a write error, as of a log on a closed stderr, is not tap's
}

// lineSplitter logs every complete line written to it, holding at most
// max bytes of a line that arrives in pieces, in chunks allocated once and
// reused (lines.Splitter): however long the line, it holds max bytes.
type lineSplitter struct {
	split lines.Splitter
	log   *tapLog
	dir   transcript.Dir
	emit  func(pieces [][]byte, size int64) // logs a line; made once
}

func newLineSplitter(log *tapLog, dir transcript.Dir, max int) *lineSplitter {
	s := &lineSplitter{split: lines.Splitter{Max: max}, log: log, dir: dir}
	s.emit = func(pieces [][]byte, size int64) { log.frame(dir, pieces, size, false) }
	return s
}

// add logs the lines that b completes, and keeps the start of the line it
// does not.
func (s *lineSplitter) add(b []byte) { s.split.Split(b, s.emit) }

// end logs an unterminated last line, if there is one.
func (s *lineSplitter) end() {
	s.split.End(func(pieces [][]byte, size int64) { s.log.frame(s.dir, pieces, size, true) })
}

// pump copies r to w as the bytes arrive, logging each line. A failed
// write (the reader of w went away) stops the copying but not the reading,
// so that the writer of r never blocks on us and every frame is logged.
func pump(r io.Reader, w io.Writer, s *lineSplitter, afterWriteErr func(error)) {
	buf := make([]byte, 32<<10)
	writing := true
	for {
		n, err := r.Read(buf)
		if n > 0 {
			s.add(buf[:n])
			if writing {
				if _, werr := w.Write(buf[:n]); werr != nil {
					writing = false
					if afterWriteErr != nil {
						afterWriteErr(werr)
					}
				}
			}
		}
		if err != nil {
			s.end()
			return
		}
	}
}

// tapGrace is how long tap waits for the runtime after the client went
// away: after closing its stdin, and again after SIGTERM.
const tapGrace = 2 * time.Second

func tap(e *env, argv []string, logw io.Writer, maxLog int) int {
	log := newTapLog(logw)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = e.stderr
	childIn, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintf(e.stderr, "dshrpc tap: %v\n", err)
		return exitRuntime
	}
	// An os.Pipe rather than StdoutPipe: Wait must not close it under the
	// pump before the pump has read all the child wrote.
	outR, outW, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(e.stderr, "dshrpc tap: %v\n", err)
		return exitRuntime
	}
	cmd.Stdout = outW
	// Signals are caught before the child starts, so that none is missed.
	// SIGPIPE is caught too, so that a write to a stdout the client closed
	// fails with EPIPE instead of killing tap (the child, started after,
	// gets the default disposition back when it execs).
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		if errors.Is(err, exec.ErrNotFound) {
			fmt.Fprintf(e.stderr, "dshrpc tap: cannot start the runtime: %q not found (is it installed and on $PATH?)\n", argv[0])
		} else {
			fmt.Fprintf(e.stderr, "dshrpc tap: cannot start the runtime %q: %v\n", argv[0], err)
		}
		return exitRuntime
	}
	outW.Close() // the child holds its own copy

	// c2s: our stdin to the child. Not waited for: a Read on our stdin
	// cannot be interrupted, and when the child is gone there is nothing
	// left to deliver. Its end closes the child's stdin, which is how a
	// client's EOF reaches the runtime.
	go func() {
		pump(e.stdin, childIn, newLineSplitter(log, transcript.ClientToRuntime, maxLog), nil)
		childIn.Close()
	}()
	// s2c: the child's stdout to ours, to the end (grandchildren may keep
	// it open after the child exits; the pump ends when they close it).
	// When our stdout fails, the client is gone: the pump goes on reading
	// and logging, so that the runtime never blocks on its output.
	s2cDone := make(chan struct{})
	clientGone := make(chan error, 1)
	go func() {
		defer close(s2cDone)
		pump(outR, e.stdout, newLineSplitter(log, transcript.RuntimeToClient, maxLog), func(err error) { clientGone <- err })
		outR.Close()
	}()

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var werr error
	var ladder <-chan time.Time // the next step of the teardown, once the client is gone
	step := 0
	for done := false; !done; {
		select {
		case sig := <-sigs:
			cmd.Process.Signal(sig) // the runtime decides what the signal means
		case err := <-clientGone:
			fmt.Fprintf(e.stderr, "dshrpc tap: the client stopped reading (%v): closing the runtime's input\n", err)
			childIn.Close()
			ladder = time.After(tapGrace)
		case <-ladder:
			step++
			sig := syscall.SIGTERM
			if step > 1 {
				sig = syscall.SIGKILL
			}
			fmt.Fprintf(e.stderr, "dshrpc tap: the runtime is still running: sending %v\n", sig)
			cmd.Process.Signal(sig)
			ladder = nil
			if step == 1 {
				ladder = time.After(tapGrace)
			}
		case werr = <-waited:
			done = true
		}
	}
	// Give the pump a moment to log what the child wrote last; a
	// grandchild holding stdout open must not keep tap alive.
	select {
	case <-s2cDone:
	case <-time.After(2 * time.Second):
		outR.Close()
		<-s2cDone
	}
	var exitErr *exec.ExitError
	switch {
	case werr == nil:
		return exitOK
	case errors.As(werr, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exitErr.ExitCode()
	}
	fmt.Fprintf(e.stderr, "dshrpc tap: %v\n", werr)
	return exitRuntime
}
