package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// noDelay makes the built-in demo stream at once.
const noDelay = "--demo-delay=0"

// wantNoANSI checks that piped output is plain.
func wantNoANSI(t *testing.T, out string) {
	t.Helper()
	if strings.Contains(out, "\x1b[") {
		t.Errorf("piped output has ANSI escapes:\n%q", out)
	}
}

func TestRunPlainText(t *testing.T) {
	r := dshrpc(t, "", "run", noDelay, "hello", "there")
	r.wantCode(t, exitOK)
	want := "hello there\n── turn completed · 10 input + 4 output tokens\n"
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	wantNoANSI(t, r.stdout)
	if r.stderr != "" {
		t.Errorf("stderr: %s", r.stderr)
	}
}

func TestRunThink(t *testing.T) {
	r := dshrpc(t, "", "run", noDelay, "/think why is the sky blue")
	r.wantCode(t, exitOK)
	wantContains(t, "stdout", r.stdout,
		"thinking: Thinking about: why is the sky blue\nwhy is the sky blue\n── turn completed")
}

func TestRunTool(t *testing.T) {
	r := dshrpc(t, "", "run", noDelay, "/tool hi")
	r.wantCode(t, exitOK)
	wantContains(t, "stdout", r.stdout, "→ echo {\"text\":\"hi\"}\n← echo: hi\ntool said: hi\n── turn completed · 20 input")
}

// subagentLines checks the rendering of "/subagent summarise the repo".
func subagentLines(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 7 {
		t.Fatalf("want 7 lines, got %d:\n%s", len(lines), out)
	}
	want := []string{
		`→ subagent {"prompt":"summarise the repo"}`,
		"↳ subagent * started",
		"  summarise the repo", // the child's answer, indented under its parent
		"↳ subagent * finished: ok (completed)",
		"← subagent: summarise the repo",
		"subagent said: summarise the repo",
		"── turn completed · 20 input + 10 output tokens · subagents 10 input + 5 output tokens",
	}
	for i, w := range want {
		pre, post, star := strings.Cut(w, "*")
		if !star && lines[i] != w || star && !(strings.HasPrefix(lines[i], pre) && strings.HasSuffix(lines[i], post)) {
			t.Errorf("line %d: %q, want %q", i+1, lines[i], w)
		}
	}
}

func TestRunSubagent(t *testing.T) {
	r := dshrpc(t, "", "run", noDelay, "/subagent summarise the repo")
	r.wantCode(t, exitOK)
	subagentLines(t, r.stdout)
}

func TestRunFailExitsNonZero(t *testing.T) {
	r := dshrpc(t, "", "run", noDelay, "/fail the model broke")
	r.wantCode(t, exitFailed)
	if r.stdout != "── turn error: the model broke (DEMO_FAILURE)\n" {
		t.Errorf("stdout: %q", r.stdout)
	}
}

// checkFrames parses --json output: every line a JSON-RPC notification
// frame with an object params, the last the root session's idle.
func checkFrames(t *testing.T, out, session string) []map[string]json.RawMessage {
	t.Helper()
	var frames []map[string]json.RawMessage
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var f map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("line %d is not JSON (%v): %s", i+1, err, line)
		}
		var method string
		if string(f["jsonrpc"]) != `"2.0"` || json.Unmarshal(f["method"], &method) != nil || !bytes.HasPrefix(f["params"], []byte("{")) {
			t.Fatalf("line %d is not a notification frame: %s", i+1, line)
		}
		frames = append(frames, f)
	}
	last := frames[len(frames)-1]
	want := `{"sessionId":"` + session + `","status":"idle"}`
	if string(last["method"]) != `"session.status"` || string(last["params"]) != want {
		t.Errorf("last frame: %s %s, want session.status %s", last["method"], last["params"], want)
	}
	return frames
}

func TestRunJSON(t *testing.T) {
	r := dshrpc(t, "", "run", noDelay, "--json", "--session", "s1", "/tool hi")
	r.wantCode(t, exitOK)
	frames := checkFrames(t, r.stdout, "s1")
	var types []string
	for _, f := range frames {
		var p struct {
			Event struct{ Type string } `json:"event"`
		}
		json.Unmarshal(f["params"], &p)
		if p.Event.Type != "" {
			types = append(types, p.Event.Type)
		}
	}
	if types[0] != "agent/inbox/spliced" || !strings.Contains(strings.Join(types, " "), "tool/call tool/result") || types[len(types)-1] != "turn/end" {
		t.Errorf("event types: %q", types)
	}
	// The frames are a transcript check accepts as raw frames.
	c := dshrpc(t, r.stdout, "check", "-")
	c.wantCode(t, exitOK)

	r = dshrpc(t, "", "run", noDelay, "--session", "s2", "/fail no", "--json") // flags after the prompt
	r.wantCode(t, exitFailed)
	checkFrames(t, r.stdout, "s2")
}

