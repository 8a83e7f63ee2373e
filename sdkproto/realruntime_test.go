package sdkproto_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/fakemodel"
	"github.com/linerpc/linerpc/internal/peers"
	"github.com/linerpc/linerpc/internal/realruntime"
	"github.com/linerpc/linerpc/sdkproto"
)

// The Go client driving the REAL DSH runtime (realruntime/) against a fake
// model on 127.0.0.1. Each scenario has its own runtime process and runs
// in parallel. They skip when the runtime is not installed (`make
// realruntime`), or fail when LINERPC_REQUIRE_PEERS=1 (internal/peers).

const rrWait = 60 * time.Second // failure bound of a scenario's waits

type rrRuntime struct {
	t    *testing.T
	c    *sdkproto.Client
	work string
	all  *sdkproto.Subscription
	mu   sync.Mutex
	seen []sdkproto.Notification
	done chan struct{}
}

// startReal launches a real runtime talking to fake, initializes it, and
// checks at cleanup that every notification it sent decodes and
// re-encodes to its exact bytes, and that Close reaps it.
func startReal(t *testing.T, fake *fakemodel.Server, maxTokens int64) *rrRuntime {
	t.Helper()
	peers.Missing(t, realruntime.Available())
	t.Cleanup(fake.Close)
	cmd := realruntime.Command(fake.URL(), t.TempDir())
	c, err := sdkproto.Launch(cmd, &sdkproto.ClientOptions{RequestTimeout: 30 * time.Second, EOFGrace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := &rrRuntime{t: t, c: c, work: t.TempDir(), all: c.Subscribe(nil), done: make(chan struct{})}
	go r.collect()
	t.Cleanup(func() {
		start := time.Now()
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if c.ProcessState() == nil {
			t.Errorf("runtime not reaped by Close")
		}
		<-r.done
		t.Logf("Close took %v; %d notifications", time.Since(start).Round(time.Millisecond), len(r.seen))
		r.checkLossless()
	})
	params := sdkproto.InitializeParams{Cwd: r.work, Provider: "deepseek-official", Model: "deepseek-v4-flash", MaxTokens: sdkproto.Tokens(maxTokens)}
	res, err := c.Initialize(r.ctx(), params)
	if err != nil || res.ServerInfo.Name != sdkproto.ServerName {
		t.Fatalf("initialize: %+v, %v", res, err)
	}
	return r
}

func (r *rrRuntime) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), rrWait)
	r.t.Cleanup(cancel)
	return ctx
}

// collect keeps every notification until the client is closed.
func (r *rrRuntime) collect() {
	defer close(r.done)
	for n, err := range r.all.All(context.Background()) {
		if err != nil {
			return
		}
		r.mu.Lock()
		r.seen = append(r.seen, n)
		r.mu.Unlock()
	}
}

// checkLossless decodes every notification with its typed params and
// compares the re-encoding with the bytes received. It calls MarshalJSON
// directly: json.Marshal would HTML-escape <, > and & in the output, an
// equivalent but different spelling (the runtime writes them raw).
func (r *rrRuntime) checkLossless() {
	for _, n := range r.seen {
		var enc []byte
		var err error
		switch n.Method {
		case sdkproto.SessionEvent.Name():
			p, e := n.SessionEvent()
			if e == nil && p.CheckEnvelope() != nil {
				e = p.CheckEnvelope()
			}
			err = e
			enc, _ = p.MarshalJSON()
		case sdkproto.SessionStatus.Name():
			p, e := n.SessionStatus()
			err, enc = e, must(p.MarshalJSON())
		case sdkproto.SubagentStarted.Name():
			p, e := n.SubagentStarted()
			err, enc = e, must(p.MarshalJSON())
		case sdkproto.SubagentFinished.Name():
			p, e := n.SubagentFinished()
			err, enc = e, must(p.MarshalJSON())
		default:
			r.t.Errorf("unknown notification method %s", n.Method)
			continue
		}
		if err != nil || string(enc) != string(n.Params) {
			i := 0
			for i < len(enc) && i < len(n.Params) && enc[i] == n.Params[i] {
				i++
			}
			from := max(i-80, 0)
			r.t.Errorf("%s does not round-trip (%v) at byte %d:\n got …%s\nwant …%s", n.Method, err, i,
				enc[from:min(i+80, len(enc))], n.Params[from:min(i+80, len(n.Params))])
		}
	}
}

func must(b []byte, _ error) []byte { return b }

func rrEventTypes(res *sdkproto.RunResult) []string {
	var out []string
	for _, e := range res.Events {
		out = append(out, string(e.Type))
	}
	return out
}

