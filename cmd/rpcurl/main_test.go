package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata with the outputs got")

// bin is the folder of the binaries TestMain builds: the servers the
// tests reach (examples/calc, examples/lsp, dshrpc for its demo runtime)
// and rpcurl itself, for the tests that signal a real process; and of
// dsh.openrpc.json, the DSH document that 'dshrpc schema' prints.
var bin string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "rpcurl-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
		"../../examples/calc", "../../examples/lsp", "../dshrpc", ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the test servers:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// The DSH document, as 'dshrpc schema' prints it, for --doc.
	schema := exec.Command(filepath.Join(dir, "dshrpc"), "schema")
	schema.Stderr = os.Stderr
	doc, err := schema.Output()
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "dsh.openrpc.json"), doc, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dshrpc schema:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what a command produced.
type result struct {
	args           []string
	stdin          string
	stdout, stderr string
	code           int
}

// invocation is one run of rpcurl, in-process.
type invocation struct {
	args  []string
	stdin string
	// ctx, when set, is the command's interrupt context (Ctrl-C).
	ctx context.Context
	// stderr, when set, also gets what the command writes on stderr.
	stderr io.Writer
}

// rpcurl runs rpcurl in-process with args and stdin, and checks that no
// goroutine and no child process it started outlives it.
func rpcurl(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runInvocation(t, invocation{args: args, stdin: stdin})
}

func runInvocation(t *testing.T, inv invocation) result {
	t.Helper()
	before := goroutineIDs()
	children := childPIDs(t)
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(inv.stdin), stdout: &out, stderr: &errb, ctx: inv.ctx}
	if inv.stderr != nil {
		e.stderr = io.MultiWriter(&errb, inv.stderr)
	}
	done := make(chan int, 1)
	go func() { done <- run(e, inv.args) }()
	code := linetest.Within(t, done, fmt.Sprintf("rpcurl %q to return", inv.args))
	r := result{args: inv.args, stdin: inv.stdin, stdout: out.String(), stderr: errb.String(), code: code}
	if extra := slices.DeleteFunc(childPIDs(t), func(pid int) bool { return slices.Contains(children, pid) }); len(extra) > 0 {
		t.Errorf("rpcurl %q left child processes %v", inv.args, extra)
	}
	noGoroutinesLeft(t, before, fmt.Sprintf("rpcurl %q", inv.args))
	return r
}

func (r result) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("rpcurl %q: exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", r.args, r.code, code, r.stdout, r.stderr)
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

// golden compares r, made stable by replace (old, new pairs) and the
// usual replacements, with testdata/name.golden, or writes it there with
// -update.
func golden(t *testing.T, name string, r result, replace ...string) {
	t.Helper()
	got := r.transcript(replace...)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run '%s' -update to write it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("rpcurl %q differs from %s (go test -update rewrites it):\n--- got\n%s--- want\n%s", r.args, path, got, want)
	}
}

var pidRE = regexp.MustCompile(`\(pid \d+\)`)

// transcript is r as a golden file holds it: the command line, stdin,
// the exit status, stdout and stderr, with the paths of the test's
// folders and the pids replaced.
func (r result) transcript(replace ...string) string {
	replace = append(replace, bin, "$BIN", os.TempDir(), "$TMPDIR")
	rep := strings.NewReplacer(replace...)
	var b strings.Builder
	b.WriteString("$ rpcurl")
	for _, a := range r.args {
		b.WriteString(" " + rep.Replace(shellQuote(a)))
	}
	b.WriteString("\n")
	if r.stdin != "" {
		b.WriteString("--- stdin\n" + r.stdin)
		if !strings.HasSuffix(r.stdin, "\n") {
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "--- exit status %d\n", r.code)
	b.WriteString("--- stdout\n" + rep.Replace(r.stdout))
	b.WriteString("--- stderr\n" + pidRE.ReplaceAllString(rep.Replace(r.stderr), "(pid N)"))
	return b.String()
}

// shellQuote quotes s for a shell, when it needs to be.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`{}[]*?;&|<>()#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// goroutineIDs returns the ids of the goroutines that exist.
func goroutineIDs() map[string]bool {
	ids := map[string]bool{}
	for _, g := range goroutines() {
		ids[g.id] = true
	}
	return ids
}

type goroutine struct{ id, stack string }

func goroutines() []goroutine {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var gs []goroutine
	for _, g := range strings.Split(string(buf), "\n\n") {
		head, _, _ := strings.Cut(g, " [")
		if id, ok := strings.CutPrefix(head, "goroutine "); ok {
			gs = append(gs, goroutine{id, g})
		}
	}
	return gs
}

// noGoroutinesLeft fails the test when goroutines that did not exist in
// before are still there: it waits for them to go, up to WaitBound, as
// a goroutine that has done its last deed may not have returned yet.
func noGoroutinesLeft(t *testing.T, before map[string]bool, what string) {
	t.Helper()
	deadline := time.Now().Add(linetest.WaitBound)
	for {
		var left []string
		for _, g := range goroutines() {
			if !before[g.id] && !strings.Contains(g.stack, "main.noGoroutinesLeft") {
				left = append(left, g.stack)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s left %d goroutines after %v:\n%s", what, len(left), linetest.WaitBound, strings.Join(left, "\n\n"))
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// childPIDs returns the processes whose parent is the test (on Linux; nil
// elsewhere).
func childPIDs(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := strconv.Itoa(os.Getpid())
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == self {
			pids = append(pids, pid)
		}
	}
	return pids
}

// server is a test server started as a process of its own (calc listen,
// lsp -listen), stopped at the end of the test.
type server struct {
	cmd  *exec.Cmd
	addr string // the target it serves, as it said: tcp:HOST:PORT or unix:PATH
	log  *watchedLog
}

// startServer starts the binary name of bin with args, and waits for it
// to say where it listens, on its stderr: "<prefix>: listening on ADDR".
func startServer(t *testing.T, name string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, name), args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, log: newWatchedLog()}
	exited := make(chan struct{})
	go func() {
		io.Copy(s.log, stderr)
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		linetest.Within(t, exited, name+"'s stderr to end after SIGINT")
		cmd.Wait()
	})
	line := linetest.Within(t, s.log.lineWith("listening on "), name+" to say where it listens")
	s.addr = strings.TrimSpace(line[strings.Index(line, "listening on ")+len("listening on "):])
	return s
}

// watchedLog keeps what is written to it, and tells when a line holds a
// text.
type watchedLog struct {
	mu       sync.Mutex
	lines    []string
	partial  string
	watchers []watcher
}

type watcher struct {
	text string
	ch   chan string
}

func newWatchedLog() *watchedLog { return &watchedLog{} }

func (w *watchedLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	all := strings.Split(w.partial+string(p), "\n")
	w.lines = append(w.lines, all[:len(all)-1]...)
	w.partial = all[len(all)-1]
	w.notify()
	return len(p), nil
}

// lineWith returns a channel that gets the first line holding text.
func (w *watchedLog) lineWith(text string) <-chan string {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan string, 1)
	w.watchers = append(w.watchers, watcher{text, ch})
	w.notify()
	return ch
}

func (w *watchedLog) notify() {
	w.watchers = slices.DeleteFunc(w.watchers, func(wt watcher) bool {
		for _, l := range w.lines {
			if strings.Contains(l, wt.text) {
				wt.ch <- l
				return true
			}
		}
		return false
	})
}