func TestRunPromptFromStdin(t *testing.T) {
	r := dshrpc(t, "from stdin\n", "run", noDelay, "-")
	r.wantCode(t, exitOK)
	wantContains(t, "stdout", r.stdout, "from stdin\n── turn completed")
}

// runtimeFlag is --runtime for the binary's own serve-demo.
func runtimeFlag() string { return "--runtime=" + strconv.Quote(bin) + " serve-demo" }

func TestRunExternalRuntime(t *testing.T) {
	r := dshrpc(t, "", "run", runtimeFlag(), "/subagent summarise the repo")
	r.wantCode(t, exitOK)
	subagentLines(t, r.stdout)

	r = dshrpc(t, "", "run", runtimeFlag(), "--max-tokens", "64", "--reasoning-effort", "high", "--json", "--session", "x", "hi")
	r.wantCode(t, exitOK)
	frames := checkFrames(t, r.stdout, "x")
	var header bool
	for _, f := range frames {
		if bytes.Contains(f["params"], []byte(`"config":{"maxTokens":64,"model":"deepseek-v4-flash","provider":"deepseek-official","reasoningEffort":"high"}`)) {
			header = true
		}
	}
	if !header {
		t.Errorf("no request/header with the flags' route in:\n%s", r.stdout)
	}
}

func TestRunMissingRuntime(t *testing.T) {
	r := dshrpc(t, "", "run", "--runtime", "dshrpc-no-such-runtime --profile sdk", "hi")
	r.wantCode(t, exitRuntime)
	wantContains(t, "stderr", r.stderr, `cannot start the runtime: "dshrpc-no-such-runtime" not found`)
}

func TestRunRuntimeDies(t *testing.T) {
	r := dshrpc(t, "", "run", "--runtime", `sh -c 'echo loading config >&2; echo fatal: no config >&2; exit 7'`, "hi")
	r.wantCode(t, exitRuntime)
	wantContains(t, "stderr", r.stderr, "the runtime exited during initialize", "exit code: 7", "stderr tail:", "fatal: no config")

	// Dying mid-turn: the runtime answers initialize, then exits.
	script := `read line; echo '{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"x","version":"1"}}}'; read line; echo crashed >&2; exit 9`
	r = dshrpc(t, "", "run", "--runtime", "sh -c "+strconv.Quote(script), "hi")
	r.wantCode(t, exitRuntime)
	wantContains(t, "stderr", r.stderr, "the runtime exited during prompt", "exit code: 9", "crashed")
}

func TestRunRefused(t *testing.T) {
	r := dshrpc(t, "", "run", noDelay, "--provider", "nope", "hi")
	r.wantCode(t, exitRuntime)
	wantContains(t, "stderr", r.stderr, `the runtime refused initialize: no adapter registered for provider "nope" (code -32603)`)
}

func TestRunUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus", "hi"}, "flag provided but not defined: --bogus"},
		{[]string{"--max-tokens", "many", "hi"}, `invalid value "many" for flag --max-tokens`},
		{[]string{"--max-tokens", "-5", "hi"}, "--max-tokens must be a positive integer (1 to 2^53-1), not -5"},
		{[]string{"--max-tokens", "0", "hi"}, "--max-tokens must be a positive integer (1 to 2^53-1), not 0"},
		{[]string{"--max-tokens=9007199254740992", "hi"}, "not 9007199254740992"},
		{[]string{"hi", "--timeout"}, "flag needs an argument: --timeout"},
		{[]string{"--timeout", "-2s", "hi"}, "--timeout must not be negative, not -2s"},
		{[]string{"--demo-delay", "-1ms", "hi"}, "--demo-delay must not be negative, not -1ms"},
		{[]string{"--json=maybe", "hi"}, `invalid boolean value "maybe" for --json`},
		{[]string{}, "missing PROMPT"},
		{[]string{"--runtime", `"unclosed`, "hi"}, "--runtime: unterminated double quote"},
		{[]string{"--cwd", "/no/such/dir", "hi"}, "--cwd"},
		// An empty value is refused, not taken for the default: a script's
		// unset variable must not quietly select the demo.
		{[]string{"--runtime", "", "hi"}, "--runtime must not be empty; leave it out for the built-in demo"},
		{[]string{"--runtime=", "hi"}, "--runtime must not be empty"},
		{[]string{"--runtime", "  ", "hi"}, "--runtime: empty command line"},
		{[]string{"--session", "", "hi"}, "--session must not be empty; leave it out for a fresh session id"},
		{[]string{"--model", "", "hi"}, "--model must not be empty; leave it out for deepseek-v4-flash"},
		{[]string{"--provider", "", "hi"}, "--provider must not be empty"},
		{[]string{"--cwd", "", "hi"}, "--cwd must not be empty; leave it out for the current directory"},
		{[]string{"--reasoning-effort", "", "hi"}, "--reasoning-effort must not be empty; leave it out to send none"},
		{[]string{"--image", "", "hi"}, "--image must not be empty; leave it out to attach none"},
	} {
		r := dshrpc(t, "", append([]string{"run"}, c.args...)...)
		r.wantCode(t, exitUsage)
		wantContains(t, strings.Join(c.args, " "), r.stderr, c.want, "Run 'dshrpc run -h' for usage.")
	}
}