func TestRealRuntime(t *testing.T) {
	t.Parallel()
	t.Run("text-turn", func(t *testing.T) {
		t.Parallel()
		r := startReal(t, fakemodel.New(fakemodel.Text("hello from the fake model")), 4096)
		var deltas strings.Builder
		res, err := r.c.RunFunc(r.ctx(), "main", func(n sdkproto.Notification) error {
			if d, ok := n.TextDelta(); ok {
				deltas.WriteString(d)
			}
			return nil
		}, sdkproto.TextBlock("say hi"))
		if err != nil {
			t.Fatal(err)
		}
		if res.FinalResponse != "hello from the fake model" || deltas.String() != res.FinalResponse || res.FinishReason != sdkproto.TurnCompleted {
			t.Errorf("final %q deltas %q reason %q", res.FinalResponse, deltas.String(), res.FinishReason)
		}
		if types := rrEventTypes(res); types[0] != "agent/inbox/spliced" || types[len(types)-1] != "turn/end" {
			t.Errorf("events %v", types)
		}
	})
	t.Run("reasoning-turn", func(t *testing.T) {
		t.Parallel()
		r := startReal(t, fakemodel.New(fakemodel.Reasoning("let me think", "the answer")), 4096)
		res, err := r.c.Run(r.ctx(), "main", sdkproto.TextBlock("think first"))
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(res.Events, func(e sdkproto.Event) bool { return e.Type == sdkproto.EventAssistantMessage })
		d, err := res.Events[i].AssistantMessage()
		if err != nil || len(d.Message.Content) != 2 || d.Message.Content[0].Kind() != sdkproto.KindReasoning ||
			d.Message.Content[0].Text != "let me think" || res.FinalResponse != "the answer" {
			t.Errorf("assistant message %+v, final %q (%v)", d.Message.Content, res.FinalResponse, err)
		}
	})
	t.Run("tool-call", func(t *testing.T) {
		t.Parallel()
		r := startReal(t, fakemodel.New(
			fakemodel.ToolCall("call-1", "bash", `{"command":"echo hi","description":"print hi"}`),
			fakemodel.Text("the command printed hi")), 4096)
		res, err := r.c.Run(r.ctx(), "main", sdkproto.TextBlock("run echo hi"))
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(res.Events, func(e sdkproto.Event) bool { return e.Type == sdkproto.EventToolResult })
		if i < 0 {
			t.Fatalf("no tool/result in %v", rrEventTypes(res))
		}
		tr, err := res.Events[i].ToolResult()
		if err != nil || len(tr.Message.Content) != 1 || sdkproto.FinalText(tr.Message.Content[0].Content) != "hi\n" {
			t.Errorf("tool result %+v (%v)", tr.Message.Content, err)
		}
		if res.FinalResponse != "the command printed hi" {
			t.Errorf("final %q", res.FinalResponse)
		}
	})
	t.Run("subagent", func(t *testing.T) {
		t.Parallel()
		const args = `{"description":"say hi","prompt":"Reply with the word hi.","run_in_background":false}`
		r := startReal(t, fakemodel.NewChooser(func(req fakemodel.Request) fakemodel.Reply {
			switch {
			case req.Header.Get("X-Deepseek-Harness-Session-Id") != "main":
				return fakemodel.Text("hi from the child")
			case req.Chat.LastMessage().Role == "tool":
				return fakemodel.Text("the child said hi")
			default:
				return fakemodel.ToolCall("call-sub", "subagent", args)
			}
		}), 4096)
		res, err := r.c.Run(r.ctx(), "main", sdkproto.TextBlock("delegate a greeting"))
		if err != nil {
			t.Fatal(err)
		}
		var child string
		var finished *sdkproto.SubagentFinishedParams
		childEvents := 0
		for _, n := range res.Notifications {
			if s, err := n.SubagentStarted(); err == nil {
				child = s.ChildSessionID
			}
			if f, err := n.SubagentFinished(); err == nil {
				finished = &f
			}
			if sid, _ := n.SessionID(); sid == child && child != "" && n.Method == "session.event" {
				childEvents++
			}
		}
		if child == "" || childEvents == 0 || finished == nil || finished.Status != sdkproto.RunOK ||
			sdkproto.FinalText(finished.LastAssistantMessage) != "hi from the child" {
			t.Errorf("child %q with %d events, finished %v", child, childEvents, finished != nil)
		}
		if parent, ok := r.c.ParentOf(child); !ok || parent != "main" {
			t.Errorf("ParentOf(%q) = %q", child, parent)
		}
		if res.FinalResponse != "the child said hi" {
			t.Errorf("final %q", res.FinalResponse)
		}
	})
	t.Run("max-tokens", func(t *testing.T) {
		t.Parallel()
		r := startReal(t, fakemodel.New(fakemodel.MaxTokens("a partial")), 16)
		res, err := r.c.Run(r.ctx(), "main", sdkproto.TextBlock("write a long essay"))
		if err != nil {
			t.Fatal(err)
		}
		if res.FinishReason != sdkproto.TurnMaxTokens || res.FinalResponse != "a partial" {
			t.Errorf("reason %q final %q", res.FinishReason, res.FinalResponse)
		}
	})
	t.Run("model-error", func(t *testing.T) {
		t.Parallel()
		r := startReal(t, fakemodel.New(fakemodel.Error(400, "bad request from the fake", "invalid_request_error")), 4096)
		res, err := r.c.Run(r.ctx(), "main", sdkproto.TextBlock("this will fail"))
		if err != nil {
			t.Fatal(err)
		}
		end, err := res.Events[len(res.Events)-1].TurnEnd()
		if res.FinishReason != sdkproto.TurnError || err != nil || end.Reason.Error == nil ||
			end.Reason.Error.Message != "bad request from the fake" || res.FinalResponse != "" {
			t.Errorf("reason %q, turn/end %+v (%v), final %q", res.FinishReason, end, err, res.FinalResponse)
		}
	})
	t.Run("two-sessions", func(t *testing.T) {
		t.Parallel()
		r := startReal(t, fakemodel.NewChooser(func(req fakemodel.Request) fakemodel.Reply {
			return fakemodel.Text("answer for " + req.Header.Get("X-Deepseek-Harness-Session-Id"))
		}), 4096)
		var wg sync.WaitGroup
		for _, s := range []string{"s1", "s2"} {
			wg.Go(func() {
				res, err := r.c.Run(r.ctx(), s, sdkproto.TextBlock("question "+s))
				if err != nil {
					t.Error(err)
					return
				}
				if res.FinalResponse != "answer for "+s {
					t.Errorf("%s: final %q", s, res.FinalResponse)
				}
				for _, n := range res.Notifications {
					if sid, _ := n.SessionID(); sid != s {
						t.Errorf("%s collected a notification of %s", s, sid)
					}
				}
			})
		}
		wg.Wait()
	})
	t.Run("shutdown-mid-turn", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		defer close(release)
		r := startReal(t, fakemodel.New(fakemodel.Text("a slow streaming answer").StallUntil(release)), 4096)
		firstDelta := make(chan struct{})
		var once sync.Once
		runErr := make(chan error, 1)
		go func() {
			_, err := r.c.RunFunc(r.ctx(), "main", func(n sdkproto.Notification) error {
				if _, ok := n.TextDelta(); ok {
					once.Do(func() { close(firstDelta) })
				}
				return nil
			}, sdkproto.TextBlock("answer slowly"))
			runErr <- err
		}()
		select {
		case <-firstDelta:
		case <-time.After(rrWait):
			t.Fatal("no text delta")
		}
		if err := r.c.Shutdown(r.ctx()); err != nil {
			t.Fatal(err)
		}
		// No idle comes: the run ends with the runtime's exit, status 0.
		err := <-runErr
		var tc *sdkproto.TransportClosedError
		if !errors.As(err, &tc) || !errors.Is(err, sdkproto.ErrRuntimeClosed) || !tc.Exited || tc.ExitCode != 0 {
			t.Errorf("run after shutdown: %v", err)
		}
	})
	t.Run("stdin-end", func(t *testing.T) {
		t.Parallel()
		r := startReal(t, fakemodel.New(fakemodel.Text("answered after EOF")), 4096)
		tree := r.c.SubscribeSessionTree("main")
		defer tree.Close()
		if _, err := r.c.Prompt(r.ctx(), "main", sdkproto.TextBlock("say something")); err != nil {
			t.Fatal(err)
		}
		if err := r.c.CloseInput(); err != nil {
			t.Fatal(err)
		}
		// The queued turn still runs to idle after EOF.
		for {
			n, err := tree.Next(r.ctx())
			if err != nil {
				t.Fatal(err)
			}
			if st, err := n.SessionStatus(); err == nil && st.Status == sdkproto.StatusIdle {
				break
			}
		}
		if _, err := r.c.Prompt(r.ctx(), "main", sdkproto.TextBlock("hi")); err == nil {
			t.Error("Prompt after CloseInput succeeded")
		}
		// The runtime does not exit on EOF: Close's SIGTERM step ends it, status 0.
		if err := r.c.Close(); err != nil {
			t.Fatal(err)
		}
		st := r.c.ProcessState()
		if st == nil || st.ExitCode() != 0 || st.Sys().(syscall.WaitStatus).Signaled() {
			t.Errorf("exit state %v", st)
		}
	})
}
