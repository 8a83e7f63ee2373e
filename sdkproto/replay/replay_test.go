package replay_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/replay"
	"github.com/linerpc/linerpc/sdkproto/replay/replaytest"
)

// bound is the one-minute bound of every wait of these tests: a context
// that ends makes the call fail saying what it waited for.
func bound(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), replaytest.MaxWait)
	t.Cleanup(cancel)
	return ctx
}

// replayedCwd is the cwd the tests initialize with, not the recorded one.
const replayedCwd = "/srv/replayed"

// initialize initializes c with the recording's params, but the cwd.
func initialize(t testing.TB, ctx context.Context, rec *replay.Recording, c *sdkproto.Client) {
	t.Helper()
	p, ok := rec.InitializeParams()
	if !ok {
		t.Fatal("the recording has no initialize")
	}
	p.Cwd = replayedCwd
	res, err := c.Initialize(ctx, p)
	if err != nil || res.ServerInfo.Name != "deepseek-harness-sdk-runtime" {
		t.Fatalf("initialize: %+v, %v", res, err)
	}
}

// checkRun compares a Run's result with the recording's facts: the
// interval the client collected is the recorded one, on its own session
// id, with its own cwd in the system prompt.
func checkRun(t testing.TB, what string, res *sdkproto.RunResult, tn turn, session string) {
	t.Helper()
	if res.SessionID != session || res.MessageID != tn.messageID || res.FinalResponse != tn.final ||
		string(res.FinishReason) != tn.reason || len(res.Events) != tn.events || len(res.Notifications) != tn.notifications {
		t.Errorf("%s: session %q message %q final %q reason %q, %d events, %d notifications;\nrecorded %q %q %q, %d events, %d notifications",
			what, res.SessionID, res.MessageID, res.FinalResponse, res.FinishReason, len(res.Events), len(res.Notifications),
			tn.messageID, tn.final, tn.reason, tn.events, tn.notifications)
	}
	for _, n := range res.Notifications {
		if sid, ok := n.SessionID(); ok && sid == tn.session && sid != session {
			t.Errorf("%s: a notification still names the recorded session %q: %v", what, tn.session, n)
			break
		}
	}
	for _, e := range res.Events {
		if e.Type == "request/header" {
			wantContains(t, what+": request/header", string(e.Data), "Your working directory is "+replayedCwd+".")
			if strings.Contains(string(e.Data), tn.cwd) {
				t.Errorf("%s: request/header still names the recorded cwd %s", what, tn.cwd)
			}
		}
	}
}

