package bench

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The plumbing of the two-process suite (twoproc_test.go): the benchmark
// process is the client, and it starts its own test binary again as the
// server, a child serving one contender on its standard input and output,
// as a DeepSeek Harness client starts its runtime. The child's stdin and
// stdout are kernel pipes made blocking by exec (a read is a system call
// that holds a thread, as in any child that reads os.Stdin); the parent's
// ends stay in its poller, as with exec.Cmd's StdinPipe and StdoutPipe.
//
// Beside the stdio, the child has a control pipe each way (fds 3 and 4,
// put in its poller), on which the parent asks for its resource usage,
// starts a stream of events, or asks what its stdio is; the child exits
// when the control input ends.

// childEnv, when set in the environment (to "WORKLOAD,LIB"), makes the test
// binary serve as the child of a two-process benchmark instead of testing.
const childEnv = "LINERPC_BENCH_CHILD"

// childProfileEnv, when set, names the file the child writes its CPU
// profile to: from the first "usage" command (the start of the timed
// region) to its exit.
const childProfileEnv = "LINERPC_BENCH_CHILD_CPUPROFILE"

var serverCPUProfile = flag.String("server-cpuprofile", "",
	"write a CPU profile of the server process of each two-process benchmark to this file, "+
		"with the workload and lib inserted before the extension (server.prof: server.RoundTrip.linerpc.prof)")