func TestRunImages(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	png.Encode(&buf, img)
	pngPath := filepath.Join(dir, "dot.png")
	os.WriteFile(pngPath, buf.Bytes(), 0o644)
	textPath := filepath.Join(dir, "notes.png") // the name does not decide
	os.WriteFile(textPath, []byte("just text\n"), 0o644)
	unreadable := filepath.Join(dir, "missing.jpg")

	r := dshrpc(t, "", "run", noDelay, "--json", "--session", "img", "--image", pngPath, "look")
	r.wantCode(t, exitOK)
	wantContains(t, "stdout", r.stdout, `"type":"image","attachment":{"attachmentId":"sha256:`, `"mediaType":"image/png"`, `"width":3,"height":2`)

	r = dshrpc(t, "", "run", "--image", unreadable, "look")
	r.wantCode(t, exitUsage)
	wantContains(t, "stderr", r.stderr, "--image: cannot read "+unreadable+": no such file or directory",
		"accepted types: image/png, image/jpeg, image/webp, image/gif")

	r = dshrpc(t, "", "run", "--image", textPath, "look")
	r.wantCode(t, exitUsage)
	wantContains(t, "stderr", r.stderr, "--image "+textPath+": unsupported type text/plain",
		"accepted types: image/png, image/jpeg, image/webp, image/gif")
}

// TestRunInterrupt sends SIGINT in the middle of a slow turn: run tears
// the runtime down with the client's ladder and exits 130, leaving no
// runtime process behind.
func TestRunInterrupt(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	runtime := "sh -c " + strconv.Quote(`echo $$ > "$0"; exec "$1" serve-demo`) + " " + strconv.Quote(pidFile) + " " + strconv.Quote(bin)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	// 100 words 200ms apart: the turn would take 20s, so the interrupt
	// lands mid-turn however slow the machine is.
	words := make([]string, 100)
	for i := range words {
		words[i] = "w" + strconv.Itoa(i+1)
	}
	cmd := exec.CommandContext(ctx, bin, "run", "--runtime", runtime, "/slow "+strings.Join(words, " "))
	cmd.Env = testEnv()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	readUntil(t, stdout, "w1 ", testTimeout) // the turn is streaming
	cmd.Process.Signal(os.Interrupt)
	rest := new(bytes.Buffer)
	rest.ReadFrom(stdout)
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("run did not exit within %s of its start, SIGINT included; stderr:\n%s", testTimeout, stderr.String())
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v, want status %d; stderr:\n%s", err, exitInterrupted, stderr.String())
	}
	wantContains(t, "stderr", stderr.String(), "interrupted while waiting for session.status idle", "shutting the runtime down")
	if strings.Contains(rest.String(), "w100") {
		t.Errorf("the turn ran to its end: %s", rest.String())
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("runtime process %d still exists after run exited (kill 0: %v)", pid, err)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// stuckRuntime is a runtime (sh) that answers initialize, then answers
// session/prompt with message m-1 after writing the frames given (none,
// or the receipt), and then sends nothing more and ignores shutdown,
// stdin EOF and SIGTERM: only SIGKILL ends it.
func stuckRuntime(beforeReply string) string {
	script := `trap '' TERM; ` +
		`idof() { printf '%s' "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }; ` +
		`read -r line; echo '{"jsonrpc":"2.0","id":'"$(idof "$line")"',"result":{"serverInfo":{"name":"stuck","version":"1"}}}'; ` +
		`read -r line; ` + beforeReply + `echo '{"jsonrpc":"2.0","id":'"$(idof "$line")"',"result":{"messageId":"m-1"}}'; ` +
		`exec sleep 1000`
	return "sh -c " + strconv.Quote(script)
}

// TestRunTimeoutSaysWhatIsAwaited: a runtime that answers the prompt but
// never sends what Run waits for is given up at --timeout, the error says
// what was awaited, and the teardown of a runtime that ignores everything
// but SIGKILL fits in the timeout too (the default ladder alone takes 16s).
func TestRunTimeoutSaysWhatIsAwaited(t *testing.T) {
	receipt := `echo '{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"x","event":{"type":"agent/inbox/spliced","seq":0,"time":0,"data":{"target":"next-turn","start":0,"inserted":[{"id":"m-1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}]}}}}'; `
	for _, c := range []struct {
		name, runtime, want string
	}{
		{"no receipt", stuckRuntime(""), "ran out waiting for the receipt of message m-1 (session.event agent/inbox/spliced inserting it into session \"x\"), after session/prompt was answered"},
		{"no idle", stuckRuntime(receipt), "ran out waiting for session.status idle for session \"x\" (the end of the turn), after session/prompt was answered"},
		{"no answer", "sh -c " + strconv.Quote("trap '' TERM; exec sleep 1000"), "ran out waiting for an answer to initialize"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each waits out its --timeout
			start := time.Now()
			r := dshrpc(t, "", "run", "--runtime", c.runtime, "--session", "x", "--timeout", "2s", "hi")
			took := time.Since(start)
			t.Logf("dshrpc run --timeout 2s took %v", took.Round(time.Millisecond))
			r.wantCode(t, exitRuntime)
			wantContains(t, "stderr", r.stderr, "dshrpc run: --timeout 2s (500ms of it kept for the teardown) "+c.want)
			if took > 10*time.Second {
				t.Errorf("dshrpc run --timeout 2s took %v: the teardown was not bounded by the timeout", took)
			}
		})
	}
}

