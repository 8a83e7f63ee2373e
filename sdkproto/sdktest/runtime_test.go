package sdktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/scripted"
	"github.com/linerpc/linerpc/sdkproto/sdktest"
)

// Command needs the test binary to serve as the runtime's process.
func TestMain(m *testing.M) { sdktest.Main(m) }

// fakeTB is a testing.TB whose failures are recorded, not reported, so
// that a test can check what the kit reports; Fatal and Fatalf return.
type fakeTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) record(s string) {
	f.mu.Lock()
	f.errs = append(f.errs, s)
	f.mu.Unlock()
}
func (f *fakeTB) Error(args ...any)                 { f.record(fmt.Sprint(args...)) }
func (f *fakeTB) Errorf(format string, args ...any) { f.record(fmt.Sprintf(format, args...)) }
func (f *fakeTB) Fatal(args ...any)                 { f.record(fmt.Sprint(args...)) }
func (f *fakeTB) Fatalf(format string, args ...any) { f.record(fmt.Sprintf(format, args...)) }

// failures returns what was reported so far, one a line.
func (f *fakeTB) failures() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.errs, "\n")
}

// eventTypes returns the types of events, in order.
func eventTypes(events []sdkproto.Event) string {
	var types []string
	for _, e := range events {
		types = append(types, string(e.Type))
	}
	return strings.Join(types, " ")
}

// Pauses run on the bubble's clock: a Pause between two deltas of one
// block separates them by exactly its duration, and takes no real time.
func TestPauseOnTheTestClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{
			scripted.NewTurn().Text("Hel").Pause(90 * time.Second).Text("lo"),
		}})
		c := rt.Client()
		var at []time.Time
		var text strings.Builder
		for n, err := range c.Stream(t.Context(), "main", sdkproto.TextBlock("hi")) {
			if err != nil {
				t.Fatal(err)
			}
			if d, ok := n.TextDelta(); ok {
				at = append(at, time.Now())
				text.WriteString(d)
			}
		}
		if text.String() != "Hello" || len(at) != 2 || at[1].Sub(at[0]) != 90*time.Second {
			t.Fatalf("deltas %q at %v, want Hel and lo 90s apart", text.String(), at)
		}
	})
}

// Closing the client cuts a turn off in the middle of a pause: the
// runtime's goroutines stop, and the test ends without waiting for it.
func TestShutdownCutsAPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{
			scripted.NewTurn().Text("before").Pause(time.Hour).Text("after"),
		}})
		c := rt.Client()
		sub := c.SubscribeSessionTree("main")
		defer sub.Close()
		start := time.Now()
		if _, err := c.Prompt(t.Context(), "main", sdkproto.TextBlock("hi")); err != nil {
			t.Fatal(err)
		}
		rt.WaitFor(t, `the delta "before"`, func(frames []sdktest.Frame) bool {
			return slices.ContainsFunc(frames, func(f sdktest.Frame) bool { return strings.Contains(string(f.Line), `"text":"before"`) })
		})
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d >= time.Hour {
			t.Errorf("Close returned after %v, once the pause was over", d)
		}
		for _, f := range rt.Frames() {
			if strings.Contains(string(f.Line), `"after"`) || strings.Contains(string(f.Line), `"turn/end"`) {
				t.Errorf("sent after the shutdown began: %s", f.Line)
			}
		}
	})
}

