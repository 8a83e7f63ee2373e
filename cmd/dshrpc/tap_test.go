package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc/rpctest"
)

// TestTap drives `dshrpc tap -- dshrpc serve-demo` with a scripted client
// over its stdio: what the client reads must be exactly what the runtime
// wrote, and the log must hold every frame of both directions, in a form
// `dshrpc check` accepts.
func TestTap(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "tap.ndjson")
	p := startBin(t, "tap", "--log", logPath, "--", bin, "serve-demo")
	sent := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/tmp","provider":"deepseek-official","model":"deepseek-v4-flash"}}`,
		`{"jsonrpc":"2.0","id":"p","method":"session/prompt","params":{"sessionId":"main","contentBlocks":[{"type":"text","text":"/tool <b>&</b>"}]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`,
	}
	p.peer.Send(sent[0])
	p.await(t, `"id":1,"result"`)
	p.peer.Send(sent[1])
	p.await(t, `"status":"idle"`)
	p.peer.Send(sent[2])
	p.await(t, `"id":3,"result":{}`)
	p.finish(t, exitOK)
	received := p.peer.Taken()

	// The log: every line a record with a time, a direction and the exact frame.
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var c2sFrames, s2cFrames []string
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var rec tapRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %d: %v: %s", i+1, err, line)
		}
		if _, err := time.Parse(time.RFC3339Nano, rec.T); err != nil {
			t.Errorf("log line %d: bad time %q", i+1, rec.T)
		}
		switch rec.Dir {
		case "c2s":
			c2sFrames = append(c2sFrames, rec.Frame)
		case "s2c":
			s2cFrames = append(s2cFrames, rec.Frame)
		default:
			t.Errorf("log line %d: dir %q", i+1, rec.Dir)
		}
	}
	if strings.Join(c2sFrames, "\n") != strings.Join(sent, "\n") {
		t.Errorf("c2s frames logged:\n%s\nwant:\n%s", strings.Join(c2sFrames, "\n"), strings.Join(sent, "\n"))
	}
	if strings.Join(s2cFrames, "\n") != strings.Join(received, "\n") {
		t.Errorf("s2c frames logged differ from what the client read:\n%s\nread:\n%s", strings.Join(s2cFrames, "\n"), strings.Join(received, "\n"))
	}
	if !strings.Contains(string(data), `<b>&</b>`) {
		t.Errorf("the log escapes HTML characters:\n%s", data)
	}

	r := dshrpc(t, "", "check", logPath)
	if !strings.Contains(r.stdout, ": ok") {
		t.Logf("the log checked:\n%s", data)
	}
	r.wantCode(t, exitOK)
	wantContains(t, "check", r.stdout, "transcript", "3 requests, 3 responses", ": ok")
}

// TestTapUnterminatedAndExitStatus: a runtime whose last line has no LF
// gets it logged as unterminated (and check flags it), and tap exits with
// the child's status.
func TestTapUnterminatedAndExitStatus(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "tap.ndjson")
	r := dshrpc(t, "", "tap", "--log", logPath, "--", "sh", "-c",
		`printf '{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"a","status":"idle"}}\n{"jsonrpc":"2.0","meth'; exit 5`)
	r.wantCode(t, 5)
	data, _ := os.ReadFile(logPath)
	wantContains(t, "log", string(data), `"dir":"s2c","frame":"{\"jsonrpc\":\"2.0\",\"meth","unterminated":true}`)
	c := dshrpc(t, "", "check", logPath)
	c.wantCode(t, exitFailed)
	wantContains(t, "check", c.stdout, ":2: malformed: s2c: unterminated last line")
}

func TestTapErrors(t *testing.T) {
	r := dshrpc(t, "", "tap")
	r.wantCode(t, exitUsage)
	wantContains(t, "stderr", r.stderr, "missing the runtime command")

	r = dshrpc(t, "", "tap", "--", "dshrpc-no-such-runtime")
	r.wantCode(t, exitRuntime)
	wantContains(t, "stderr", r.stderr, `cannot start the runtime: "dshrpc-no-such-runtime" not found`)
}

// TestTapLogsToStderr: without --log the log goes to stderr.
func TestTapLogsToStderr(t *testing.T) {
	p := startBin(t, "tap", "--", bin, "serve-demo")
	reply := p.exchange(t, `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`)
	if reply != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("reply: %q", reply)
	}
	stderr := p.finish(t, exitOK)
	wantContains(t, "stderr", stderr, `"dir":"c2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}"`,
		`"dir":"s2c","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"`)
}

// TestServeDemo: serve-demo answers on stdout and ends cleanly (status 0)
// at the end of its input.
func TestServeDemo(t *testing.T) {
	p := startBin(t, "serve-demo")
	reply := p.exchange(t, `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"m","contentBlocks":[]}}`)
	if reply != `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"SDK server is not initialized"}}` {
		t.Errorf("reply: %q", reply)
	}
	p.finish(t, exitOK)

	r := dshrpc(t, "", "serve-demo", "extra")
	r.wantCode(t, exitUsage)
}