// TestRunReplaysRecordedTurns: Client.Run on a replay of each recorded
// single-turn transcript, on a session id and a cwd of its own, gets the
// recorded interval; Close's shutdown is the recording's last frame, and
// Serve ends with nil.
func TestRunReplaysRecordedTurns(t *testing.T) {
	for _, name := range []string{"text-turn", "reasoning-turn", "tool-call", "tool-call-invalid-args", "subagent", "max-tokens", "model-error"} {
		t.Run(name, func(t *testing.T) {
			rec := load(t, name)
			tn := recordedTurn(t, rec, 0)
			r := replaytest.Start(t, rec, nil)
			ctx := bound(t)
			initialize(t, ctx, rec, r.Client)
			res, err := r.Client.Run(ctx, "session-replayed", rec.Prompts()[0].Blocks...)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			checkRun(t, name, res, tn, "session-replayed")
			if err := r.Client.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if err := r.Wait(); err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}
}

// TestRunReplaysEveryForm: the same turn recorded as a tap log and as raw
// frames replays as the transcript does.
func TestRunReplaysEveryForm(t *testing.T) {
	es := entries(t, "tool-call")
	tn := recordedTurn(t, load(t, "tool-call"), 0)
	for form, text := range map[string]string{
		"tap log":    tapLog(es),
		"raw frames": rawFrames(es, func(string) string { return "" }),
	} {
		t.Run(strings.ReplaceAll(form, " ", "-"), func(t *testing.T) {
			rec := loadString(t, text)
			c := replaytest.Client(t, rec, nil)
			ctx := bound(t)
			initialize(t, ctx, rec, c)
			res, err := c.Run(ctx, "main", sdkproto.TextBlock(tn.text))
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			checkRun(t, form, res, tn, "main")
		})
	}
}

// TestStreamReplaysRecordedTurn: Client.Stream yields the recorded
// notifications, the recorded text deltas among them, and ends.
func TestStreamReplaysRecordedTurn(t *testing.T) {
	for _, name := range []string{"text-turn", "subagent"} {
		t.Run(name, func(t *testing.T) {
			rec := load(t, name)
			tn := recordedTurn(t, rec, 0)
			c := replaytest.Client(t, rec, nil)
			ctx := bound(t)
			initialize(t, ctx, rec, c)
			var text strings.Builder
			n := 0
			for note, err := range c.Stream(ctx, "streamed", sdkproto.TextBlock(tn.text)) {
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				n++
				if sid, _ := note.SessionID(); sid != "streamed" {
					continue
				}
				if d, ok := note.TextDelta(); ok {
					text.WriteString(d)
				}
			}
			if text.String() != tn.deltas || n != tn.notifications {
				t.Errorf("streamed %q in %d notifications, recorded %q in %d", text.String(), n, tn.deltas, tn.notifications)
			}
		})
	}
}

// TestTwoSessionsInEitherOrder: the recording's two prompts, written back
// to back, may come in either order, one at a time or at once; each run
// gets its own session's interval.
func TestTwoSessionsInEitherOrder(t *testing.T) {
	rec := load(t, "two-sessions")
	alpha, beta := recordedTurn(t, rec, 0), recordedTurn(t, rec, 1)
	t.Run("second-first", func(t *testing.T) {
		c := replaytest.Client(t, rec, nil)
		ctx := bound(t)
		initialize(t, ctx, rec, c)
		res, err := c.Run(ctx, "b", sdkproto.TextBlock(beta.text))
		if err != nil {
			t.Fatalf("run b: %v", err)
		}
		checkRun(t, "run b", res, beta, "b")
		res, err = c.Run(ctx, "a", sdkproto.TextBlock(alpha.text))
		if err != nil {
			t.Fatalf("run a: %v", err)
		}
		checkRun(t, "run a", res, alpha, "a")
	})
	t.Run("at-once", func(t *testing.T) {
		c := replaytest.Client(t, rec, nil)
		ctx := bound(t)
		initialize(t, ctx, rec, c)
		type outcome struct {
			res *sdkproto.RunResult
			err error
		}
		runs := map[string]chan outcome{"a": make(chan outcome, 1), "b": make(chan outcome, 1)}
		for session, tn := range map[string]turn{"a": alpha, "b": beta} {
			go func() {
				res, err := c.Run(ctx, session, sdkproto.TextBlock(tn.text))
				runs[session] <- outcome{res, err}
			}()
		}
		for session, tn := range map[string]turn{"a": alpha, "b": beta} {
			o := <-runs[session] // Run returns by ctx's bound at the latest
			if o.err != nil {
				t.Fatalf("run %s: %v", session, o.err)
			}
			checkRun(t, "run "+session, o.res, tn, session)
		}
	})
}

// TestOneRecordingManyClients: a Recording serves clients at once.
func TestOneRecordingManyClients(t *testing.T) {
	rec := load(t, "text-turn")
	tn := recordedTurn(t, rec, 0)
	ctx := bound(t)
	errs := make(chan error, 4)
	var clients []*sdkproto.Client
	for range 4 {
		clients = append(clients, replaytest.Client(t, rec, nil))
	}
	for i, c := range clients {
		go func() {
			p, _ := rec.InitializeParams()
			if _, err := c.Initialize(ctx, p); err != nil {
				errs <- err
				return
			}
			res, err := c.Run(ctx, "client-"+string(rune('a'+i)), sdkproto.TextBlock(tn.text))
			if err == nil && res.FinalResponse != tn.final {
				err = errors.New("final response " + res.FinalResponse)
			}
			errs <- err
		}()
	}
	for range clients {
		if err := <-errs; err != nil { // each ends by ctx's bound at the latest
			t.Error(err)
		}
	}
}

// TestRecordingWithoutShutdown: stdin-eof ends with the turn: the client
// closes its input after it, and Serve ends with nil.
func TestRecordingWithoutShutdown(t *testing.T) {
	rec := load(t, "stdin-eof")
	tn := recordedTurn(t, rec, 0)
	r := replaytest.Start(t, rec, nil)
	ctx := bound(t)
	initialize(t, ctx, rec, r.Client)
	res, err := r.Client.Run(ctx, "main", sdkproto.TextBlock(tn.text))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	checkRun(t, "stdin-eof", res, tn, "main")
	r.Client.CloseInput()
	if err := r.Wait(); err != nil {
		t.Errorf("serve: %v", err)
	}
}

// departure returns the *Departure that Serve ended with.
func departure(t testing.TB, r *replaytest.Replay) *replay.Departure {
	t.Helper()
	err := r.Wait()
	var d *replay.Departure
	if !errors.As(err, &d) {
		t.Fatalf("serve ended with %v, want a *replay.Departure", err)
	}
	return d
}

// wantRefusal checks that a call was answered with the departure's error.
func wantRefusal(t testing.TB, err error, wants ...string) {
	t.Helper()
	var re *sdkproto.ResponseError
	if !errors.As(err, &re) || re.Code != -32603 {
		t.Fatalf("the call ended with %v, want a -32603 response error", err)
	}
	wantContains(t, "the error's message", re.Message, wants...)
}

// TestDepartures: a client that departs from the recording gets a clear
// error naming the line and what differed, and Serve returns it.
func TestDepartures(t *testing.T) {
	t.Run("prompt-text", func(t *testing.T) {
		rec := load(t, "text-turn")
		r := replaytest.Start(t, rec, nil)
		ctx := bound(t)
		initialize(t, ctx, rec, r.Client)
		_, err := r.Client.Run(ctx, "main", sdkproto.TextBlock("say bye"))
		want := `replay: the client departed from the recording at line 3 (a c2s session/prompt request): params.contentBlocks[0].text: recorded "say hi", got "say bye"`
		wantRefusal(t, err, want)
		d := departure(t, r)
		if d.Error() != want || d.Line != 3 || d.Expected != "c2s session/prompt request" || !strings.Contains(d.Got, `"say bye"`) || d.After {
			t.Errorf("departure %+v\nerror %v", d, d)
		}
	})
	t.Run("unexpected-method", func(t *testing.T) {
		rec := load(t, "text-turn")
		r := replaytest.Start(t, rec, nil)
		ctx := bound(t)
		initialize(t, ctx, rec, r.Client)
		err := r.Client.Shutdown(ctx)
		want := `replay: the client departed from the recording at line 3 (a c2s session/prompt request): method: recorded "session/prompt", got "shutdown"`
		wantRefusal(t, err, want)
		if d := departure(t, r); d.Line != 3 || d.Error() != want {
			t.Errorf("departure: %v", d)
		}
	})
	t.Run("initialize-params", func(t *testing.T) {
		rec := load(t, "text-turn")
		r := replaytest.Start(t, rec, nil)
		p, _ := rec.InitializeParams()
		p.Model, p.MaxTokens = "deepseek-v4-pro", sdkproto.OptionalInt{}
		_, err := r.Client.Initialize(bound(t), p)
		want := `at line 1 (a c2s initialize request): params.maxTokens: recorded 4096, got none; params.model: recorded "deepseek-v4-flash", got "deepseek-v4-pro"`
		wantRefusal(t, err, want)
		wantContains(t, "the departure", departure(t, r).Error(), want)
	})
	t.Run("session-bound-twice", func(t *testing.T) {
		rec := load(t, "two-sessions")
		r := replaytest.Start(t, rec, nil)
		ctx := bound(t)
		initialize(t, ctx, rec, r.Client)
		if _, err := r.Client.Run(ctx, "a", sdkproto.TextBlock("alpha question")); err != nil {
			t.Fatal(err)
		}
		_, err := r.Client.Run(ctx, "a", sdkproto.TextBlock("beta question"))
		want := `at line 4 (a c2s session/prompt request): params.sessionId: "a" is already the recording's session "s1" in this replay, not "s2"`
		wantRefusal(t, err, want)
		wantContains(t, "the departure", departure(t, r).Error(), want)
	})
	t.Run("group", func(t *testing.T) {
		rec := load(t, "two-sessions")
		r := replaytest.Start(t, rec, nil)
		ctx := bound(t)
		initialize(t, ctx, rec, r.Client)
		_, err := r.Client.Run(ctx, "a", sdkproto.TextBlock("gamma question"))
		want := `at line 3 (a c2s session/prompt request): none of lines 3, 4 (written together, in any order) matches the client's session/prompt request; line 3: params.contentBlocks[0].text: recorded "alpha question", got "gamma question"`
		wantRefusal(t, err, want)
		wantContains(t, "the departure", departure(t, r).Error(), want)
	})
	t.Run("input-ends-early", func(t *testing.T) {
		rec := load(t, "text-turn")
		r := replaytest.Start(t, rec, nil)
		initialize(t, bound(t), rec, r.Client)
		r.Client.CloseInput()
		want := "replay: the client departed from the recording at line 3 (a c2s session/prompt request): the client's input ended before it"
		if d := departure(t, r); d.Error() != want || d.Got != "" {
			t.Errorf("departure: %v, want %s", d, want)
		}
	})
	t.Run("after-the-end", func(t *testing.T) {
		rec := load(t, "stdin-eof")
		r := replaytest.Start(t, rec, nil)
		ctx := bound(t)
		initialize(t, ctx, rec, r.Client)
		if _, err := r.Client.Run(ctx, "main", sdkproto.TextBlock("say something")); err != nil {
			t.Fatal(err)
		}
		err := r.Client.Shutdown(ctx)
		want := "replay: the client departed from the recording after its last client frame (line 3, a c2s session/prompt request): the client sent one more: shutdown request"
		wantRefusal(t, err, want)
		if d := departure(t, r); !d.After || d.Line != 3 || d.Error() != want {
			t.Errorf("departure: %+v", d)
		}
	})
}