// Prompts to a busy session queue: a receipt each, one running, then
// each turn in order, and idle once the last ends; Reply scripts each
// prompt by its text.
func TestQueuedPromptsAndReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := sdktest.NewRuntime(t, scripted.Script{Reply: func(p scripted.Prompt) *scripted.Turn {
			return scripted.NewTurn().Pause(time.Second).Text("re: " + p.Text)
		}})
		c := rt.Client()
		all := c.SubscribeSessionTree("main")
		defer all.Close()
		for _, text := range []string{"one", "two"} {
			if _, err := c.Prompt(t.Context(), "main", sdkproto.TextBlock(text)); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		idles := 0
		for idles == 0 {
			n, err := all.Next(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			switch p, _ := n.SessionEvent(); {
			case n.Method == sdkproto.SessionStatus.Name():
				s, _ := n.SessionStatus()
				got = append(got, string(s.Status))
				if s.Status == sdkproto.StatusIdle {
					idles++
				}
			case p.Event.Type == sdkproto.EventTurnStart || p.Event.Type == sdkproto.EventTurnEnd:
				got = append(got, string(p.Event.Type))
			case p.Event.Type == sdkproto.EventAgentInboxSpliced && len(p.Event.ReceiptIDs()) > 0:
				got = append(got, "receipt")
			case p.Event.Type == sdkproto.EventAssistantMessage:
				d, _ := p.Event.AssistantMessage()
				got = append(got, sdkproto.FinalText(d.Message.Content))
			}
		}
		want := "receipt running turn/start receipt re: one turn/end turn/start re: two turn/end idle"
		if strings.Join(got, " ") != want {
			t.Errorf("got %s\nwant %s", strings.Join(got, " "), want)
		}
	})
}

// Refuse answers the prompt with the runtime's error and sends nothing;
// Event and a failed model call mid-stream are played where they stand.
func TestRefuseEventAndModelError(t *testing.T) {
	t.Parallel()
	failure := sdkproto.LLMFailure{Message: "stream broke", Code: "NETWORK"}
	rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{
		scripted.Refuse("session agent was disposed outside the server: main"),
		scripted.NewTurn().Event(sdkproto.EventTodoWrite, map[string]any{"todos": []any{}}).Text("partial").ModelError(failure),
	}})
	c := rt.Client()
	_, err := c.Run(t.Context(), "main", sdkproto.TextBlock("first"))
	var re *sdkproto.ResponseError
	if !errors.As(err, &re) || re.Message != "session agent was disposed outside the server: main" {
		t.Fatalf("refused prompt: %v", err)
	}
	res, err := c.Run(t.Context(), "main", sdkproto.TextBlock("second"))
	if err != nil {
		t.Fatal(err)
	}
	want := "agent/inbox/spliced turn/start agent/inbox/spliced step/start user/message user/message session/title request/header request/context " +
		"todo/write assistant/chunk assistant/chunk assistant/chunk step/end turn/end"
	if got := eventTypes(res.Events); got != want || res.FinishReason != sdkproto.TurnError || res.FinalResponse != "" {
		t.Errorf("events %s (%s, %q)\nwant   %s", got, res.FinishReason, res.FinalResponse, want)
	}
	end, _ := res.Events[len(res.Events)-1].TurnEnd()
	if end.Reason.Error == nil || *end.Reason.Error != failure {
		t.Errorf("turn/end reason %+v", end.Reason)
	}
	rt.Check(t)
}

// The assertions: Requests, AssertPrompted (and its failure), Check (which
// does not fail on the request the script asked).
func TestAssertions(t *testing.T) {
	t.Parallel()
	rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{
		scripted.NewTurn().Ask("approval/request", map[string]string{"tool": "bash"}).Text("ok"),
	}})
	c := rt.Client()
	if _, err := c.Run(t.Context(), "s1", sdkproto.TextBlock("summarise"), sdkproto.TextBlock(" this")); err != nil {
		t.Fatal(err)
	}
	if got := rt.Requests(""); len(got) != 2 || got[0].Method != "initialize" || got[1].Method != "session/prompt" {
		t.Errorf("requests %v", got)
	}
	rt.AssertPrompted(t, "summarise this")

	fake := &fakeTB{TB: t}
	rt.AssertPrompted(fake, "something else")
	rt.Check(fake)
	if got, want := fake.failures(), `no prompt "something else"; the client sent "summarise this" (session s1)`; !strings.Contains(got, want) || strings.Contains(got, "unknown-method") {
		t.Errorf("failures:\n%s\nwant %s, and no unknown-method", got, want)
	}
	// The default client answered the runtime's request as the TypeScript
	// client does.
	a := rt.Answers("approval/request")
	if len(a) != 1 || a[0].Error == nil || a[0].Error.Code != -32601 || a[0].Error.Message != "method not found: approval/request" ||
		string(a[0].Params) != `{"tool":"bash"}` {
		t.Errorf("answers %+v", a)
	}
}

