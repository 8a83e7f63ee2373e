package sdktest

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/transcript"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/scripted"
)

// MaxWait bounds every wait of this package (WaitFor, and the cleanup's
// waits for the runtime and the Client to stop): a wait that reaches it
// fails the test with what it waited for rather than hanging until go
// test's -timeout. Inside a testing/synctest bubble it is measured on the
// bubble's clock, so a deadlock fails at once.
const MaxWait = time.Minute

// InitializeParams returns the params that Client and ClientWith
// initialize with: those of the recorded transcripts
// (testdata/transcripts), cwd aside.
func InitializeParams() sdkproto.InitializeParams {
	return sdkproto.InitializeParams{Cwd: "/srv/project", Provider: "deepseek-official", Model: "deepseek-v4-flash", MaxTokens: sdkproto.Tokens(4096)}
}

// Runtime is a scripted DSH runtime for one test: an sdkproto.Server with
// a scripted.Runtime that plays a Script, connected to one client, in process
// (Client, ClientWith) or as a process that a program under test starts
// (Command). It records every frame in both directions, in the order the
// runtime read or wrote them, for the assertions (Frames, Requests,
// Answers, AssertPrompted, WaitFor, Check).
//
// Its methods are safe for concurrent use; those taking a testing.TB
// report failures through it, so call them from the test's goroutine.
type Runtime struct {
	t      testing.TB
	script scripted.Script
	rec    recorder

	mu        sync.Mutex
	connected string // "", "client" or "command"
	client    *sdkproto.Client
	player    *player
	served    chan error // the in-process Serve's outcome
	past      []string   // the prompts past the script, in process: their errors and texts
	cmd       *exec.Cmd
	dir       string // the directory of the runtime's process (Command)
	frames    string // the frames file of the runtime's process
}

// NewRuntime returns a Runtime playing s for the test t, which it fails
// at once when a Turn of s was misused. Nothing is served until Client,
// ClientWith or Command connects the runtime's one client.
//
// When the test ends, a cleanup closes the Client (shutdown, as Close
// does) and checks that nothing is left running: the runtime's goroutines
// (the Server's, its connection's, the sessions' agents) must have exited
// and the Client's Close must have succeeded, within MaxWait; the test
// fails otherwise, with the stacks of every goroutine. A prompt that s
// has no turn for fails the test too, once it has ended, with its error
// (see scripted.ErrPastScript), at the line of the test that called
// NewRuntime, whether the runtime is in process or not: in process
// (Client, ClientWith), each such prompt with its text; as the process of
// Command, which answers it alike, with -32603, the error of the first
// such prompt, which the process left before answering it, so even when
// it was killed afterwards (a failure of that process's serving, or its
// crash, fails the test too; see Command).
// Inside a testing/synctest bubble, call NewRuntime in the bubble: the
// runtime's timers (scripted.Turn.Pause) then run on the bubble's clock, and the
// bubble itself checks that no goroutine outlives it.
func NewRuntime(t testing.TB, s scripted.Script) *Runtime {
	t.Helper()
	rt := &Runtime{t: t, script: s}
	if err := s.Err(); err != nil {
		t.Fatal(err)
		rt.script = scripted.Script{} // for a testing.TB whose Fatal returns
	}
	t.Cleanup(rt.cleanup)
	return rt
}

// connect claims the runtime's one connection for how; it fails the test
// and returns false when it was claimed already.
func (rt *Runtime) connect(how string) bool {
	rt.t.Helper()
	rt.mu.Lock()
	connected := rt.connected
	if connected == "" {
		rt.connected = how
	}
	rt.mu.Unlock()
	if connected != "" {
		rt.t.Fatalf("sdktest: the runtime already serves its client (%s): a Runtime serves one, connected by Client, ClientWith or Command", connected)
		return false
	}
	return true
}

// Client returns the runtime's Client: once one is connected (by Client
// or ClientWith), that one; otherwise ClientWith(nil), a Client with the
// default options, connected in process over two pipes and initialized
// with InitializeParams.
func (rt *Runtime) Client() *sdkproto.Client {
	rt.t.Helper()
	rt.mu.Lock()
	c := rt.client
	rt.mu.Unlock()
	if c != nil {
		return c
	}
	return rt.ClientWith(nil)
}

