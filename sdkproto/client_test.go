package sdkproto_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/sdkproto"
)

func clInitParams() sdkproto.InitializeParams {
	return sdkproto.InitializeParams{Cwd: "/srv", Provider: "deepseek-official", Model: "deepseek-v4-flash", MaxTokens: sdkproto.Tokens(4096)}
}

func TestClientInitialize(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	initialize := clGo(func() (sdkproto.InitializeResult, error) { return c.Initialize(t.Context(), clInitParams()) })
	r := p.expect("initialize")
	if got := string(compactLine(r.Params)); got != `{"cwd":"/srv","maxTokens":4096,"model":"deepseek-v4-flash","provider":"deepseek-official"}` {
		t.Errorf("initialize params %s", got)
	}
	p.result(r, `{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}`)
	res, err := initialize()
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerInfo.Name != sdkproto.ServerName {
		t.Errorf("server name %q", res.ServerInfo.Name)
	}
}

// The real runtime answers session/prompt only after the receipt, running
// and turn/start: Run must not lose them.
func TestClientRunPromptResultAfterNotifications(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	var deltas []string // written by RunFunc's goroutine until it returns
	run := clGo(func() (*sdkproto.RunResult, error) {
		return c.RunFunc(t.Context(), "main", func(n sdkproto.Notification) error {
			if d, ok := n.TextDelta(); ok {
				deltas = append(deltas, d)
			}
			return nil
		}, sdkproto.TextBlock("hi"))
	})
	r := p.expect("session/prompt")
	if got := string(compactLine(r.Params)); got != `{"contentBlocks":[{"text":"hi","type":"text"}],"sessionId":"main"}` {
		t.Errorf("prompt params %s", got)
	}
	p.send("%s", clEvent("main", "permission/preset", 0, `{"preset":"danger-full-access"}`))
	p.clTurn(r, "main", "m-1", "hello")
	res, err := run()
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range res.Events {
		types = append(types, string(e.Type))
	}
	want := "agent/inbox/spliced turn/start assistant/chunk assistant/message turn/end"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if res.FinalResponse != "hello" || res.FinishReason != sdkproto.TurnCompleted || res.MessageID != "m-1" {
		t.Errorf("result %+v", res)
	}
	if len(res.Notifications) != 7 || strings.Join(deltas, "") != "hello" {
		t.Errorf("%d notifications, deltas %q", len(res.Notifications), deltas)
	}
}

func TestClientStream(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	var n int
	stream := clGo(func() (string, error) {
		var text strings.Builder
		for note, err := range c.Stream(t.Context(), "main", sdkproto.TextBlock("hi")) {
			if err != nil {
				return "", err
			}
			n++
			if d, ok := note.TextDelta(); ok {
				text.WriteString(d)
			}
		}
		return text.String(), nil
	})
	p.clTurn(p.expect("session/prompt"), "main", "m-1", "streamed")
	text, err := stream()
	if err != nil {
		t.Fatal(err)
	}
	if text != "streamed" || n != 7 {
		t.Errorf("text %q after %d notifications", text, n)
	}
}

// Breaking out of a Stream stops waiting and frees the subscription.
func TestClientStreamBreak(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	stream := clGo(func() (int, error) {
		for _, err := range c.Stream(t.Context(), "main", sdkproto.TextBlock("hi")) {
			if err != nil {
				return 0, err
			}
			break
		}
		return 0, nil
	})
	r := p.expect("session/prompt")
	p.send("%s", clReceipt("main", "m-1", 0))
	p.result(r, `{"messageId":"m-1"}`)
	if _, err := stream(); err != nil {
		t.Fatal(err)
	}
}

