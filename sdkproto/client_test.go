package sdkproto_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
)

func clCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), clWait)
	t.Cleanup(cancel)
	return ctx
}

func clInitParams() sdkproto.InitializeParams {
	return sdkproto.InitializeParams{Cwd: "/srv", Provider: "deepseek-official", Model: "deepseek-v4-flash", MaxTokens: sdkproto.Tokens(4096)}
}

func TestClientInitialize(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	done := make(chan error, 1)
	go func() {
		res, err := c.Initialize(clCtx(t), clInitParams())
		if err == nil && res.ServerInfo.Name != sdkproto.ServerName {
			err = errors.New("server name " + res.ServerInfo.Name)
		}
		done <- err
	}()
	r := p.expect("initialize")
	if got := string(compactLine(r.Params)); got != `{"cwd":"/srv","maxTokens":4096,"model":"deepseek-v4-flash","provider":"deepseek-official"}` {
		t.Errorf("initialize params %s", got)
	}
	p.result(r, `{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// The real runtime answers session/prompt only after the receipt, running
// and turn/start: Run must not lose them.
func TestClientRunPromptResultAfterNotifications(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	type outcome struct {
		res    *sdkproto.RunResult
		deltas []string
		err    error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		o.res, o.err = c.RunFunc(clCtx(t), "main", func(n sdkproto.Notification) error {
			if d, ok := n.TextDelta(); ok {
				o.deltas = append(o.deltas, d)
			}
			return nil
		}, sdkproto.TextBlock("hi"))
		done <- o
	}()
	r := p.expect("session/prompt")
	if got := string(compactLine(r.Params)); got != `{"contentBlocks":[{"text":"hi","type":"text"}],"sessionId":"main"}` {
		t.Errorf("prompt params %s", got)
	}
	p.send("%s", clEvent("main", "permission/preset", 0, `{"preset":"danger-full-access"}`))
	p.clTurn(r, "main", "m-1", "hello")
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	var types []string
	for _, e := range o.res.Events {
		types = append(types, string(e.Type))
	}
	want := "agent/inbox/spliced turn/start assistant/chunk assistant/message turn/end"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if o.res.FinalResponse != "hello" || o.res.FinishReason != sdkproto.TurnCompleted || o.res.MessageID != "m-1" {
		t.Errorf("result %+v", o.res)
	}
	if len(o.res.Notifications) != 7 || strings.Join(o.deltas, "") != "hello" {
		t.Errorf("%d notifications, deltas %q", len(o.res.Notifications), o.deltas)
	}
}

func TestClientStream(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	go func() {
		r := p.expect("session/prompt")
		p.clTurn(r, "main", "m-1", "streamed")
	}()
	var text strings.Builder
	n := 0
	for note, err := range c.Stream(clCtx(t), "main", sdkproto.TextBlock("hi")) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if d, ok := note.TextDelta(); ok {
			text.WriteString(d)
		}
	}
	if text.String() != "streamed" || n != 7 {
		t.Errorf("text %q after %d notifications", text.String(), n)
	}
}

// Breaking out of a Stream stops waiting and frees the subscription.
func TestClientStreamBreak(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	go func() {
		r := p.expect("session/prompt")
		p.send("%s", clReceipt("main", "m-1", 0))
		p.result(r, `{"messageId":"m-1"}`)
	}()
	for _, err := range c.Stream(clCtx(t), "main") {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
}

func TestClientTwoSessions(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	results := make(chan *sdkproto.RunResult, 2)
	for _, s := range []string{"s1", "s2"} {
		go func() {
			res, err := c.Run(clCtx(t), s, sdkproto.TextBlock("q "+s))
			if err != nil {
				t.Error(err)
			}
			results <- res
		}()
	}
	r1, r2 := p.expect("session/prompt"), p.expect("session/prompt")
	sid := func(r clRequest) string {
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
	for range 2 {
		res := <-results
		if res == nil {
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
	done := make(chan *sdkproto.RunResult, 1)
	go func() {
		res, err := c.Run(clCtx(t), "main", sdkproto.TextBlock("delegate"))
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
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
	res := <-done
	if res == nil {
		t.FailNow()
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
	_, err := c.Prompt(clCtx(t), "main", sdkproto.TextBlock("x"))
	var te *sdkproto.TimeoutError
	if !errors.As(err, &te) || te.Method != "session/prompt" || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a *TimeoutError", err)
	}
	if want := "session/prompt timed out after 100ms waiting for the DeepSeek Harness runtime"; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	// The late answer is dropped; the client goes on.
	p.result(p.expect("session/prompt"), `{"messageId":"late"}`)
	go func() { p.result(p.expect("session/prompt"), `{"messageId":"m-2"}`) }()
	if id, err := c.Prompt(clCtx(t), "main"); err != nil || id != "m-2" {
		t.Errorf("Prompt after timeout: %q, %v", id, err)
	}
}

func TestClientContextCancel(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		p.expect("initialize")
		cancel()
	}()
	if _, err := c.Initialize(ctx, clInitParams()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Initialize: %v, want context.Canceled", err)
	}
	// Run waiting for its idle stops with the context too.
	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() {
		r := p.expect("session/prompt")
		p.send("%s", clReceipt("main", "m-1", 0))
		p.result(r, `{"messageId":"m-1"}`)
		time.Sleep(20 * time.Millisecond) // let Run reach its wait
		cancel2()
	}()
	if _, err := c.Run(ctx2, "main"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
}

func TestClientResponseError(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	go func() {
		r := p.expect("initialize")
		p.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"initialize maxTokens must be a positive safe integer"}}`, r.ID)
	}()
	_, err := c.Initialize(clCtx(t), clInitParams())
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
	answer := func(code int, msg string) {
		r := p.expect("initialize")
		p.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, r.ID, code, msg)
	}
	go answer(-32603, "unknown DeepSeek Harness SDK runtime method: initialize")
	_, err := c.Initialize(clCtx(t), clInitParams())
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
		go answer(a.code, a.msg)
		if _, err := c.Initialize(clCtx(t), clInitParams()); err == nil || errors.Is(err, sdkproto.ErrUnknownMethod) {
			t.Errorf("answer %d %q: got %v, want an error not matching ErrUnknownMethod", a.code, a.msg, err)
		}
	}
}