// ClientWith returns a Client made by sdkproto.NewClient with opts,
// connected to the runtime in process over two pipes, and initialized
// with InitializeParams (a test may initialize it again with params of
// its own). The test's cleanup closes it. It fails the test when the
// runtime is connected already, or when initialize fails.
func (rt *Runtime) ClientWith(opts *sdkproto.ClientOptions) *sdkproto.Client {
	rt.t.Helper()
	if !rt.connect("client") {
		return nil
	}
	played, err := scripted.NewRuntime(rt.script, &scripted.Options{PastScript: func(pr scripted.Prompt, err error) {
		rt.mu.Lock()
		rt.past = append(rt.past, fmt.Sprintf("%v: %q", err, pr.Text))
		rt.mu.Unlock()
	}})
	if err != nil { // NewRuntime failed the test with it already
		return nil
	}
	p := &player{Runtime: played}
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := sdkproto.NewServer(p, nil).Serve(context.Background(),
			&tapReader{r: c2sR, t: tap{dir: ClientToRuntime, rec: &rt.rec}},
			&tapWriter{w: s2cW, t: tap{dir: RuntimeToClient, rec: &rt.rec}})
		s2cW.Close()
		c2sR.Close()
		served <- err
	}()
	c := sdkproto.NewClient(s2cR, c2sW, opts)
	rt.mu.Lock()
	rt.client, rt.player, rt.served = c, p, served
	rt.mu.Unlock()
	if _, err := c.Initialize(context.Background(), InitializeParams()); err != nil {
		rt.t.Fatalf("sdktest: initialize: %v", err)
	}
	return c
}

// Frames returns the frames that crossed the connection so far, in the
// order the runtime read or wrote them. With Command, they are those the
// runtime's process recorded so far: all of them once it has exited.
func (rt *Runtime) Frames() []Frame {
	rt.mu.Lock()
	file := rt.frames
	rt.mu.Unlock()
	if file != "" {
		data, _ := os.ReadFile(file)
		return readTranscript(data)
	}
	frames, _ := rt.rec.snapshot()
	return frames
}

// Requests returns the requests that the client sent for method ("" for
// all), in order.
func (rt *Runtime) Requests(method string) []Request {
	return requests(rt.Frames(), ClientToRuntime, method)
}

// Answers returns the requests for method that the runtime sent the
// client (scripted.Turn.Ask), in order, with the client's answers.
func (rt *Runtime) Answers(method string) []Answer {
	return answers(rt.Frames(), method)
}

// AssertPrompted fails t unless the client sent a session/prompt whose
// text (sdkproto.FinalText of its content) is text; the failure lists the
// prompts sent.
func (rt *Runtime) AssertPrompted(t testing.TB, text string) {
	t.Helper()
	var sent []string
	for _, r := range rt.Requests(sdkproto.SessionPrompt.Name()) {
		var p sdkproto.SessionPromptParams
		if p.UnmarshalJSON(r.Params) != nil {
			continue
		}
		got := sdkproto.FinalText(p.ContentBlocks)
		if got == text {
			return
		}
		sent = append(sent, fmt.Sprintf("%q (session %s)", got, p.SessionID))
	}
	if len(sent) == 0 {
		t.Errorf("sdktest: no prompt %q: the client sent no session/prompt", text)
		return
	}
	t.Errorf("sdktest: no prompt %q; the client sent %s", text, strings.Join(sent, ", "))
}

// WaitFor waits until done reports true of the frames so far, and returns
// them; what says what the test waits for. It fails t when they have not
// within MaxWait, quoting the last frames. done is called on the test's
// goroutine after each new frame. It needs an in-process client (Client,
// ClientWith): the frames of a runtime's process are read when it has
// exited.
func (rt *Runtime) WaitFor(t testing.TB, what string, done func(frames []Frame) bool) []Frame {
	t.Helper()
	rt.mu.Lock()
	file := rt.frames
	rt.mu.Unlock()
	if file != "" {
		t.Fatalf("sdktest: WaitFor(%s): the runtime is a process (Command), whose frames are read once it has exited (Frames)", what)
		return nil
	}
	timer := time.NewTimer(MaxWait)
	defer timer.Stop()
	for {
		frames, changed := rt.rec.snapshot()
		if done(frames) {
			return frames
		}
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("sdktest: waited %v for %s; %d frames, the last ones:\n%s", MaxWait, what, len(frames), lastFrames(frames, 5))
			return frames
		}
	}
}

// lastFrames renders the last n frames, one a line.
func lastFrames(frames []Frame, n int) string {
	var b strings.Builder
	for _, f := range frames[max(0, len(frames)-n):] {
		fmt.Fprintf(&b, "  %s %s\n", f.Dir, f.Line)
	}
	return b.String()
}

