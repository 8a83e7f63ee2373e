package sdktest_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/scripted"
	"github.com/linerpc/linerpc/sdkproto/sdktest"
)

// commandDir returns the directory that Command gave its process on the
// command line.
func commandDir(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	for _, arg := range cmd.Args[1:] {
		if dir, ok := strings.CutPrefix(arg, "-sdktest.runtime="); ok {
			return dir
		}
	}
	t.Fatalf("no runtime directory in %q", cmd.Args)
	return ""
}

// bounded returns a context that ends after sdktest.MaxWait, for the
// calls to a runtime's process: a hung process fails the call, which the
// test reports with what it awaited, rather than hanging the test until
// go test's -timeout. (The Client's Close bounds its own waits.)
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), sdktest.MaxWait)
	t.Cleanup(cancel)
	return ctx
}

// waitProcess waits, for at most sdktest.MaxWait, for cmd (started) to
// exit, and returns Wait's error; past that, it kills the process and
// fails t with what it awaited.
func waitProcess(t *testing.T, cmd *exec.Cmd, what string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(sdktest.MaxWait)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		cmd.Process.Kill()
		t.Fatalf("waited %v for %s", sdktest.MaxWait, what)
		return nil
	}
}

// launchRun launches cmd, and initializes its Client and runs the prompt
// "a" in session main, both within sdktest.MaxWait.
func launchRun(t *testing.T, cmd *exec.Cmd) *sdkproto.Client {
	t.Helper()
	cl, err := sdkproto.Launch(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	if _, err := cl.Initialize(bounded(t), sdktest.InitializeParams()); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if _, err := cl.Run(bounded(t), "main", sdkproto.TextBlock("a")); err != nil {
		t.Fatalf("the run of prompt a: %v", err)
	}
	return cl
}

// promptPast sends prompt i (from 1) of the prompts past the script, in
// session s2 then main, and fails t unless it is answered with -32603 and
// want, within sdktest.MaxWait.
func promptPast(t *testing.T, cl *sdkproto.Client, i int, want string) {
	t.Helper()
	session := []string{"s2", "main"}[i-1]
	_, err := cl.Prompt(bounded(t), session, sdkproto.TextBlock("past"))
	var re *sdkproto.ResponseError
	if !errors.As(err, &re) || re.Code != -32603 || re.Message != want {
		t.Errorf("prompt %d past the script: %v, want -32603 %q", i, err, want)
	}
}

// checkDirRemoved fails t unless the directory of the Runtime's process
// (dir, once set) was removed.
func checkDirRemoved(t *testing.T, dir string) {
	t.Helper()
	if dir == "" {
		t.Error("no directory of the runtime's process")
	} else if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the directory of the runtime's process is left after the cleanup: %v", err)
	}
}

// checkCleanup registers, before the Runtime's cleanup is, so that it runs
// after it, a check that fake's failures are want (one a line, none for
// ""; *want, read then), and that the directory of the Runtime's process
// (*dir, once set) was removed.
func checkCleanup(t *testing.T, fake *fakeTB, dir, want *string) {
	t.Cleanup(func() {
		if got, want := fake.failures(), *want; got != want {
			t.Errorf("the Runtime's cleanup reported:\n%s\nwant:\n%s", got, want)
		}
		checkDirRemoved(t, *dir)
	})
}

// Prompts past the script of a Command's process are answered with -32603,
// as in process, and fail the test once it has ended, with the error of
// the first of them, though the process exited 0: after the client closed
// it, and after SIGTERM.
func TestCommandPastScript(t *testing.T) {
	t.Parallel()
	const first = "scripted: no turn scripted for prompt 2 (session s2), past the script's 1 turn"
	for _, c := range []struct {
		name string
		end  string // "close" or "sigterm"
		want []string
		err  string
	}{
		{"close", "close", []string{first, "scripted: no turn scripted for prompt 3 (session main), past the script's 1 turn"},
			first + " (and 1 more prompt after it)"},
		{"sigterm", "sigterm", []string{first}, first},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.end == "sigterm" && runtime.GOOS == "windows" {
				t.Skip("no SIGTERM on Windows")
			}
			fake := &fakeTB{TB: t}
			var dir string
			want := "sdktest: the runtime process started with Command: " + c.err
			checkCleanup(t, fake, &dir, &want)
			rt := sdktest.NewRuntime(fake, scripted.Script{Turns: []*scripted.Turn{scripted.NewTurn().Text("one")}})
			cmd := rt.Command()
			dir = commandDir(t, cmd)
			cl := launchRun(t, cmd)
			for i, want := range c.want {
				promptPast(t, cl, i+1, want)
			}
			if c.end == "sigterm" {
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			cl.Close() // after SIGTERM, the runtime may be gone before the shutdown request
			if st := cl.ProcessState(); st == nil || st.ExitCode() != 0 {
				t.Errorf("the runtime's process ended with %v, want exit 0", st)
			}
			if got := fake.failures(); got != "" {
				t.Errorf("reported before the test ended: %s", got)
			}
		})
	}
}