func TestMain(m *testing.M) {
	if spec, ok := os.LookupEnv(childEnv); ok {
		if err := serveChild(spec); err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childHandlers are what the server of a workload serves.
func childHandlers(work string) (*handlers, error) {
	switch work {
	case "RoundTrip", "Concurrent":
		return &handlers{prompt: servePrompt}, nil
	case "Large":
		return &handlers{blob: serveBlob}, nil
	case "Stream":
		return &handlers{}, nil // it only notifies
	}
	return nil, fmt.Errorf("unknown workload %q", work)
}

func contenderNamed(name string) (*contender, error) {
	for _, c := range contenders {
		if c.name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("unknown contender %q", name)
}

// usage is what a process has consumed: CPU time (user and system, every
// thread), voluntary context switches (every thread: a thread that waited,
// for a pipe, a futex or a timer, and was woken), and heap allocations
// (runtime.MemStats, as -benchmem counts them).
type usage struct {
	cpu     time.Duration
	vcsw    int64
	mallocs uint64
	bytes   uint64
}

func selfUsage() usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return usage{
		cpu:     time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		vcsw:    ru.Nvcsw,
		mallocs: m.Mallocs,
		bytes:   m.TotalAlloc,
	}
}

// serveChild is the child: it serves work with contender lib on its stdin
// and stdout and answers the control commands, one line each:
//
//	usage        → "CPU-NS VCSW MALLOCS BYTES"
//	stream N     → notifies events 0 to N-1, then "ok"
//	stdio        → "stdin=blocking|nonblocking stdout=… gomaxprocs=N"
//
// until the control input ends.
func serveChild(spec string) error {
	work, lib, _ := strings.Cut(spec, ",")
	c, err := contenderNamed(lib)
	if err != nil {
		return err
	}
	h, err := childHandlers(work)
	if err != nil {
		return err
	}
	srv := c.serve(&end{r: os.Stdin, w: os.Stdout}, h)

	ctlIn, err := pollableFile(3, "control-in")
	if err != nil {
		return err
	}
	ctlOut, err := pollableFile(4, "control-out")
	if err != nil {
		return err
	}
	profile := os.Getenv(childProfileEnv)
	var profiled *os.File
	defer func() {
		if profiled != nil {
			pprof.StopCPUProfile()
			profiled.Close()
		}
	}()

	in := bufio.NewScanner(ctlIn)
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		var reply string
		switch cmd {
		case "usage":
			if profile != "" && profiled == nil {
				f, err := os.Create(profile)
				if err != nil {
					return err
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					f.Close()
					return err
				}
				profiled = f
			}
			u := selfUsage()
			reply = fmt.Sprintf("%d %d %d %d", u.cpu, u.vcsw, u.mallocs, u.bytes)
		case "stream":
			n, err := strconv.Atoi(arg)
			if err != nil {
				return fmt.Errorf("stream: %w", err)
			}
			reply = "ok"
			ev := newEvent(0)
			for i := range n {
				ev.Event.Seq = int64(i)
				if err := srv.notifyEvent(bg, &ev); err != nil {
					reply = "error: " + err.Error()
					break
				}
			}
		case "stdio":
			reply = fmt.Sprintf("stdin=%s stdout=%s gomaxprocs=%d", blocking(0), blocking(1), runtime.GOMAXPROCS(0))
		default:
			return fmt.Errorf("unknown command %q", in.Text())
		}
		if _, err := fmt.Fprintln(ctlOut, reply); err != nil {
			return err
		}
	}
	return in.Err()
}

// pollableFile returns the inherited descriptor fd as a File in the
// runtime's poller, so that waiting for a command holds no thread.
func pollableFile(fd int, name string) (*os.File, error) {
	if err := syscall.SetNonblock(fd, true); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// blocking says whether descriptor fd is in blocking mode.
func blocking(fd int) string {
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	switch {
	case errno != 0:
		return "unknown"
	case flags&syscall.O_NONBLOCK != 0:
		return "nonblocking"
	}
	return "blocking"
}

// serverProcess is the parent's handle on a child serving a workload.
type serverProcess struct {
	cmd     *exec.Cmd
	stdin   *os.File // the child's stdin: the client writes it
	stdout  *os.File // the child's stdout: the client reads it
	ctlOut  *os.File // commands to the child
	ctlIn   *os.File // its replies
	replies *bufio.Reader
	exited  chan struct{}
	err     error // Wait's, once exited is closed
}

// end is the client's end of the child's stdio.
func (p *serverProcess) end() *end {
	return &end{r: p.stdout, w: p.stdin, closers: []io.Closer{p.stdin, p.stdout}}
}

// startServerProcess starts the child that serves work with contender lib,
// with the parent's GOMAXPROCS. With -server-cpuprofile, it profiles itself.
func startServerProcess(work, lib string) (*serverProcess, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// The child's ends (first of each pair) are closed once it has them.
	var files [8]*os.File
	for i := 0; i < len(files); i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			for _, f := range files[:i] {
				f.Close()
			}
			return nil, err
		}
		files[i], files[i+1] = r, w
	}
	stdinR, stdinW := files[0], files[1]
	stdoutR, stdoutW := files[2], files[3]
	ctlInR, ctlInW := files[4], files[5]   // parent → child
	ctlOutR, ctlOutW := files[6], files[7] // child → parent

	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(),
		childEnv+"="+work+","+lib,
		"GOMAXPROCS="+strconv.Itoa(runtime.GOMAXPROCS(0)))
	if *serverCPUProfile != "" {
		cmd.Env = append(cmd.Env, childProfileEnv+"="+profileName(*serverCPUProfile, work, lib))
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, os.Stderr
	cmd.ExtraFiles = []*os.File{ctlInR, ctlOutW}
	err = cmd.Start()
	for _, f := range []*os.File{stdinR, stdoutW, ctlInR, ctlOutW} {
		f.Close()
	}
	if err != nil {
		for _, f := range []*os.File{stdinW, stdoutR, ctlInW, ctlOutR} {
			f.Close()
		}
		return nil, err
	}
	p := &serverProcess{
		cmd:     cmd,
		stdin:   stdinW,
		stdout:  stdoutR,
		ctlOut:  ctlInW,
		ctlIn:   ctlOutR,
		replies: bufio.NewReader(ctlOutR),
		exited:  make(chan struct{}),
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// profileName inserts work and lib before the extension of file. A
// relative file is in the directory of go test's own profiles (the
// directory go test was run in), as -cpuprofile's is.
func profileName(file, work, lib string) string {
	if dir := flag.Lookup("test.outputdir"); !filepath.IsAbs(file) && dir != nil && dir.Value.String() != "" {
		file = filepath.Join(dir.Value.String(), file)
	}
	ext := filepath.Ext(file)
	return strings.TrimSuffix(file, ext) + "." + work + "." + lib + ext
}

// send writes a command.
func (p *serverProcess) send(cmd string) error {
	_, err := fmt.Fprintln(p.ctlOut, cmd)
	return err
}

// reply reads the reply to a command.
func (p *serverProcess) reply() (string, error) {
	line, err := p.replies.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("server process: no reply: %w", err)
	}
	line = strings.TrimSuffix(line, "\n")
	if msg, ok := strings.CutPrefix(line, "error: "); ok {
		return "", errors.New("server process: " + msg)
	}
	return line, nil
}

func (p *serverProcess) command(cmd string) (string, error) {
	if err := p.send(cmd); err != nil {
		return "", err
	}
	return p.reply()
}

// usage is the child's resource usage so far.
func (p *serverProcess) usage() (usage, error) {
	line, err := p.command("usage")
	if err != nil {
		return usage{}, err
	}
	var u usage
	var cpu int64
	if _, err := fmt.Sscan(line, &cpu, &u.vcsw, &u.mallocs, &u.bytes); err != nil {
		return usage{}, fmt.Errorf("server process: usage %q: %w", line, err)
	}
	u.cpu = time.Duration(cpu)
	return u, nil
}

// stop ends the child: its stdin and control input end, and it exits. A
// child still running 10 s later is killed. It reports how the child
// ended when not by exiting 0.
func (p *serverProcess) stop() error {
	p.stdin.Close()  // the server reads the end of its input
	p.ctlOut.Close() // the child exits
	var err error
	select {
	case <-p.exited:
		err = p.err
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
		err = fmt.Errorf("server process did not exit within 10 s of its input's end: killed (%v)", p.err)
	}
	p.stdout.Close()
	p.ctlIn.Close()
	return err
}