func TestClientTwoSessions(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	var runs []func() (*sdkproto.RunResult, error)
	for _, s := range []string{"s1", "s2"} {
		runs = append(runs, clGo(func() (*sdkproto.RunResult, error) { return c.Run(t.Context(), s, sdkproto.TextBlock("q "+s)) }))
	}
	r1, r2 := p.expect("session/prompt"), p.expect("session/prompt")
	sid := func(r rpctest.Call) string {
		if strings.Contains(string(r.Params), `"s1"`) {
			return "s1"
		}
		return "s2"
	}
	// Interleave the two turns; s2 ends first, as in the recording.
	a, b := sid(r1), sid(r2)
	p.send("%s", clReceipt(a, "m-"+a, 3))
	p.send("%s", clReceipt(b, "m-"+b, 3))
	p.send("%s", clStatus(a, "running"))
	p.send("%s", clStatus(b, "running"))
	p.result(r1, `{"messageId":"m-`+a+`"}`)
	p.result(r2, `{"messageId":"m-`+b+`"}`)
	p.send("%s", clAssistant(a, "answer "+a, 4))
	p.send("%s", clAssistant(b, "answer "+b, 4))
	p.send("%s", clStatus("s2", "idle"))
	p.send("%s", clStatus("s1", "idle"))
	for _, run := range runs {
		res, err := run()
		if err != nil {
			t.Error(err)
			continue
		}
		if res.FinalResponse != "answer "+res.SessionID || len(res.Notifications) != 4 {
			t.Errorf("%s: %q, %d notifications", res.SessionID, res.FinalResponse, len(res.Notifications))
		}
	}
}

func TestClientSubagentTree(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	tree := c.SubscribeSessionTree("main")
	defer tree.Close()
	run := clGo(func() (*sdkproto.RunResult, error) { return c.Run(t.Context(), "main", sdkproto.TextBlock("delegate")) })
	r := p.expect("session/prompt")
	p.send("%s", clReceipt("main", "m-1", 3))
	p.result(r, `{"messageId":"m-1"}`)
	p.send("%s", clEvent("main", "tool/call", 4, `{"turn":1,"step":1,"callId":"c","name":"subagent","arguments":"{}"}`))
	p.send(`{"jsonrpc":"2.0","method":"subagent.started","params":{"parentSessionId":"main","childSessionId":"kid"}}`)
	p.send(`{"jsonrpc":"2.0","method":"subagent.started","params":{"parentSessionId":"kid","childSessionId":"grandkid"}}`)
	p.send("%s", clAssistant("grandkid", "deep", 2))
	p.send("%s", clAssistant("kid", "child answer", 2))
	p.send("%s", clStatus("kid", "idle"))
	p.send(`{"jsonrpc":"2.0","method":"subagent.finished","params":{"provider":"spawn","agentId":"kid","parentSessionId":"main","childSessionId":"kid","status":"ok","stopReason":"completed","lastAssistantMessage":[{"type":"text","text":"child answer"}]}}`)
	p.send("%s", clStatus("stranger", "idle"))
	p.send("%s", clAssistant("main", "parent answer", 5))
	p.send("%s", clStatus("main", "idle"))
	res, err := run()
	if err != nil {
		t.Fatal(err)
	}
	if res.FinalResponse != "parent answer" || len(res.Events) != 3 || len(res.Notifications) != 10 {
		t.Errorf("final %q, %d events, %d notifications", res.FinalResponse, len(res.Events), len(res.Notifications))
	}
	if parent, ok := c.ParentOf("grandkid"); !ok || parent != "kid" {
		t.Errorf("ParentOf(grandkid) = %q, %v", parent, ok)
	}
	// The standalone subscription saw the same tree, finished included.
	var finished *sdkproto.SubagentFinishedParams
	count := 0
	for {
		n, ok := tree.TryNext()
		if !ok {
			break
		}
		count++
		if f, err := n.SubagentFinished(); err == nil {
			finished = &f
		}
	}
	if count != 10 || finished == nil || sdkproto.FinalText(finished.LastAssistantMessage) != "child answer" {
		t.Errorf("tree subscription: %d notifications, finished %v", count, finished != nil)
	}
}