// TestRunRendersUnstreamedMessage: a runtime that sends its answer only in
// assistant/message, with no assistant/chunk, still has it shown.
func TestRunRendersUnstreamedMessage(t *testing.T) {
	ev := func(seq int, typ, data string) string {
		return `echo '{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"x","event":{"type":"` + typ + `","seq":` + strconv.Itoa(seq) + `,"time":0,"data":` + data + `}}}'; `
	}
	script := `idof() { printf '%s' "$1" | sed 's/.*"id":\([0-9]*\).*/\1/'; }; ` +
		`read -r line; echo '{"jsonrpc":"2.0","id":'"$(idof "$line")"',"result":{"serverInfo":{"name":"plain","version":"1"}}}'; ` +
		`read -r line; ` +
		ev(0, "agent/inbox/spliced", `{"target":"next-turn","start":0,"inserted":[{"id":"m-1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}]}`) +
		`echo '{"jsonrpc":"2.0","id":'"$(idof "$line")"',"result":{"messageId":"m-1"}}'; ` +
		ev(1, "turn/start", `{"turn":1}`) +
		ev(2, "assistant/message", `{"turn":1,"step":1,"message":{"id":"a-1","role":"assistant","content":[{"type":"reasoning","text":"pondering"},{"type":"text","text":"the whole answer"}],"source":{"kind":"model","provider":"p","model":"m"}},"usage":{"inputTokens":3,"outputTokens":5}}`) +
		ev(3, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`) +
		`echo '{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"x","status":"idle"}}'; ` +
		`read -r line; echo '{"jsonrpc":"2.0","id":'"$(idof "$line")"',"result":{}}'`
	r := dshrpc(t, "", "run", "--runtime", "sh -c "+strconv.Quote(script), "--session", "x", "hi")
	r.wantCode(t, exitOK)
	want := "thinking: pondering\nthe whole answer\n── turn completed · 3 input + 5 output tokens\n"
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s\nstderr:\n%s", r.stdout, want, r.stderr)
	}
}

// TestLadderFitsTheTimeout: with --timeout, every wait of the teardown
// together fits in the share kept for it; without, the client's defaults.
func TestLadderFitsTheTimeout(t *testing.T) {
	if o := ladder(0); o.ShutdownTimeout != 0 || o.EOFGrace != 0 || o.KillGrace != 0 {
		t.Errorf("ladder(0) = %+v, want the defaults (zero options)", *o)
	}
	for _, d := range []time.Duration{time.Millisecond, time.Second, 2 * time.Second, time.Minute, time.Hour} {
		o := ladder(d)
		// shutdown, EOF grace, SIGTERM grace, SIGKILL grace, the wait for the connection
		total := o.ShutdownTimeout + o.EOFGrace + 3*o.KillGrace
		share := teardownShare(d)
		if share > d/4 || share > 4*time.Second {
			t.Errorf("teardownShare(%v) = %v, want at most a quarter, at most 4s", d, share)
		}
		if total > max(share, ladderSteps*time.Millisecond) {
			t.Errorf("ladder(%v): shutdown %v, EOF grace %v, kill grace %v: %v in all, more than the share %v",
				d, o.ShutdownTimeout, o.EOFGrace, o.KillGrace, total, share)
		}
	}
}