// A Command's process that serves its script and no more leaves nothing
// for the cleanup to report, and its directory is removed.
func TestCommandWithinScriptReportsNothing(t *testing.T) {
	t.Parallel()
	fake := &fakeTB{TB: t}
	var dir, want string
	checkCleanup(t, fake, &dir, &want)
	rt := sdktest.NewRuntime(fake, scripted.Script{Turns: []*scripted.Turn{
		scripted.NewTurn().Text("one"),
		scripted.NewTurn().Text("two"),
	}})
	cmd := rt.Command()
	dir = commandDir(t, cmd)
	cl := launchRun(t, cmd)
	if _, err := cl.Run(bounded(t), "main", sdkproto.TextBlock("b")); err != nil {
		t.Fatalf("the run of prompt b: %v", err)
	}
	if err := cl.Close(); err != nil {
		t.Fatal(err)
	}
	if st := cl.ProcessState(); st == nil || st.ExitCode() != 0 {
		t.Errorf("the runtime's process ended with %v, want exit 0", st)
	}
}

// A Command's process whose serving fails (here, its script file is not
// one) exits 1, says why on stderr, and the cleanup fails the test with
// the same error, and the exit status.
func TestCommandServingFailureReported(t *testing.T) {
	t.Parallel()
	fake := &fakeTB{TB: t}
	var dir, want string
	checkCleanup(t, fake, &dir, &want)
	rt := sdktest.NewRuntime(fake, scripted.Script{})
	cmd := rt.Command()
	dir = commandDir(t, cmd)
	if err := os.WriteFile(filepath.Join(dir, "script.json"), []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err := waitProcess(t, cmd, "the runtime's process, whose script is not one, to exit")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, output %q, want exit 1", err, out.String())
	}
	said, ok := strings.CutPrefix(strings.TrimSuffix(out.String(), "\n"), "sdktest runtime: ")
	if !ok || said == "" {
		t.Fatalf("output %q, want the error", out.String())
	}
	want = "sdktest: the runtime process started with Command (exit status 1): " + said
}

// A Command's process killed (SIGKILL) right after it answered prompts
// past the script with -32603 still fails the test with the error of the
// first of them, counting the others: it left that error before each
// answer. When the program started cmd itself, the cleanup knows the
// process was killed and says so; when it ran cmd.Path and cmd.Args, it
// does not.
func TestCommandKilledAfterPastScript(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the test signals the process with SIGKILL, as on unix")
	}
	const first = "scripted: no turn scripted for prompt 2 (session s2), past the script's 1 turn"
	for _, c := range []struct {
		name  string
		start string // "cmd": Launch(cmd); "path": Launch of cmd.Path and cmd.Args
		ended string // how the cleanup says the process ended
	}{
		{"cmd", "cmd", " (signal: killed)"},
		{"path", "path", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fake := &fakeTB{TB: t}
			var dir string
			want := "sdktest: the runtime process started with Command" + c.ended + ": " + first + " (and 1 more prompt after it)"
			checkCleanup(t, fake, &dir, &want)
			rt := sdktest.NewRuntime(fake, scripted.Script{Turns: []*scripted.Turn{scripted.NewTurn().Text("one")}})
			cmd := rt.Command()
			dir = commandDir(t, cmd)
			if c.start == "path" {
				cmd = exec.Command(cmd.Path, cmd.Args[1:]...)
			}
			cl := launchRun(t, cmd)
			promptPast(t, cl, 1, first)
			promptPast(t, cl, 2, "scripted: no turn scripted for prompt 3 (session main), past the script's 1 turn")
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			cl.Close() // reaps the process
			if st := cl.ProcessState(); st == nil || st.String() != "signal: killed" {
				t.Errorf("the runtime's process ended with %v, want signal: killed", st)
			}
			if got := fake.failures(); got != "" {
				t.Errorf("reported before the test ended: %s", got)
			}
		})
	}
}

// A Command's process that crashes (here by SIGQUIT, which makes the Go
// runtime print every goroutine and exit 2) fails the test with what the
// Go runtime printed, though it left no error of its own.
func TestCommandCrashReported(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no SIGQUIT on Windows")
	}
	fake := &fakeTB{TB: t}
	var dir string
	const want = "sdktest: the runtime process started with Command crashed (exit status 2):\nSIGQUIT: quit\n"
	t.Cleanup(func() {
		if got := fake.failures(); !strings.HasPrefix(got, want) || strings.Count(got, "sdktest: ") != 1 {
			t.Errorf("the Runtime's cleanup reported:\n%s\nwant one failure starting:\n%s", got, want)
		}
		checkDirRemoved(t, dir)
	})
	rt := sdktest.NewRuntime(fake, scripted.Script{Turns: []*scripted.Turn{scripted.NewTurn().Text("one")}})
	cmd := rt.Command()
	dir = commandDir(t, cmd)
	cl := launchRun(t, cmd)
	if err := cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		t.Fatal(err)
	}
	cl.Close() // reaps the process
	if st := cl.ProcessState(); st == nil || st.ExitCode() != 2 {
		t.Errorf("the runtime's process ended with %v, want exit status 2", st)
	}
	if got := fake.failures(); got != "" {
		t.Errorf("reported before the test ended: %s", got)
	}
}