// A request from the runtime is answered -32601, as the TypeScript client does.
func TestClientAnswersRuntimeRequests(t *testing.T) {
	t.Parallel()
	_, p := newClPeer(t, nil)
	p.send(`{"jsonrpc":"2.0","id":"r1","method":"client/ask","params":{}}`)
	deadline := time.Now().Add(clWait)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		sent := append([]string(nil), p.sent...)
		p.mu.Unlock()
		if len(sent) > 0 {
			if want := `{"jsonrpc":"2.0","id":"r1","error":{"code":-32601,"message":"method not found: client/ask"}}`; sent[0] != want {
				t.Errorf("reply %s, want %s", sent[0], want)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no reply")
}

func TestClientAfterClose(t *testing.T) {
	t.Parallel()
	c, _ := newClPeer(t, nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := c.Prompt(clCtx(t), "main")
	var tc *sdkproto.TransportClosedError
	if !errors.As(err, &tc) || !errors.Is(err, sdkproto.ErrClientClosed) {
		t.Fatalf("Prompt after Close: %v", err)
	}
	s := c.Subscribe(nil)
	if _, err := s.Next(clCtx(t)); !errors.Is(err, sdkproto.ErrClientClosed) {
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
	n, err := all.Next(clCtx(t))
	if err != nil || n.Method != "session.status" || n.Index != 1 {
		t.Fatalf("Next: %+v, %v", n, err)
	}
	if _, err := panicky.Next(clCtx(t)); err == nil || !strings.Contains(err.Error(), "filter panicked") {
		t.Errorf("panicking filter: %v", err)
	}
	if _, err := closed.Next(clCtx(t)); !errors.Is(err, sdkproto.ErrSubscriptionClosed) {
		t.Errorf("closed subscription: %v", err)
	}
	// Three more notifications overflow the limit of two unread.
	for range 3 {
		p.send("%s", clStatus("b", "idle"))
	}
	var got []uint64
	for {
		n, err := all.Next(clCtx(t))
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
	p.out.Close()
	<-c.Done()
	if n, err := s.Next(clCtx(t)); err != nil || n.Method != "session.status" {
		t.Fatalf("queued notification: %+v, %v", n, err)
	}
	_, err := s.Next(clCtx(t))
	var tc *sdkproto.TransportClosedError
	if !errors.As(err, &tc) || !errors.Is(err, sdkproto.ErrRuntimeClosed) || !errors.Is(err, rpc.ErrInputEnded) {
		t.Fatalf("after the end: %v", err)
	}
	if _, err := c.Prompt(clCtx(t), "main"); !errors.As(err, &tc) || !errors.Is(err, rpc.ErrInputEnded) {
		t.Fatalf("Prompt after the end: %v", err)
	}
}
