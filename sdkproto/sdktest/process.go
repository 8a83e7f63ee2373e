package sdktest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/scripted"
)

// processFlag starts the test binary as a runtime: its value is the
// directory holding the script and the frames file.
const processFlag = "-sdktest.runtime="

// The files of a runtime's process, in the directory of processFlag.
const (
	scriptName = "script.json"
	framesName = "frames.ndjson"
	// errorName holds the text of the process's error, always written
	// whole (renamed into place): that of a prompt past the script as
	// soon as one comes, before it is answered (so that a process killed
	// after it still leaves it), and the final one as serving ends (the
	// first such prompt's with how many more came, or a failure of the
	// serving); the Runtime's cleanup fails the test with it.
	errorName = "error.txt"
	// crashName receives what the Go runtime prints when the process
	// crashes (debug.SetCrashOutput): an unrecovered panic, a fatal
	// error, SIGQUIT; the cleanup fails the test with it.
	crashName = "crash.txt"
)

// mainCalled says that the test binary's TestMain called Main, so that
// the binary can serve as a runtime's process.
var mainCalled atomic.Bool

// Main is what the TestMain of a package using Command calls:
//
//	func TestMain(m *testing.M) { sdktest.Main(m) }
//
// Started by a program under test from a Command, the test binary serves
// the script as the runtime, on its stdin and stdout, and exits (0 after
// a shutdown request, the end of its input, SIGTERM or SIGINT); started
// by go test, it runs the tests (m.Run) and exits with their status.
func Main(m *testing.M) {
	for _, arg := range os.Args[1:] {
		if dir, ok := strings.CutPrefix(arg, processFlag); ok {
			os.Exit(serveProcess(dir))
		}
	}
	mainCalled.Store(true)
	os.Exit(m.Run())
}

// Command returns the command that starts the runtime as a process of its
// own: the test binary (whose TestMain must call Main) serving the script
// on its stdin and stdout, with the events, seqs, order and statuses of
// the in-process runtime. It is for a program under test that starts its
// runtime itself: give it cmd (sdkproto.Launch takes it as it is), or
// cmd.Path and cmd.Args as the command line to run (the script travels
// in a file named on that line, not in the environment).
//
// The process records the frames in that file; Frames, Requests, Answers,
// AssertPrompted and Check read it, and hold every frame once the process
// has exited, that is once the program closed its client (WaitFor needs
// an in-process client). Pauses take real time there, and Script.Reply
// cannot cross to it. The test fails when the runtime is connected
// already, and when cmd was started and is not waited for by the end of
// the test.
//
// A prompt that the script has no turn for is answered with -32603, as
// in process, and fails the test too, as does a failure of the process's
// serving: the process leaves its error in its directory, and the
// Runtime's cleanup fails the test with its text once the test has ended
// (so the process must have exited by then, as it has once the program
// closed its client). The process still exits 0 after such a prompt, as
// the runtime, which answered it, would. The error of such a prompt is
// left before the prompt is answered, so it fails the test even when the
// process is killed afterwards. A crash of the process (a panic, a fatal
// error, SIGQUIT) fails the test too, with what the Go runtime printed.
// When cmd itself was started and waited for, the cleanup knows how the
// process ended, and says so beside its error, or logs it when the
// process ended otherwise than by exit 0 and left nothing (the program
// may kill its runtime); when the program ran cmd.Path and cmd.Args
// itself, that is not known. A process killed before it left an error
// fails nothing.
func (rt *Runtime) Command() *exec.Cmd {
	rt.t.Helper()
	switch {
	case !mainCalled.Load():
		rt.t.Fatal("sdktest: Command starts the test binary as the runtime: the package's TestMain must call sdktest.Main(m)")
		return nil
	case rt.script.Reply != nil:
		rt.t.Fatal("sdktest: Command: Script.Reply cannot cross to a process; script its turns in Script.Turns")
		return nil
	case !rt.connect("command"):
		return nil
	}
	// A directory of the Runtime's own rather than t.TempDir, whose
	// removal may be registered after the Runtime's cleanup, and so run
	// before it: the cleanup reads the process's error there, then
	// removes it.
	dir, err := os.MkdirTemp("", "sdktest-runtime-")
	if err != nil {
		rt.t.Fatalf("sdktest: Command: %v", err)
		return nil
	}
	rt.mu.Lock()
	rt.dir = dir
	rt.mu.Unlock()
	frames := filepath.Join(dir, framesName)
	exe, err := os.Executable()
	if err == nil {
		// The script's JSON form, which serveProcess reads with
		// scripted.LoadScript: the one form for files written by hand too.
		var script []byte
		if script, err = rt.script.MarshalJSON(); err == nil {
			err = os.WriteFile(filepath.Join(dir, scriptName), script, 0o644)
		}
	}
	if err == nil {
		err = os.WriteFile(frames, nil, 0o644)
	}
	if err != nil {
		rt.t.Fatalf("sdktest: Command: %v", err)
		return nil
	}
	cmd := exec.Command(exe, processFlag+dir)
	rt.mu.Lock()
	rt.cmd, rt.frames = cmd, frames
	rt.mu.Unlock()
	return cmd
}

