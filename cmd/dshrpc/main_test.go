package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bin is the dshrpc binary built once by TestMain: the tests run it end
// to end, as a user would.
var bin string

func TestMain(m *testing.M) {
	measureAsChild()
	dir, err := os.MkdirTemp("", "dshrpc-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "dshrpc")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building dshrpc:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testTimeout bounds every run of the binary.
const testTimeout = 30 * time.Second

// result is what a run of the binary produced.
type result struct {
	stdout, stderr string
	code           int
}

// dshrpc runs the binary with args and stdin, bounded by testTimeout,
// with colour switched off by the pipe (and NO_COLOR unset, so that the
// pipe alone decides).
func dshrpc(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = testEnv()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("dshrpc %q timed out after %s; stderr:\n%s", args, testTimeout, errb.String())
	}
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatalf("dshrpc %q: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// testEnv is the environment without NO_COLOR and COLUMNS.
func testEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NO_COLOR=") && !strings.HasPrefix(kv, "COLUMNS=") {
			env = append(env, kv)
		}
	}
	return env
}

func (r result) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

func wantContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s does not contain %q:\n%s", what, w, got)
		}
	}
}

func TestUsage(t *testing.T) {
	r := dshrpc(t, "")
	r.wantCode(t, exitUsage)
	wantContains(t, "stderr", r.stderr, "Usage:", "dshrpc run", "dshrpc tap", "dshrpc check [FILE|-]...", "dshrpc serve-demo", "Exit status:")

	r = dshrpc(t, "", "-h")
	r.wantCode(t, exitOK)
	wantContains(t, "stdout", r.stdout, "Usage:")

	for _, cmd := range []string{"run", "tap", "check", "serve-demo"} {
		r := dshrpc(t, "", cmd, "-h")
		r.wantCode(t, exitOK)
		wantContains(t, cmd+" -h", r.stdout, "Usage: dshrpc "+cmd)
		r = dshrpc(t, "", "help", cmd)
		r.wantCode(t, exitOK)
		wantContains(t, "help "+cmd, r.stdout, "Usage: dshrpc "+cmd)
	}

	r = dshrpc(t, "", "frobnicate")
	r.wantCode(t, exitUsage)
	wantContains(t, "stderr", r.stderr, `unknown command "frobnicate"`, "dshrpc -h")
}

func TestParseInterleaved(t *testing.T) {
	fs := newFlagSet("x")
	j := fs.Bool("json", false, "")
	s := fs.String("session", "", "")
	pos, err := parseInterleaved(fs, []string{"hello", "--json", "world", "--session", "a", "--", "--not-a-flag"})
	if err != nil {
		t.Fatal(err)
	}
	if !*j || *s != "a" || strings.Join(pos, "|") != "hello|world|--not-a-flag" {
		t.Fatalf("json %v session %q pos %q", *j, *s, pos)
	}
}

func TestSplitWords(t *testing.T) {
	for in, want := range map[string]string{
		`dsh --profile sdk`:           `dsh|--profile|sdk`,
		`  a   b  `:                   `a|b`,
		`node 'my dir/bin.js' x`:      `node|my dir/bin.js|x`,
		`sh -c "echo \"hi\" \$HOME"`:  `sh|-c|echo "hi" $HOME`,
		`a\ b c`:                      `a b|c`,
		`x "" y`:                      `x||y`,
		`'it'"'"'s'`:                  `it's`,
		`"back\slash"`:                `back\slash`,
		`/usr/bin/dshrpc serve-demo `: `/usr/bin/dshrpc|serve-demo`,
		"tab\tseparated\nand newline": `tab|separated|and|newline`,
	} {
		got, err := splitWords(in)
		if err != nil {
			t.Errorf("splitWords(%q): %v", in, err)
			continue
		}
		if strings.Join(got, "|") != want {
			t.Errorf("splitWords(%q) = %q, want %q", in, strings.Join(got, "|"), want)
		}
	}
	for _, in := range []string{`'open`, `"open`, `a "b`} {
		if _, err := splitWords(in); err == nil {
			t.Errorf("splitWords(%q): no error", in)
		}
	}
}

// readUntil reads r until its text contains want, failing after d. It
// returns what was read; the reading goroutine ends when r does.
func readUntil(t *testing.T, r io.Reader, want string, d time.Duration) string {
	t.Helper()
	type chunk struct {
		b   []byte
		err error
	}
	got := make(chan chunk, 1)
	var buf bytes.Buffer
	deadline := time.After(d)
	for !strings.Contains(buf.String(), want) {
		go func() {
			b := make([]byte, 4096)
			n, err := r.Read(b)
			got <- chunk{b[:n], err}
		}()
		select {
		case c := <-got:
			buf.Write(c.b)
			if c.err != nil && !strings.Contains(buf.String(), want) {
				t.Fatalf("stream ended (%v) before %q; got:\n%s", c.err, want, buf.String())
			}
		case <-deadline:
			t.Fatalf("no %q within %s; got:\n%s", want, d, buf.String())
		}
	}
	return buf.String()
}