func TestClientRequestTimeout(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, &sdkproto.ClientOptions{RequestTimeout: 100 * time.Millisecond})
	_, err := c.Prompt(t.Context(), "main", sdkproto.TextBlock("x"))
	var te *sdkproto.TimeoutError
	if !errors.As(err, &te) || te.Method != "session/prompt" || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a *TimeoutError", err)
	}
	if want := "session/prompt timed out after 100ms waiting for the DeepSeek Harness runtime"; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	// The late answer is dropped; the client goes on.
	p.result(p.expect("session/prompt"), `{"messageId":"late"}`)
	prompt := clGo(func() (string, error) { return c.Prompt(t.Context(), "main", sdkproto.TextBlock("hi")) })
	p.result(p.expect("session/prompt"), `{"messageId":"m-2"}`)
	if id, err := prompt(); err != nil || id != "m-2" {
		t.Errorf("Prompt after timeout: %q, %v", id, err)
	}
}

func TestClientContextCancel(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	initialize := clGo(func() (sdkproto.InitializeResult, error) { return c.Initialize(ctx, clInitParams()) })
	p.expect("initialize")
	cancel()
	if _, err := initialize(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Initialize: %v, want context.Canceled", err)
	}
	// Run waiting for its idle stops with the context too: cancelled once
	// Run has taken the receipt, that is, once it waits for idle.
	ctx2, cancel2 := context.WithCancel(t.Context())
	receipt := make(chan struct{})
	run := clGo(func() (*sdkproto.RunResult, error) {
		return c.RunFunc(ctx2, "main", func(sdkproto.Notification) error { close(receipt); return nil }, sdkproto.TextBlock("hi"))
	})
	r := p.expect("session/prompt")
	p.send("%s", clReceipt("main", "m-1", 0))
	p.result(r, `{"messageId":"m-1"}`)
	<-receipt
	cancel2()
	_, err := run()
	var we *sdkproto.RunWaitError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &we) || !we.Receipt {
		t.Fatalf("Run: %v, want context.Canceled while it waits for idle", err)
	}
}

