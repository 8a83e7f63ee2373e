package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/sdkproto"
)

const runUsage = `Usage: dshrpc run [flags] PROMPT...

Start a runtime, initialize it, send PROMPT (the arguments joined with
spaces; "-" reads it from stdin) and render the turn as it streams: the
assistant's text as it arrives, reasoning dimmed, tool calls and results as
one-line summaries, subagent runs indented under their parent, and a final
line with the turn-end reason and token usage. Flags may follow the prompt.

Without --runtime the built-in demo runtime runs in-process (no model, no
network; see 'dshrpc serve-demo -h' for its /think, /tool, /subagent, /fail
and /slow commands).

Flags:
  --runtime "CMD ARGS..."  the runtime command line, started as a child
                           (words split like a shell: quotes and backslashes)
  --session ID             session id (default: a fresh session-<32 hex>)
  --cwd DIR                workspace directory sent in initialize, made absolute
                           (default: the current directory)
  --provider P             provider route (default deepseek-official)
  --model M                model id (default deepseek-v4-flash)
  --max-tokens N           per-request output-token cap, 1 to 2^53-1
                           (default: none sent; 0 and negatives are refused)
  --reasoning-effort E     reasoning effort, e.g. off, low, high, max
  --image FILE             attach an image (png, jpeg, webp, gif); repeatable
  --json                   print the turn's notifications as JSON-RPC frames
                           (NDJSON, params exactly as received) instead
  --no-color               no ANSI colour even on a terminal (NO_COLOR works too)
  --timeout D              the whole run, teardown included, ends within D,
                           e.g. 2m (default: no limit); see below
  --stderr                 copy the runtime's stderr to ours (default: only
                           its last lines, when it fails)
  --demo-delay D           pause between the demo's streamed words (default 20ms)

A flag given an empty value is a usage error, not its default: leave the
flag out for that.

Ctrl-C stops waiting and tears the runtime down: shutdown, close its stdin,
SIGTERM, SIGKILL, each step bounded (at most 16s in all).

With --timeout D, the turn may take D less the teardown's share (a quarter
of D, at most 4s), and the teardown steps share what is left, so that the
runtime is gone by D. When the time runs out, the error says what was
awaited: the answer to initialize or session/prompt, the prompt's receipt,
or the session's idle status (the end of the turn).

Exit status: 0 the turn completed; 1 it ended otherwise (error, max-tokens,
aborted, ...); 2 usage error (bad flag, unreadable or unsupported image);
3 the runtime failed (missing binary, died, refused a request); 130 Ctrl-C.
`

// runOptions are the parsed flags of run.
type runOptions struct {
	runtime, session, cwd   string
	provider, model, effort string
	maxTokens               int64
	maxTokensSet            bool
	images                  stringList
	json, noColor, stderr   bool
	timeout, demoDelay      time.Duration
	prompt                  string
	blocks                  []sdkproto.ContentBlock
	runtimeArgv             []string
	stderrTail              *lines.Tail // the runtime child's, set by start
}