// Check fails t with each problem that the transcript checker of dshrpc
// check (docs/wire.md §2-§6) finds in the frames so far: malformed
// frames, payloads that break the contract, seqs out of order,
// unanswered requests. Warnings (a seq gap, a run cut short) are logged,
// and so are the requests the script sent (scripted.Turn.Ask): the runtimes of
// the revisions read send the client none, so the checker reports them,
// but a script that asks means to.
func (rt *Runtime) Check(t testing.TB) {
	t.Helper()
	c := transcript.New(rpc.DefaultMaxFrameSize)
	report := func(fs []transcript.Finding, asked bool) {
		t.Helper()
		for _, f := range fs {
			switch {
			case f.Kind.Warning():
				t.Logf("sdktest: frame %d: %s: %s", f.Line, f.Kind, f.Message)
			case asked && f.Kind == transcript.UnknownMethod:
				t.Logf("sdktest: frame %d: a request the script asked (Turn.Ask): %s", f.Line, f.Message)
			default:
				t.Errorf("sdktest: frame %d: %s: %s", f.Line, f.Kind, f.Message)
			}
		}
	}
	for i, f := range rt.Frames() {
		e, ok := f.parse()
		asked := ok && f.Dir == RuntimeToClient && e.isRequest("")
		report(c.Frame(i+1, transcript.Dir(f.Dir), f.Line), asked)
	}
	report(c.Finish(), false)
}

// cleanup closes the Client and checks that the runtime and the Client
// stopped; it reports the prompts past the script; for Command, it
// reports the process's error and removes its directory. It is a helper:
// its failures are reported at the line of the test that called
// NewRuntime, which registered it.
func (rt *Runtime) cleanup() {
	rt.t.Helper()
	rt.mu.Lock()
	c, p, served, cmd, dir := rt.client, rt.player, rt.served, rt.cmd, rt.dir
	rt.mu.Unlock()
	if c != nil {
		if err := c.Close(); err != nil {
			rt.t.Errorf("sdktest: closing the Client: %v", err)
		}
	}
	if served != nil {
		timer := time.NewTimer(MaxWait)
		defer timer.Stop()
		select {
		case err := <-served:
			if err != nil {
				rt.t.Errorf("sdktest: the runtime's Serve: %v", err)
			}
			if conn := p.conn.Load(); conn != nil && !waitDone(conn.Wait, timer.C) {
				rt.t.Errorf("sdktest: the runtime's connection still had goroutines %v after the test ended:\n%s", MaxWait, stacks())
			}
		case <-timer.C:
			rt.t.Errorf("sdktest: the runtime had not stopped %v after the test ended (its Serve did not return):\n%s", MaxWait, stacks())
		}
	}
	rt.mu.Lock()
	past := rt.past
	rt.mu.Unlock()
	for _, p := range past {
		rt.t.Error(p)
	}
	if cmd != nil && cmd.Process != nil && cmd.ProcessState == nil {
		rt.t.Errorf("sdktest: the runtime process started with Command (pid %d) was not waited for: close the client that launched it", cmd.Process.Pid)
	}
	if dir != "" {
		var state *os.ProcessState // known when cmd itself ran
		if cmd != nil {
			state = cmd.ProcessState
		}
		rt.processCleanup(dir, state)
	}
}

// waitDone runs wait on a goroutine and reports whether it returned
// before expired fired.
func waitDone(wait func() error, expired <-chan time.Time) bool {
	done := make(chan struct{})
	go func() {
		wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-expired:
		return false
	}
}

// stacks returns the stacks of every goroutine.
func stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// player is the scripted runtime that a Runtime serves in process, with
// the connection of its latest request kept for the cleanup's leak check.
type player struct {
	*scripted.Runtime
	conn atomic.Pointer[rpc.Conn]
}

// Initialize keeps the request's connection, then lets the script's
// runtime initialize.
func (p *player) Initialize(ctx context.Context, req sdkproto.InitializeRequest) error {
	p.enter(ctx)
	return p.Runtime.Initialize(ctx, req)
}

// Prompt keeps the request's connection, then lets the script's runtime
// take the prompt.
func (p *player) Prompt(ctx context.Context, req sdkproto.PromptRequest) (sdkproto.SessionPromptResult, error) {
	p.enter(ctx)
	return p.Runtime.Prompt(ctx, req)
}

// enter keeps the connection of a request.
func (p *player) enter(ctx context.Context) {
	if c := rpc.ConnFromContext(ctx); c != nil {
		p.conn.Store(c)
	}
}