func TestClientResponseError(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	initialize := clGo(func() (sdkproto.InitializeResult, error) { return c.Initialize(t.Context(), clInitParams()) })
	r := p.expect("initialize")
	p.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"initialize maxTokens must be a positive safe integer"}}`, r.ID)
	_, err := initialize()
	var re *sdkproto.ResponseError
	var rpcErr *rpc.Error
	if !errors.As(err, &re) || !errors.As(err, &rpcErr) || re.Code != rpc.CodeInternalError ||
		re.Message != "initialize maxTokens must be a positive safe integer" || re.Data != nil {
		t.Fatalf("got %#v", err)
	}
}

// The runtime's unknown-method answer matches ErrUnknownMethod, and only
// that answer: another -32603, or the text naming another method, does not.
func TestClientUnknownMethodError(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	// initialize has the runtime answer code and msg.
	initialize := func(code int, msg string) error {
		t.Helper()
		call := clGo(func() (sdkproto.InitializeResult, error) { return c.Initialize(t.Context(), clInitParams()) })
		r := p.expect("initialize")
		p.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, r.ID, code, msg)
		_, err := call()
		return err
	}
	err := initialize(-32603, "unknown DeepSeek Harness SDK runtime method: initialize")
	var re *sdkproto.ResponseError
	if !errors.Is(err, sdkproto.ErrUnknownMethod) || !errors.As(err, &re) || re.Method != "initialize" {
		t.Fatalf("got %v, want a *ResponseError matching ErrUnknownMethod", err)
	}
	for _, a := range []struct {
		code int
		msg  string
	}{
		{-32603, "SDK server is not initialized"},
		{-32603, "unknown DeepSeek Harness SDK runtime method: shutdown"},
		{-32601, "unknown DeepSeek Harness SDK runtime method: initialize"},
	} {
		if err := initialize(a.code, a.msg); err == nil || errors.Is(err, sdkproto.ErrUnknownMethod) {
			t.Errorf("answer %d %q: got %v, want an error not matching ErrUnknownMethod", a.code, a.msg, err)
		}
	}
}

// A request from the runtime is answered -32601, as the TypeScript client does.
func TestClientAnswersRuntimeRequests(t *testing.T) {
	t.Parallel()
	_, p := newClPeer(t, nil)
	p.Send(`{"jsonrpc":"2.0","id":"r1","method":"client/ask","params":{}}`)
	if got, want := p.Next(), `{"jsonrpc":"2.0","id":"r1","error":{"code":-32601,"message":"method not found: client/ask"}}`; got != want {
		t.Errorf("reply %s, want %s", got, want)
	}
}

func TestClientAfterClose(t *testing.T) {
	t.Parallel()
	c, _ := newClPeer(t, nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := c.Prompt(t.Context(), "main", sdkproto.TextBlock("hi"))
	var tc *sdkproto.TransportClosedError
	if !errors.As(err, &tc) || !errors.Is(err, sdkproto.ErrClientClosed) {
		t.Fatalf("Prompt after Close: %v", err)
	}
	s := c.Subscribe(nil)
	if _, err := s.Next(t.Context()); !errors.Is(err, sdkproto.ErrClientClosed) {
		t.Errorf("Next after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestSubscription(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, &sdkproto.ClientOptions{MaxQueued: 2})
	all := c.Subscribe(nil)
	panicky := c.Subscribe(func(n sdkproto.Notification) bool { panic("boom") })
	closed := c.Subscribe(nil)
	closed.Close()
	closed.Close()
	p.send("%s", clStatus("a", "running"))
	p.send("%s", clStatus("a", "idle"))
	n, err := all.Next(t.Context())
	if err != nil || n.Method != "session.status" || n.Index != 1 {
		t.Fatalf("Next: %+v, %v", n, err)
	}
	if _, err := panicky.Next(t.Context()); err == nil || !strings.Contains(err.Error(), "filter panicked") {
		t.Errorf("panicking filter: %v", err)
	}
	if _, err := closed.Next(t.Context()); !errors.Is(err, sdkproto.ErrSubscriptionClosed) {
		t.Errorf("closed subscription: %v", err)
	}
	// Three more notifications overflow the limit of two unread. They are
	// delivered in order, after the read loop read them: once a
	// subscription of its own has the marker sent after them, all has them
	// too, unread.
	marker := c.Subscribe(func(n sdkproto.Notification) bool { return strings.Contains(string(n.Params), `"marker"`) })
	defer marker.Close()
	for range 3 {
		p.send("%s", clStatus("b", "idle"))
	}
	p.send("%s", clStatus("marker", "idle"))
	if _, err := marker.Next(t.Context()); err != nil {
		t.Fatalf("marker: %v", err)
	}
	var got []uint64
	for {
		n, err := all.Next(t.Context())
		if err != nil {
			if !errors.Is(err, sdkproto.ErrSubscriptionOverflow) {
				t.Errorf("overflow: %v", err)
			}
			break
		}
		got = append(got, n.Index)
	}
	if len(got) < 2 {
		t.Errorf("read %v before the overflow", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	quiet := c.Subscribe(func(sdkproto.Notification) bool { return false })
	defer quiet.Close()
	if _, err := quiet.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Next on a quiet subscription: %v", err)
	}
}

// When the runtime's output ends, queued notifications stay readable, then
// Next fails with the transport error.
func TestSubscriptionRuntimeGone(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	s := c.SubscribeSessionTree("main")
	p.send("%s", clStatus("main", "running"))
	p.CloseInput(nil)
	<-c.Done()
	if n, err := s.Next(t.Context()); err != nil || n.Method != "session.status" {
		t.Fatalf("queued notification: %+v, %v", n, err)
	}
	_, err := s.Next(t.Context())
	var tc *sdkproto.TransportClosedError
	if !errors.As(err, &tc) || !errors.Is(err, sdkproto.ErrRuntimeClosed) || !errors.Is(err, rpc.ErrInputEnded) {
		t.Fatalf("after the end: %v", err)
	}
	if _, err := c.Prompt(t.Context(), "main", sdkproto.TextBlock("hi")); !errors.As(err, &tc) || !errors.Is(err, rpc.ErrInputEnded) {
		t.Fatalf("Prompt after the end: %v", err)
	}
}