// proc is the binary running with its stdio held by the test: a scripted
// peer on its stdin and stdout, bounded by testTimeout (the child is
// killed then, which ends its stdout and so every wait on it).
type proc struct {
	cmd    *exec.Cmd
	ctx    context.Context // ends at testTimeout, which kills the child
	peer   *rpctest.Peer
	stderr *rpctest.LockedBuffer
}

func startBin(t *testing.T, args ...string) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = testEnv()
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	p := &proc{cmd: cmd, ctx: ctx, stderr: &rpctest.LockedBuffer{}}
	cmd.Stderr = p.stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	p.peer = rpctest.Attach(t, stdin, stdout)
	return p
}

// exchange writes one frame and returns the next line read. The input
// stays open until finish: the reply is awaited, never raced with EOF.
func (p *proc) exchange(t *testing.T, frame string) string {
	t.Helper()
	p.peer.Send(frame)
	return p.next(t, "a reply to "+frame)
}

// next returns the next line the binary wrote; what names what the test
// awaits, for the failure when the output ends first (as it does when
// testTimeout kills the child).
func (p *proc) next(t *testing.T, what string) string {
	t.Helper()
	l, err := p.peer.TryNext()
	if err != nil {
		t.Fatalf("stdout ended (%v) before %s%s; stderr:\n%s", err, what, p.timedOut(), p.stderr.String())
	}
	return l
}

// timedOut says, for a failure, that testTimeout killed the child.
func (p *proc) timedOut() string {
	if p.ctx.Err() != nil {
		return fmt.Sprintf(" (the child was killed after %s)", testTimeout)
	}
	return ""
}

// await reads lines until one contains want.
func (p *proc) await(t *testing.T, want string) {
	t.Helper()
	for !strings.Contains(p.next(t, "a line with "+want), want) {
	}
}

// finish closes stdin, waits for the exit and returns stderr.
func (p *proc) finish(t *testing.T, code int) string {
	t.Helper()
	p.peer.CloseInput(nil)
	for {
		if _, err := p.peer.TryNext(); err != nil {
			break // the binary closed its output
		}
	}
	err := p.cmd.Wait()
	if p.ctx.Err() != nil {
		t.Fatalf("the binary did not exit after its input ended%s; stderr:\n%s", p.timedOut(), p.stderr.String())
	}
	got := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		got = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if got != code {
		t.Errorf("exit status %d, want %d; stderr:\n%s", got, code, p.stderr.String())
	}
	return p.stderr.String()
}

// tapRuntime is --runtime for the binary's tap of its own serve-demo,
// logging to logPath with the tap flags given.
func tapRuntime(logPath string, flags ...string) string {
	words := append(append([]string{bin, "tap"}, flags...), "--log", logPath, "--", bin, "serve-demo")
	for i, w := range words {
		words[i] = strconv.Quote(w)
	}
	return strings.Join(words, " ")
}

// run through tap sends --cwd made absolute, as the upstream clients do
// (the runtime would resolve "." against its own working directory).
func TestRunSendsAbsoluteCwd(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "tap.ndjson")
	r := dshrpc(t, "", "run", "--runtime", tapRuntime(logPath), "--cwd", ".", "hi")
	r.wantCode(t, exitOK)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	recs := readTapLog(t, logPath)
	var init struct {
		Method string
		Params struct{ Cwd string }
	}
	if len(recs) == 0 || json.Unmarshal([]byte(recs[0].Frame), &init) != nil || init.Method != "initialize" {
		t.Fatalf("the log does not start with initialize: %+v", recs)
	}
	if init.Params.Cwd != wd {
		t.Errorf("initialize cwd %q, want %q", init.Params.Cwd, wd)
	}
}

// A tap log that cut every frame to 120 bytes checks without a problem:
// the cut requests' ids lie in their first bytes, so the whole responses
// answer them; cut frames are warnings.
func TestCheckTapLogOfCutFrames(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "cut.ndjson")
	r := dshrpc(t, "", "run", "--runtime", tapRuntime(logPath, "--max-log-frame", "120"), noDelay, "hi")
	r.wantCode(t, exitOK)
	c := dshrpc(t, "", "check", logPath)
	c.wantCode(t, exitOK)
	wantContains(t, "check", c.stdout, ": warning: not-checked: c2s a frame of ", " 0 problems, ", "3 requests, 3 responses")
	c = dshrpc(t, "", "check", "--strict", logPath)
	c.wantCode(t, exitFailed)
	for _, f := range findingsOf(c.stdout) {
		if !strings.HasSuffix(f, " not-checked") {
			t.Errorf("finding %s, want not-checked only:\n%s", f, c.stdout)
		}
	}
}
