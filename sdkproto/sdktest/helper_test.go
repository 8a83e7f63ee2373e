package sdktest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/scripted"
	"github.com/linerpc/linerpc/sdkproto/sdktest"
)

// childEnv names the environment variable under which the test binary,
// started again by TestPastScriptReportedAtTheTestsLine, runs
// TestPastScriptChild in the mode it holds.
const childEnv = "SDKTEST_PAST_SCRIPT_CHILD"

// nextLine returns the line after its caller's.
func nextLine() int {
	_, _, line, _ := runtime.Caller(1)
	return line + 1
}

// TestPastScriptChild is the failing test that
// TestPastScriptReportedAtTheTestsLine runs in a process of its own: a
// prompt past a one-turn script, the runtime in process ("client") or a
// process of its own ("command"). It logs the line of its NewRuntime.
func TestPastScriptChild(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("the failing test of TestPastScriptReportedAtTheTestsLine, run by it")
	}
	line := nextLine()
	rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{scripted.NewTurn().Text("one")}})
	t.Logf("NewRuntime at line %d", line)
	var c *sdkproto.Client
	if mode == "command" {
		c = launchRun(t, rt.Command())
	} else {
		c = rt.Client()
		if _, err := c.Run(bounded(t), "main", sdkproto.TextBlock("a")); err != nil {
			t.Fatal(err)
		}
	}
	c.Prompt(bounded(t), "main", sdkproto.TextBlock("past"))
}

// A prompt past the script fails the test at the test's line that called
// NewRuntime, not at a line of sdktest, with the prompt numbered from 1
// ("prompt 2" is the second prompt of a one-turn script), whether the
// runtime is in process or the process of Command: the test binary runs
// TestPastScriptChild again, which must fail so.
func TestPastScriptReportedAtTheTestsLine(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("in the child")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ mode, want string }{
		{"client", `scripted: no turn scripted for prompt 2 (session main), past the script's 1 turn: "past"`},
		{"command", `sdktest: the runtime process started with Command: scripted: no turn scripted for prompt 2 (session main), past the script's 1 turn`},
	} {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), sdktest.MaxWait)
			defer cancel()
			cmd := exec.CommandContext(ctx, exe, "-test.run=^TestPastScriptChild$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), childEnv+"="+c.mode)
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("the child test did not end within %v:\n%s", sdktest.MaxWait, out)
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Errorf("the child test ended with %v, want exit status 1 (a failed test):\n%s", err, out)
			}
			m := regexp.MustCompile(`NewRuntime at line (\d+)`).FindSubmatch(out)
			if m == nil {
				t.Fatalf("the child logged no line of its NewRuntime:\n%s", out)
			}
			want := fmt.Sprintf("helper_test.go:%s: %s", m[1], c.want)
			if !strings.Contains(string(out), want) {
				t.Errorf("the child's output:\n%s\nwant a failure reading\n%s", out, want)
			}
		})
	}
}