// WaitFor fails, after MaxWait on the bubble's clock, with what it waited
// for and the last frames.
func TestWaitForFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := sdktest.NewRuntime(t, scripted.Script{})
		rt.Client()
		fake := &fakeTB{TB: t}
		start := time.Now()
		rt.WaitFor(fake, "a frame that never comes", func([]sdktest.Frame) bool { return false })
		if d := time.Since(start); d != sdktest.MaxWait {
			t.Errorf("waited %v, want MaxWait", d)
		}
		if got := fake.failures(); !strings.Contains(got, "waited 1m0s for a frame that never comes; 2 frames, the last ones:") ||
			!strings.Contains(got, `"serverInfo"`) {
			t.Errorf("failure: %s", got)
		}
	})
}

// A misused Turn and a second client fail the test at once, and a prompt
// past the script once the test has ended (the Runtime's cleanup), each
// saying what is wrong; the prompt is numbered from 1.
func TestMisuseFails(t *testing.T) {
	t.Parallel()
	fake := &fakeTB{TB: t}
	const past = `scripted: no turn scripted for prompt 2 (session main), past the script's 1 turn: "b"`
	t.Cleanup(func() { // runs after the Runtime's cleanup
		if got := fake.failures(); !strings.Contains(got, past) {
			t.Errorf("failures once the test ended:\n%s\nwant %s", got, past)
		}
	})
	sdktest.NewRuntime(fake, scripted.Script{Turns: []*scripted.Turn{scripted.NewTurn().MaxTokens().Text("late")}})
	sdktest.NewRuntime(fake, scripted.Script{Turns: []*scripted.Turn{scripted.NewTurn().Subagent("x", "y", scripted.Refuse("no"))}})
	sdktest.NewRuntime(fake, scripted.Script{Turns: []*scripted.Turn{scripted.NewTurn().Ask("m", func() {})}})
	rt := sdktest.NewRuntime(fake, scripted.Script{Turns: []*scripted.Turn{scripted.NewTurn().Text("only")}})
	c := rt.Client()
	rt.Client()
	rt.ClientWith(nil)
	if _, err := c.Run(t.Context(), "main", sdkproto.TextBlock("a")); err != nil {
		t.Fatal(err)
	}
	_, err := c.Prompt(t.Context(), "main", sdkproto.TextBlock("b"))
	var re *sdkproto.ResponseError
	if !errors.As(err, &re) || re.Code != -32603 || re.Message != "scripted: no turn scripted for prompt 2 (session main), past the script's 1 turn" {
		t.Errorf("unscripted prompt: %v", err)
	}
	got := fake.failures()
	for _, want := range []string{
		"Script.Turns[0]: scripted: text after the turn ended",
		"Script.Turns[0]: scripted: a Subagent's child turn cannot Refuse",
		`Script.Turns[0]: scripted: Ask("m"): the params do not encode`,
		"sdktest: the runtime already serves its client (client)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("failures:\n%s\nwant %s", got, want)
		}
	}
	if strings.Contains(got, "no turn scripted") {
		t.Errorf("the prompt past the script was reported before the test ended:\n%s", got)
	}
}

// The cleanup's leak check fails a test whose runtime does not stop: here
// a Reply that never returns holds a handler of the runtime's connection,
// and the shutdown and the end of the input behind it in the line, so
// that Serve does not return; the report shows the goroutines left.
func TestLeakCheckFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := &fakeTB{TB: t}
		release := make(chan struct{})
		t.Cleanup(func() { // runs after the Runtime's cleanup
			close(release)
			if got := fake.failures(); !strings.Contains(got, "the runtime had not stopped 1m0s after the test ended (its Serve did not return)") ||
				!strings.Contains(got, "scripted.(*Runtime).turnFor") {
				t.Errorf("cleanup reported %q, want the goroutines left", got)
			}
		})
		rt := sdktest.NewRuntime(fake, scripted.Script{Reply: func(scripted.Prompt) *scripted.Turn {
			<-release
			return scripted.NewTurn()
		}})
		c := rt.Client()
		go c.Prompt(context.Background(), "main", sdkproto.TextBlock("stuck"))
		synctest.Wait()
	})
}