func runCmd(e *env, args []string) int {
	var o runOptions
	fs := newFlagSet("run")
	fs.StringVar(&o.runtime, "runtime", "", "")
	fs.StringVar(&o.session, "session", "", "")
	fs.StringVar(&o.cwd, "cwd", "", "")
	fs.StringVar(&o.provider, "provider", "deepseek-official", "")
	fs.StringVar(&o.model, "model", "deepseek-v4-flash", "")
	fs.Int64Var(&o.maxTokens, "max-tokens", 0, "")
	fs.StringVar(&o.effort, "reasoning-effort", "", "")
	fs.Var(&o.images, "image", "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.BoolVar(&o.noColor, "no-color", false, "")
	fs.BoolVar(&o.stderr, "stderr", false, "")
	fs.DurationVar(&o.timeout, "timeout", 0, "")
	fs.DurationVar(&o.demoDelay, "demo-delay", 20*time.Millisecond, "")
	pos, code, err := parseArgs(e, "run", runUsage, fs, args, true)
	if err != nil {
		return code
	}
	var emptyErr error
	fs.Visit(func(f *flag.Flag) {
		o.maxTokensSet = o.maxTokensSet || f.Name == "max-tokens"
		if leaveOut, ok := emptyRefused[f.Name]; ok && emptyErr == nil && f.Value.String() == "" {
			emptyErr = fmt.Errorf("--%s must not be empty; leave it out %s", f.Name, leaveOut)
		}
	})
	if emptyErr != nil {
		return usageError(e, "run", emptyErr)
	}
	if err := o.complete(e, pos); err != nil {
		return usageError(e, "run", err)
	}
	return o.run(e)
}

// emptyRefused are the flags of run whose empty value is a usage error
// rather than their default, with what leaving them out gives: a script
// whose variable is unset ("--runtime $DSH") must not be served the demo.
var emptyRefused = map[string]string{
	"runtime":          "for the built-in demo",
	"session":          "for a fresh session id",
	"cwd":              "for the current directory",
	"provider":         "for deepseek-official",
	"model":            "for deepseek-v4-flash",
	"reasoning-effort": "to send none",
}

// complete checks the flags and arguments and loads what they name
// (prompt, images, cwd, runtime command line); every error is a usage
// error, found before anything is started.
func (o *runOptions) complete(e *env, pos []string) error {
	o.prompt = strings.Join(pos, " ")
	if len(pos) == 1 && pos[0] == "-" {
		b, err := io.ReadAll(e.stdin)
		if err != nil {
			return fmt.Errorf("reading the prompt from stdin: %w", err)
		}
		o.prompt = strings.TrimRight(string(b), "\r\n")
	}
	if strings.TrimSpace(o.prompt) == "" {
		return errors.New("missing PROMPT")
	}
	if o.maxTokensSet && (o.maxTokens < 1 || o.maxTokens > 1<<53-1) {
		return fmt.Errorf("--max-tokens must be a positive integer (1 to 2^53-1), not %d; leave it out to send none", o.maxTokens)
	}
	if o.timeout < 0 {
		return fmt.Errorf("--timeout must not be negative, not %s; leave it out for no limit", o.timeout)
	}
	if o.demoDelay < 0 {
		return fmt.Errorf("--demo-delay must not be negative, not %s", o.demoDelay)
	}
	if o.runtime != "" {
		argv, err := splitWords(o.runtime)
		if err != nil {
			return fmt.Errorf("--runtime: %w", err)
		}
		if len(argv) == 0 {
			return errors.New("--runtime: empty command line")
		}
		o.runtimeArgv = argv
	}
	if o.cwd == "" {
		o.cwd = "."
	}
	// Sent absolute, as both upstream clients send it: the runtime
	// resolves a relative cwd against its own working directory, which a
	// wrapper script may have changed (docs/wire.md §3.1).
	abs, err := filepath.Abs(o.cwd)
	if err != nil {
		return fmt.Errorf("--cwd: %w", err)
	}
	if st, err := os.Stat(abs); err != nil {
		return fmt.Errorf("--cwd: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("--cwd %s: not a directory", o.cwd)
	}
	o.cwd = abs
	if o.session == "" {
		// A fresh id per run, as upstream's DeepSeekHarness mints them: the
		// real runtime refuses to create a session that has a log on disk.
		var b [16]byte
		rand.Read(b[:])
		o.session = "session-" + hex.EncodeToString(b[:])
	}
	o.blocks = []sdkproto.ContentBlock{sdkproto.TextBlock(o.prompt)}
	for _, path := range o.images {
		if path == "" {
			return errors.New("--image must not be empty; leave it out to attach none")
		}
		b, err := loadImage(path)
		if err != nil {
			return err
		}
		o.blocks = append(o.blocks, b)
	}
	return nil
}

// loadImage reads an --image file and checks its type from its bytes
// (not its name), so that the runtime is never sent what it would refuse.
func loadImage(path string) (sdkproto.ContentBlock, error) {
	accepted := strings.Join(sdkproto.DefaultMediaTypes, ", ")
	data, err := os.ReadFile(path)
	if err != nil {
		return sdkproto.ContentBlock{}, fmt.Errorf("--image: cannot read %s: %w (accepted types: %s)", path, errors.Unwrap(err), accepted)
	}
	if len(data) == 0 {
		return sdkproto.ContentBlock{}, fmt.Errorf("--image %s: the file is empty (accepted types: %s)", path, accepted)
	}
	mime := sniffImage(data)
	if !slices.Contains(sdkproto.DefaultMediaTypes, mime) {
		return sdkproto.ContentBlock{}, fmt.Errorf("--image %s: unsupported type %s (accepted types: %s)", path, strings.Split(mime, ";")[0], accepted)
	}
	return sdkproto.ImageUpload(mime, data), nil
}

// run starts the runtime, initializes it, runs the turn and tears down.
func (o *runOptions) run(e *env) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.timeout-teardownShare(o.timeout), errTimedOut)
		defer cancel()
	}

	client, wait, err := o.start(e)
	if err != nil {
		fmt.Fprintf(e.stderr, "dshrpc run: %v\n", err)
		return exitRuntime
	}
	// closeRuntime runs the client's teardown ladder once, and waits for an
	// in-process demo to stop.
	var closeOnce sync.Once
	closeRuntime := func() {
		closeOnce.Do(func() {
			if err := client.Close(); err != nil {
				fmt.Fprintf(e.stderr, "dshrpc run: teardown: %v\n", err)
			}
			if wait != nil {
				wait()
			}
		})
	}
	defer closeRuntime()

	params := sdkproto.InitializeParams{Cwd: o.cwd, Provider: o.provider, Model: o.model}
	if o.maxTokensSet {
		params.MaxTokens = sdkproto.Tokens(o.maxTokens)
	}
	if o.effort != "" {
		params.ReasoningEffort = sdkproto.Effort(o.effort)
	}
	if _, err := client.Initialize(ctx, params); err != nil {
		return o.fail(e, ctx, "initialize", err, client, closeRuntime)
	}

	color, width := outputStyle(e, o.noColor)
	r := newRenderer(e.stdout, color, width, o.session, client.ParentOf)
	each := func(n sdkproto.Notification) error { r.notification(n); return nil }
	if o.json {
		fw := frameWriter{e.stdout}
		each = fw.notification
	}
	res, err := client.RunFunc(ctx, o.session, each, o.blocks...)
	if err != nil {
		if !o.json {
			r.out.endLine()
		}
		return o.fail(e, ctx, "prompt", err, client, closeRuntime)
	}
	if !o.json {
		r.finish()
	}
	if res.FinishReason != sdkproto.TurnCompleted {
		return exitFailed
	}
	return exitOK
}