// serveProcess serves the script of dir on the process's stdin and
// stdout, recording the frames in dir, and returns the exit status: 0
// once serving ended, 1 after a failure. The error of a prompt past the
// script (which does not change the status) is left in dir (errorName)
// for the Runtime's cleanup as soon as the prompt comes, and again once
// serving ended, with the final count, or with the failure joined to it;
// a crash is printed to crashName as well as to stderr.
func serveProcess(dir string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "sdktest runtime: %v\n", err)
		writeError(dir, err)
		return 1
	}
	if f, err := os.Create(filepath.Join(dir, crashName)); err != nil {
		fmt.Fprintf(os.Stderr, "sdktest runtime: a crash will be on stderr only: %v\n", err)
	} else {
		if err := debug.SetCrashOutput(f, debug.CrashOptions{}); err != nil {
			fmt.Fprintf(os.Stderr, "sdktest runtime: a crash will be on stderr only: %v\n", err)
		}
		f.Close() // SetCrashOutput keeps a duplicate
	}
	script, err := scripted.LoadScript(filepath.Join(dir, scriptName))
	if err != nil {
		return fail(err)
	}
	out, err := os.OpenFile(filepath.Join(dir, framesName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fail(err)
	}
	defer out.Close()
	rec := &recorder{out: out}
	// A SIGTERM or SIGINT once serving has ended (Launch's Close sends
	// one when the process is slow to exit) must not kill the process
	// with its last word unsaid: this channel, never stopped, keeps them
	// relayed, and dropped, for the process's life, so that their default
	// action never applies. (signal.Ignore, called once serving ended,
	// left a window in which it did: it stops handling a signal before it
	// has the kernel ignore it.)
	signal.Notify(make(chan os.Signal, 1), os.Interrupt, syscall.SIGTERM)
	// SIGTERM and SIGINT end the runtime as the end of its input does,
	// and the process exits 0, as the real runtime does.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Each prompt past the script leaves its error at once, before it
	// is answered: a process killed after the answer has left it. The
	// writes are serialized, and none is made once serving has ended,
	// so that the final word below is the last.
	var (
		mu     sync.Mutex
		ended  bool
		latest error // the last error of a prompt past the script left
	)
	// The calls of PastScript are serialized, so the last one's
	// played.Err() counts every prompt past the script before it.
	var played *scripted.Runtime
	played, err = scripted.NewRuntime(script, &scripted.Options{PastScript: func(scripted.Prompt, error) {
		past := played.Err() // the first such prompt's, with how many more came
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			latest = past
			writeError(dir, past)
		}
	}})
	if err != nil {
		return fail(err)
	}
	err = sdkproto.NewServer(played, nil).Serve(ctx,
		&tapReader{r: os.Stdin, t: tap{dir: ClientToRuntime, rec: rec}},
		&tapWriter{w: os.Stdout, t: tap{dir: RuntimeToClient, rec: rec}})
	mu.Lock()
	ended = true
	past := latest
	mu.Unlock()
	if final := played.Err(); final != nil {
		past = final // the final count
	}
	var failure error
	if err != nil && !errors.Is(err, context.Canceled) {
		failure = err
	}
	rec.mu.Lock()
	recErr := rec.outErr
	rec.mu.Unlock()
	if recErr != nil {
		failure = errors.Join(failure, fmt.Errorf("recording the frames: %w", recErr))
	}
	if failure != nil {
		// Serve returns a failure rather than the error of a prompt
		// past the script: keep both.
		return fail(errors.Join(failure, past))
	}
	if past != nil {
		writeError(dir, past)
	}
	return 0
}

// writeError leaves the text of err in dir (errorName), whole: written
// aside, then renamed into place. It is the process's last word, so a
// failure to write it has nowhere to go but stderr.
func writeError(dir string, err error) {
	tmp := filepath.Join(dir, errorName+".tmp")
	werr := os.WriteFile(tmp, []byte(err.Error()), 0o644)
	if werr == nil {
		werr = os.Rename(tmp, filepath.Join(dir, errorName))
	}
	if werr != nil {
		fmt.Fprintf(os.Stderr, "sdktest runtime: leaving its error for the test: %v\n", werr)
	}
}

// maxCrash caps the text of a crash that the cleanup quotes.
const maxCrash = 16 << 10

// processCleanup fails the test with the error that the process of
// Command left in dir, if any, and with its crash, if it crashed, and
// removes dir. state is how the process ended when cmd itself was
// waited for, nil when that is not known (the program ran cmd.Path and
// cmd.Args itself, or did not wait).
func (rt *Runtime) processCleanup(dir string, state *os.ProcessState) {
	rt.t.Helper()
	const who = "sdktest: the runtime process started with Command"
	read := func(name, what string) ([]byte, bool) {
		rt.t.Helper()
		data, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case err == nil:
			return data, true
		case !errors.Is(err, fs.ErrNotExist):
			rt.t.Errorf("sdktest: reading the %s of the runtime process started with Command: %v", what, err)
		}
		return nil, false
	}
	var ended string // how it ended, when that was not exit 0
	if state != nil && !state.Success() {
		ended = " (" + state.String() + ")"
	}
	data, left := read(errorName, "error")
	if left {
		rt.t.Errorf("%s%s: %s", who, ended, data)
	}
	crash, _ := read(crashName, "crash output")
	if len(crash) > 0 {
		if len(crash) > maxCrash {
			crash = append(crash[:maxCrash:maxCrash], "\n[...]"...)
		}
		rt.t.Errorf("%s crashed%s:\n%s", who, ended, crash)
	}
	if !left && len(crash) == 0 && ended != "" {
		// Ended by a signal, killed by the program maybe on purpose
		// (exec.CommandContext, Launch's kill grace), or exited with a
		// failure that it could not leave here (it says why on stderr):
		// it had left no error, and a crash would have, so this is
		// logged, not a failure.
		rt.t.Logf("%s ended with %s and left no error", who, state)
	}
	if err := os.RemoveAll(dir); err != nil {
		rt.t.Errorf("sdktest: removing the directory of the runtime process started with Command: %v", err)
	}
}