// Through a process: a program that launches its runtime gets the scripted
// one from Command, the frames are recorded in the process, and the test
// asserts on them once the program closed its client.
func TestCommand(t *testing.T) {
	t.Parallel()
	rt := sdktest.NewRuntime(t, scripted.Script{Turns: []*scripted.Turn{
		scripted.NewTurn().Reasoning("hm").Text("hello"),
		scripted.NewTurn().Subagent("greet", "say hi", scripted.NewTurn().Text("hi")).Text("child said hi"),
	}})
	c := launch(t, rt, nil)
	var finals []string
	for _, prompt := range []string{"hi", "delegate"} {
		res, err := c.Run(t.Context(), "main", sdkproto.TextBlock(prompt))
		if err != nil {
			t.Fatal(err)
		}
		finals = append(finals, res.FinalResponse)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if st := c.ProcessState(); st == nil || st.ExitCode() != 0 {
		t.Errorf("the runtime's process ended with %v, want exit 0", st)
	}
	if strings.Join(finals, "|") != "hello|child said hi" {
		t.Errorf("final responses %q", finals)
	}
	rt.AssertPrompted(t, "delegate")
	rt.Check(t)
	frames := rt.Frames()
	if last := frames[len(frames)-1]; last.Dir != sdktest.RuntimeToClient || string(last.Line) != `{"jsonrpc":"2.0","id":4,"result":{}}` {
		t.Errorf("last frame %s, want the shutdown result", last)
	}
}

// The frames of Command's process are complete only after it exited, so
// WaitFor refuses it; Reply cannot cross to a process.
func TestCommandMisuse(t *testing.T) {
	t.Parallel()
	fake := &fakeTB{TB: t}
	rt := sdktest.NewRuntime(fake, scripted.Script{Reply: func(scripted.Prompt) *scripted.Turn { return nil }})
	if rt.Command() != nil {
		t.Error("Command with Reply returned a command")
	}
	rt = sdktest.NewRuntime(fake, scripted.Script{})
	cmd := rt.Command()
	rt.WaitFor(fake, "anything", func([]sdktest.Frame) bool { return true })
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	defer cmd.Wait()
	got := fake.failures()
	for _, want := range []string{
		"Script.Reply cannot cross to a process",
		"WaitFor(anything): the runtime is a process (Command)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("failures:\n%s\nwant %s", got, want)
		}
	}
}

// The test binary started with a bad runtime directory exits 1 and says why.
func TestCommandBadScript(t *testing.T) {
	t.Parallel()
	rt := sdktest.NewRuntime(t, scripted.Script{})
	cmd := rt.Command()
	cmd.Args[1] += "/missing"
	out, err := cmd.CombinedOutput()
	var ee interface{ ExitCode() int }
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "sdktest runtime: ") {
		t.Errorf("exit %v, output %q", err, out)
	}
}

// Frame renders as a line of a transcript.
func TestFrameString(t *testing.T) {
	f := sdktest.Frame{Dir: sdktest.ClientToRuntime, Line: []byte(`{"jsonrpc":"2.0","method":"x"}`)}
	var l struct{ Dir, Frame string }
	if err := json.Unmarshal([]byte(f.String()), &l); err != nil || l.Dir != "c2s" || l.Frame != string(f.Line) {
		t.Errorf("%s", f)
	}
}

// launch launches the runtime's process with opts, initializes it, and
// closes it when the test ends (Close may be called before).
func launch(t *testing.T, rt *sdktest.Runtime, opts *sdkproto.ClientOptions) *sdkproto.Client {
	t.Helper()
	c, err := sdkproto.Launch(rt.Command(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(t.Context(), sdktest.InitializeParams()); err != nil {
		t.Fatal(err)
	}
	return c
}