// errTimedOut is the cause of a context ended by --timeout.
var errTimedOut = errors.New("timed out")

// The teardown ladder of a run without --timeout: the client's defaults.
// ladderSteps is how many waits it has at most: the shutdown request, the
// grace after closing stdin, after SIGTERM, after SIGKILL, and the wait
// for the connection's goroutines.
const ladderSteps = 5

// teardownShare is the part of --timeout d kept for the teardown: a
// quarter, at most 4s.
func teardownShare(d time.Duration) time.Duration {
	return min(d/4, 4*time.Second)
}

// ladder returns the client options of the teardown: the defaults, or,
// with --timeout d, each wait cut so that all of them fit in
// teardownShare(d).
func ladder(d time.Duration) *sdkproto.ClientOptions {
	if d <= 0 {
		return &sdkproto.ClientOptions{}
	}
	step := max(teardownShare(d)/ladderSteps, time.Millisecond)
	return &sdkproto.ClientOptions{
		ShutdownTimeout: min(step, sdkproto.DefaultShutdownTimeout),
		EOFGrace:        min(step, sdkproto.DefaultEOFGrace),
		KillGrace:       min(step, sdkproto.DefaultKillGrace),
	}
}

// fail reports an error of step (initialize or prompt) and returns the
// exit status: Ctrl-C, the timeout, or a failed runtime.
func (o *runOptions) fail(e *env, ctx context.Context, step string, err error, client *sdkproto.Client, closeRuntime func()) int {
	awaited := "an answer to " + step
	if step == "prompt" {
		awaited = "an answer to session/prompt"
	}
	var wait *sdkproto.RunWaitError
	if errors.As(err, &wait) {
		awaited = wait.Awaited() + ", after session/prompt was answered"
	}
	switch {
	case errors.Is(context.Cause(ctx), errTimedOut):
		fmt.Fprintf(e.stderr, "dshrpc run: --timeout %s (%s of it kept for the teardown) ran out waiting for %s; shutting the runtime down\n",
			o.timeout, teardownShare(o.timeout), awaited)
		return exitRuntime
	case ctx.Err() != nil:
		fmt.Fprintf(e.stderr, "dshrpc run: interrupted while waiting for %s; shutting the runtime down\n", awaited)
		return exitInterrupted
	}
	var closed *sdkproto.TransportClosedError
	var resp *sdkproto.ResponseError
	switch {
	case errors.As(err, &closed):
		// The error's own stderr tail is taken as soon as the exit is seen,
		// which can be before the last lines were read from the pipe; after
		// Close the reader has drained it, so report from our copy then.
		closeRuntime()
		what, status := "closed its output", ""
		if st := client.ProcessState(); st != nil {
			what = "exited"
			status = "\n" + exitStatus(st)
		} else if closed.Exited {
			what = "exited"
		}
		msg := "dshrpc run: the runtime " + what + " during " + step + ": " + closed.Cause.Error() + status
		if tail := o.stderrTail.Lines(); len(tail) > 0 {
			msg += "\nstderr tail:\n" + indentLines(strings.Join(tail, "\n"))
		}
		fmt.Fprintln(e.stderr, msg)
	case errors.As(err, &resp):
		fmt.Fprintf(e.stderr, "dshrpc run: the runtime refused %s: %s (code %d)\n", step, resp.Message, resp.Code)
	default:
		fmt.Fprintf(e.stderr, "dshrpc run: %s: %v\n", step, err)
	}
	return exitRuntime
}

