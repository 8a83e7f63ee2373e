package sdktest_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
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

// checkCleanup registers, before the Runtime's cleanup is, so that it runs
// after it, a check that fake's failures are want (one a line, none for
// ""; *want, read then), and that the directory of the Runtime's process
// (*dir, once set) was removed.
func checkCleanup(t *testing.T, fake *fakeTB, dir, want *string) {
	t.Cleanup(func() {
		if got, want := fake.failures(), *want; got != want {
			t.Errorf("the Runtime's cleanup reported:\n%s\nwant:\n%s", got, want)
		}
		if *dir == "" {
			t.Error("no directory of the runtime's process")
		} else if _, err := os.Stat(*dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the directory of the runtime's process is left after the cleanup: %v", err)
		}
	})
}

// Prompts past the script of a Command's process are answered with -32603,
// as in process, and fail the test once it has ended, with the error of
// the first of them, though the process exited 0: after the client closed
// it, and after SIGTERM.
func TestCommandPastScript(t *testing.T) {
	t.Parallel()
	const first = "sdktest: no turn scripted for prompt 1 (session s2), past the script's 1 turn"
	for _, c := range []struct {
		name string
		end  string // "close" or "sigterm"
		want []string
		err  string
	}{
		{"close", "close", []string{first, "sdktest: no turn scripted for prompt 2 (session main), past the script's 1 turn"},
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
			rt := sdktest.NewRuntime(fake, sdktest.Script{Turns: []*sdktest.Turn{sdktest.NewTurn().Text("one")}})
			cmd := rt.Command()
			dir = commandDir(t, cmd)
			cl, err := sdkproto.Launch(cmd, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cl.Close() })
			if _, err := cl.Initialize(t.Context(), sdktest.InitializeParams()); err != nil {
				t.Fatal(err)
			}
			if _, err := cl.Run(t.Context(), "main", sdkproto.TextBlock("a")); err != nil {
				t.Fatal(err)
			}
			for i, want := range c.want {
				session := []string{"s2", "main"}[i]
				_, err := cl.Prompt(t.Context(), session, sdkproto.TextBlock("past"))
				var re *sdkproto.ResponseError
				if !errors.As(err, &re) || re.Code != -32603 || re.Message != want {
					t.Errorf("prompt %d: %v, want -32603 %q", i+1, err, want)
				}
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
	rt := sdktest.NewRuntime(fake, sdktest.Script{Turns: []*sdktest.Turn{
		sdktest.NewTurn().Text("one"),
		sdktest.NewTurn().Text("two"),
	}})
	cmd := rt.Command()
	dir = commandDir(t, cmd)
	cl, err := sdkproto.Launch(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	if _, err := cl.Initialize(t.Context(), sdktest.InitializeParams()); err != nil {
		t.Fatal(err)
	}
	for _, prompt := range []string{"a", "b"} {
		if _, err := cl.Run(t.Context(), "main", sdkproto.TextBlock(prompt)); err != nil {
			t.Fatal(err)
		}
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
// the same error.
func TestCommandServingFailureReported(t *testing.T) {
	t.Parallel()
	fake := &fakeTB{TB: t}
	var dir, want string
	checkCleanup(t, fake, &dir, &want)
	rt := sdktest.NewRuntime(fake, sdktest.Script{})
	cmd := rt.Command()
	dir = commandDir(t, cmd)
	if err := os.WriteFile(filepath.Join(dir, "script.json"), []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, output %q, want exit 1", err, out)
	}
	said, ok := strings.CutPrefix(strings.TrimSuffix(string(out), "\n"), "sdktest runtime: ")
	if !ok || said == "" {
		t.Fatalf("output %q, want the error", out)
	}
	want = "sdktest: the runtime process started with Command: " + said
}