// exitStatus describes how a process ended.
func exitStatus(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal: " + ws.Signal().String()
	}
	return "exit code: " + strconv.Itoa(st.ExitCode())
}

// tailLines is how many stderr lines a failure shows: enough for a stack
// trace's top, few enough to keep the error readable.
const tailLines = 20

func indentLines(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// start starts the runtime: the command of --runtime as a child, or the
// demo in-process (wait then returns once the demo stopped).
func (o *runOptions) start(e *env) (client *sdkproto.Client, wait func() error, err error) {
	opts := ladder(o.timeout)
	o.stderrTail = lines.NewTail(tailLines)
	if o.runtimeArgv == nil {
		r, w, wait := serveInProcess(o.demoDelay)
		return sdkproto.NewClient(r, w, opts), wait, nil
	}
	cmd := exec.Command(o.runtimeArgv[0], o.runtimeArgv[1:]...)
	cmd.Stderr = o.stderrTail
	if o.stderr {
		cmd.Stderr = io.MultiWriter(o.stderrTail, e.stderr)
	}
	client, err = sdkproto.Launch(cmd, opts)
	if err != nil {
		var closed *sdkproto.TransportClosedError
		if errors.As(err, &closed) && errors.Is(err, exec.ErrNotFound) {
			return nil, nil, fmt.Errorf("cannot start the runtime: %q not found (is it installed and on $PATH?)", o.runtimeArgv[0])
		}
		return nil, nil, fmt.Errorf("cannot start the runtime %q: %w", o.runtimeArgv[0], err)
	}
	return client, nil, nil
}

// splitWords splits a command line into words as a POSIX shell would
// without expansions: blanks separate words, single quotes keep
// everything literally, double quotes keep all but backslash escapes of
// " \\ $ and `, and a backslash outside quotes escapes the next character.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
			inWord = true
		case c == '\\':
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
