package realruntime

// TestRecord drives the real DSH runtime (realruntime/, dsh 0.1.0-rc.8 with
// dsh-sdk-jsonrpc-server 0.0.1-rc.5) with raw JSON-RPC lines against a
// scripted fakemodel.Server, one runtime process per scenario, and asserts
// the facts listed in testdata/transcripts/README.md. With LINERPC_RECORD=1
// each scenario also writes testdata/transcripts/<scenario>.ndjson.
// LINERPC_DUMP=1 with -v logs every frame.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/fakemodel"
)

// scenario is one recorded conversation.
type scenario struct {
	name string
	run  func(t *testing.T) *peer
}

func TestRecord(t *testing.T) {
	requireRuntime(t)
	scenarios := []scenario{
		{"text-turn", scenarioTextTurn},
		{"reasoning-turn", scenarioReasoningTurn},
		{"tool-call", scenarioToolCall},
		{"tool-call-invalid-args", scenarioToolCallInvalidArgs},
		{"subagent", scenarioSubagent},
		{"max-tokens", scenarioMaxTokens},
		{"model-error", scenarioModelError},
		{"two-sessions", scenarioTwoSessions},
		{"shutdown-mid-turn", scenarioShutdownMidTurn},
		{"stdin-eof", scenarioStdinEOF},
		{"errors", scenarioErrors},
		{"prompt-before-initialize", scenarioPromptBeforeInitialize},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			p := sc.run(t)
			checkSeqs(t, p.all())
			p.record(sc.name)
			t.Logf("%s: %d frames in %v", sc.name, len(p.all()), time.Since(start).Round(10*time.Millisecond))
		})
	}
}

// (a) one text turn.
func scenarioTextTurn(t *testing.T) *peer {
	fake := fakemodel.New(fakemodel.Text("hello from the fake model"))
	p := startPeer(t, fake)
	p.initialize(1, p.initParams())
	tr := p.runTurn(2, "main", "say hi")
	if k := reasonKind(tr.turnEnd); k != "completed" {
		t.Errorf("turn/end reason %q, want completed", k)
	}
	// The turn starts before the prompt result is written.
	if ts := p.find(tr.receipt.idx, isEvent("main", "turn/start")); ts == nil || ts.idx > tr.result.idx {
		t.Errorf("turn/start not before the prompt result")
	}
	msg := p.find(tr.receipt.idx, isEvent("main", "assistant/message"))
	if msg == nil || assistantText(msg) != "hello from the fake model" || msg.idx > tr.turnEnd.idx {
		t.Errorf("assistant/message %v", msg)
	}
	if ids, _ := msg.event()["sourceEventSeqs"].([]any); len(ids) == 0 {
		t.Errorf("assistant/message without sourceEventSeqs")
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	c := reqs[0].Chat
	if c.Model != "deepseek-v4-flash" || !c.Stream || c.MaxTokens == nil || *c.MaxTokens != 4096 {
		t.Errorf("model request model=%q stream=%v max_tokens=%v", c.Model, c.Stream, c.MaxTokens)
	}
	if c.Messages[0].Role != "system" || !c.HasUserText("say hi") {
		t.Errorf("model request messages %+v", c.UserTexts())
	}
	names := strings.Join(c.ToolNames(), ",")
	for _, want := range []string{"bash", "read", "write", "edit", "subagent", "todo_write"} {
		if !strings.Contains(","+names+",", ","+want+",") {
			t.Errorf("tool %s not offered (tools: %s)", want, names)
		}
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-fake-realruntime" {
		t.Errorf("Authorization %q", got)
	}
	t.Logf("main: %s", strings.Join(eventTypes(p.all(), "main"), " "))
	p.shutdown(3)
	return p
}

// (b) reasoning_content then content.
func scenarioReasoningTurn(t *testing.T) *peer {
	fake := fakemodel.New(fakemodel.Reasoning("let me think about it", "the answer").
		WithUsage(fakemodel.Usage{PromptTokens: 20, CompletionTokens: 9, ReasoningTokens: 5}))
	p := startPeer(t, fake)
	p.initialize(1, p.initParams())
	tr := p.runTurn(2, "main", "think first")
	if k := reasonKind(tr.turnEnd); k != "completed" {
		t.Errorf("turn/end reason %q", k)
	}
	msg := p.find(tr.receipt.idx, isEvent("main", "assistant/message"))
	if msg == nil {
		t.Fatal("no assistant/message")
	}
	content, _ := dig(msg.data(), "message", "content").([]any)
	if len(content) != 2 || dig(content[0], "type") != "reasoning" || dig(content[0], "text") != "let me think about it" ||
		dig(content[1], "type") != "text" || dig(content[1], "text") != "the answer" {
		t.Errorf("assistant content %v", content)
	}
	if u := dig(msg.data(), "usage"); u == nil {
		t.Errorf("assistant/message without usage")
	} else {
		t.Logf("usage with reasoning tokens: %v", u)
	}
	p.shutdown(3)
	return p
}

// (c) bash tool call, then a text reply. This build's bash tool requires
// "description" next to "command".
func scenarioToolCall(t *testing.T) *peer {
	p, res, toolMsg := toolCallTurn(t, `{"command":"echo hi","description":"print hi"}`)
	if !strings.Contains(res.line, `hi\n`) || strings.Contains(res.line, "invalid arguments") {
		t.Errorf("tool/result does not carry the command output: %s", res)
	}
	if !strings.Contains(toolMsg.Text(), "hi") || strings.Contains(toolMsg.Text(), "Error") {
		t.Errorf("tool message content %q", toolMsg.Text())
	}
	p.shutdown(3)
	return p
}

// (c') the brief's bash arguments {"command":"echo hi"}: the tool fails
// argument validation, the error goes back to the model as the tool
// message, and the turn still completes.
func scenarioToolCallInvalidArgs(t *testing.T) *peer {
	p, res, toolMsg := toolCallTurn(t, `{"command":"echo hi"}`)
	const want = `invalid arguments: missing required property \"description\"`
	if !strings.Contains(res.line, want) {
		t.Errorf("tool/result %s, want it to contain %s", res, want)
	}
	if !strings.Contains(res.line, `"isError":true`) || !strings.Contains(res.line, `"code":"INVALID_ARGS"`) {
		t.Errorf("tool/result not marked as an INVALID_ARGS error: %s", res)
	}
	if !strings.Contains(toolMsg.Text(), `missing required property "description"`) {
		t.Errorf("tool message content %q", toolMsg.Text())
	}
	p.shutdown(3)
	return p
}

// toolCallTurn runs one turn in which the model calls bash with args and
// then answers with text; it returns the peer, the tool/result frame and
// the tool message of the follow-up model request.
func toolCallTurn(t *testing.T, args string) (*peer, *frame, *fakemodel.Message) {
	t.Helper()
	fake := fakemodel.New(
		fakemodel.ToolCall("call-1", "bash", args),
		fakemodel.Text("the command printed hi"),
	)
	p := startPeer(t, fake)
	p.initialize(1, p.initParams())
	tr := p.runTurn(2, "main", "run echo hi")
	if k := reasonKind(tr.turnEnd); k != "completed" {
		t.Errorf("turn/end reason %q", k)
	}
	call := p.find(tr.receipt.idx, isEvent("main", "tool/call"))
	res := p.find(tr.receipt.idx, isEvent("main", "tool/result"))
	if call == nil || res == nil || call.idx > res.idx || res.idx > tr.turnEnd.idx {
		t.Fatalf("tool/call %v, tool/result %v", call, res)
	}
	if !strings.Contains(call.line, `"call-1"`) || !strings.Contains(res.line, `"call-1"`) {
		t.Errorf("tool events do not carry the call id call-1:\n%s\n%s", call, res)
	}
	steps := 0
	for _, f := range p.all() {
		if isEvent("main", "step/start")(f) {
			steps++
		}
	}
	if steps != 2 {
		t.Errorf("%d steps, want 2", steps)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	var toolMsg *fakemodel.Message
	for i, m := range reqs[1].Chat.Messages {
		if m.Role == "tool" {
			toolMsg = &reqs[1].Chat.Messages[i]
		}
	}
	if toolMsg == nil || toolMsg.ToolCallID != "call-1" {
		t.Fatalf("follow-up request lacks the tool message: %+v", toolMsg)
	}
	var sawCall bool
	for _, m := range reqs[1].Chat.Messages {
		for _, tc := range m.ToolCalls {
			sawCall = sawCall || (m.Role == "assistant" && tc.ID == "call-1" && tc.Function.Name == "bash" && tc.Function.Arguments == args)
		}
	}
	if !sawCall {
		t.Errorf("follow-up request lacks the assistant tool call")
	}
	if msg := p.find(res.idx, isEvent("main", "assistant/message")); msg == nil || assistantText(msg) != "the command printed hi" {
		t.Errorf("final assistant/message %v", msg)
	}
	t.Logf("tool/call: %.400s", call.line)
	t.Logf("tool/result: %.600s", res.line)
	t.Logf("tool message content: %.300q", toolMsg.Text())
	return p, res, toolMsg
}

// (d) the parent calls the subagent tool; the child answers; the parent
// answers after the tool result.
func scenarioSubagent(t *testing.T) *peer {
	const args = `{"description":"say hi","prompt":"Reply with the word hi.","run_in_background":false}`
	fake := fakemodel.NewChooser(func(r fakemodel.Request) fakemodel.Reply {
		switch {
		case r.Header.Get("X-Deepseek-Harness-Session-Id") != "main":
			return fakemodel.Text("hi from the child")
		case r.Chat.LastMessage().Role == "tool":
			return fakemodel.Text("the child said hi")
		default:
			return fakemodel.ToolCall("call-sub", "subagent", args)
		}
	})
	p := startPeer(t, fake)
	p.initialize(1, p.initParams())
	tr := p.runTurn(2, "main", "delegate a greeting")
	if k := reasonKind(tr.turnEnd); k != "completed" {
		t.Errorf("parent turn/end reason %q", k)
	}
	started := p.find(-1, isMethod("subagent.started"))
	finished := p.find(-1, isMethod("subagent.finished"))
	if started == nil || finished == nil {
		t.Fatalf("subagent.started %v subagent.finished %v", started, finished)
	}
	child := started.str("childSessionId")
	if started.str("parentSessionId") != "main" || child == "" || child == "main" {
		t.Errorf("subagent.started %s", started)
	}
	call := p.find(tr.receipt.idx, isEvent("main", "tool/call"))
	res := p.find(tr.receipt.idx, isEvent("main", "tool/result"))
	childIdle := p.find(started.idx, isStatus(child, "idle"))
	childMsg := p.find(started.idx, isEvent(child, "assistant/message"))
	if call == nil || res == nil || childIdle == nil || childMsg == nil {
		t.Fatalf("missing frames: tool/call %v tool/result %v child idle %v child assistant/message %v", call, res, childIdle, childMsg)
	}
	// Observed order: parent tool/call, subagent.started, child events,
	// child idle, subagent.finished, parent tool/result, parent turn/end.
	order := []*frame{call, started, childMsg, childIdle, finished, res, tr.turnEnd}
	for i := 1; i < len(order); i++ {
		if order[i-1].idx > order[i].idx {
			t.Errorf("order: %s\n  came after\n%s", order[i-1], order[i])
		}
	}
	if p.find(-1, func(f *frame) bool {
		return f.Method == "session.event" && f.sessionID() == child && f.idx < started.idx
	}) != nil {
		t.Errorf("child events before subagent.started")
	}
	if assistantText(childMsg) != "hi from the child" {
		t.Errorf("child assistant/message %s", childMsg)
	}
	if finished.str("parentSessionId") != "main" || finished.str("childSessionId") != child || finished.str("agentId") != child ||
		finished.str("status") != "ok" || finished.str("stopReason") != "completed" || finished.str("provider") == "" {
		t.Errorf("subagent.finished %s", finished)
	}
	lam, ok := finished.p["lastAssistantMessage"].([]any)
	if !ok || len(lam) == 0 || dig(lam[len(lam)-1], "text") != "hi from the child" {
		t.Errorf("lastAssistantMessage %v", finished.p["lastAssistantMessage"])
	}
	if !strings.Contains(res.line, "hi from the child") {
		t.Errorf("parent tool/result lacks the child's answer: %s", res)
	}
	if msg := p.find(res.idx, isEvent("main", "assistant/message")); msg == nil || assistantText(msg) != "the child said hi" {
		t.Errorf("parent final assistant/message %v", msg)
	}
	if p.find(-1, isStatus(child, "running")) == nil {
		t.Errorf("no running status for the child")
	}
	if n := len(fake.Requests()); n != 3 {
		t.Errorf("%d model requests, want 3", n)
	}
	t.Logf("child: %s", strings.Join(eventTypes(p.all(), child), " "))
	t.Logf("main: %s", strings.Join(eventTypes(p.all(), "main"), " "))
	p.shutdown(3)
	return p
}

// (e) finish_reason length.
func scenarioMaxTokens(t *testing.T) *peer {
	fake := fakemodel.New(fakemodel.MaxTokens("this answer is cut"))
	p := startPeer(t, fake)
	params := p.initParams()
	params["maxTokens"] = 16
	p.initialize(1, params)
	tr := p.runTurn(2, "main", "write a long essay")
	if k := reasonKind(tr.turnEnd); k != "max-tokens" {
		t.Errorf("turn/end reason %q, want max-tokens (%s)", k, tr.turnEnd)
	}
	if c := fake.Requests()[0].Chat; c.MaxTokens == nil || *c.MaxTokens != 16 {
		t.Errorf("max_tokens %v, want 16", c.MaxTokens)
	}
	if msg := p.find(tr.receipt.idx, isEvent("main", "assistant/message")); msg == nil || assistantText(msg) != "this answer is cut" {
		t.Errorf("assistant/message %v", msg)
	}
	t.Logf("turn/end: %s", tr.turnEnd.line)
	p.shutdown(3)
	return p
}

// (f) HTTP 400 from the model.
func scenarioModelError(t *testing.T) *peer {
	fake := fakemodel.New(fakemodel.Error(http.StatusBadRequest, "fake model rejects this request", "invalid_request_error"))
	p := startPeer(t, fake)
	p.initialize(1, p.initParams())
	tr := p.runTurn(2, "main", "this will fail")
	if k := reasonKind(tr.turnEnd); k != "error" {
		t.Errorf("turn/end reason %q, want error (%s)", k, tr.turnEnd)
	}
	// The failure is reported as {message, code, status}; code is the
	// adapter's classification, not the OpenAI error code.
	if dig(tr.turnEnd.data(), "reason", "error", "message") != "fake model rejects this request" ||
		dig(tr.turnEnd.data(), "reason", "error", "status") != float64(400) {
		t.Errorf("turn/end does not carry the model's error: %s", tr.turnEnd.line)
	}
	if f := p.find(tr.receipt.idx, isEvent("main", "assistant/message")); f != nil {
		t.Errorf("assistant/message in a failed turn: %s", f)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("%d model requests (retries?), want 1", n)
	}
	t.Logf("turn/end: %s", tr.turnEnd.line)
	t.Logf("main: %s", strings.Join(eventTypes(p.all(), "main"), " "))
	p.shutdown(3)
	return p
}

// (g) two sessions prompted back to back, before either reply.
func scenarioTwoSessions(t *testing.T) *peer {
	fake := fakemodel.NewChooser(func(r fakemodel.Request) fakemodel.Reply {
		switch {
		case r.Chat.HasUserText("alpha"):
			return fakemodel.Text("reply to alpha")
		case r.Chat.HasUserText("beta"):
			return fakemodel.Text("reply to beta")
		}
		return fakemodel.Error(http.StatusBadRequest, "unexpected request", "unexpected")
	})
	p := startPeer(t, fake)
	p.initialize(1, p.initParams())
	p.prompt(2, "s1", "alpha question")
	p.prompt(3, "s2", "beta question")
	t1 := p.collectTurn(2, "s1")
	t2 := p.collectTurn(3, "s2")
	for _, c := range []struct {
		tr      turn
		session string
		want    string
	}{{t1, "s1", "reply to alpha"}, {t2, "s2", "reply to beta"}} {
		if k := reasonKind(c.tr.turnEnd); k != "completed" {
			t.Errorf("%s turn/end %q", c.session, k)
		}
		msg := p.find(c.tr.receipt.idx, isEvent(c.session, "assistant/message"))
		if msg == nil || assistantText(msg) != c.want {
			t.Errorf("%s assistant/message %v", c.session, msg)
		}
	}
	if t1.result.idx > t2.result.idx {
		t.Errorf("prompt results out of request order")
	}
	if n := len(fake.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2", n)
	}
	var interleaved bool
	for _, f := range p.all() {
		if f.idx > t2.receipt.idx && f.idx < t1.idle.idx && f.sessionID() == "s2" {
			interleaved = true
		}
	}
	t.Logf("events of s1 and s2 interleave: %v; s1 idle #%d, s2 idle #%d", interleaved, t1.idle.idx, t2.idle.idx)
	p.shutdown(4)
	return p
}

// (h) shutdown while the model reply is stalled mid-stream.
func scenarioShutdownMidTurn(t *testing.T) *peer {
	release := make(chan struct{})
	defer close(release)
	fake := fakemodel.New(fakemodel.Text("a slow streaming answer").StallUntil(release))
	p := startPeer(t, fake)
	p.initialize(1, p.initParams())
	p.prompt(2, "main", "answer slowly")
	_, msgID := p.promptResult(2)
	receipt := p.await(-1, "receipt", isReceipt("main", msgID))
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, err := fake.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// The first content delta has been streamed: the turn is mid-flight.
	p.await(receipt.idx, "first text-delta", func(f *frame) bool {
		return isEvent("main", "assistant/chunk")(f) && dig(f.data(), "chunk", "type") == "text-delta"
	})
	sd := p.shutdown(3)
	if f := p.find(receipt.idx, isEvent("main", "turn/end")); f != nil {
		t.Errorf("turn/end after shutdown mid-turn: %s", f)
	}
	if f := p.find(receipt.idx, isStatus("main", "idle")); f != nil {
		t.Errorf("idle after shutdown mid-turn: %s", f)
	}
	if f := p.find(sd.idx, func(*frame) bool { return true }); f != nil {
		t.Errorf("frame after the shutdown response: %s", f)
	}
	t.Logf("main: %s", strings.Join(eventTypes(p.all(), "main"), " "))
	return p
}

// (i) stdin closed while a turn runs: the turn completes, the process stays
// up, SIGTERM ends it.
func scenarioStdinEOF(t *testing.T) *peer {
	fake := fakemodel.New(fakemodel.Text("still here after EOF"))
	p := startPeer(t, fake)
	p.initialize(1, p.initParams())
	p.prompt(2, "main", "say something")
	p.closeStdin()
	tr := p.collectTurn(2, "main")
	if k := reasonKind(tr.turnEnd); k != "completed" {
		t.Errorf("turn/end reason %q", k)
	}
	// The absence of an exit is the fact under test, so this one wait is a
	// fixed window.
	const window = 3 * time.Second
	if p.exitedWithin(window) {
		t.Errorf("runtime exited after stdin EOF (exit %v); README says it keeps running", p.exitState())
		return p
	}
	t.Logf("runtime still running %v after stdin EOF and idle", window)
	before := len(p.all())
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.awaitExit(waitTimeout); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
	<-p.readDone
	if after := p.all(); len(after) != before {
		t.Errorf("frames written on SIGTERM: %s", after[len(after)-1])
	}
	return p
}

// (j) error responses: bad maxTokens values, an unknown method, an unknown
// notification (ignored), then a good initialize.
func scenarioErrors(t *testing.T) *peer {
	fake := fakemodel.New()
	p := startPeer(t, fake)
	cwd, _ := json.Marshal(p.work)
	init := func(id int, maxTokens string) {
		p.send(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"initialize","params":{"cwd":` + string(cwd) +
			`,"provider":"deepseek-official","model":"deepseek-v4-flash","maxTokens":` + maxTokens + `}}`)
	}
	bad := []string{"0", "-1", "1.5", `"4096"`, "null", "9007199254740992", "true"}
	for i, v := range bad {
		init(1+i, v)
	}
	p.send(`{"jsonrpc":"2.0","id":"u1","method":"session/cancel","params":{"sessionId":"main"}}`)
	p.send(`{"jsonrpc":"2.0","method":"no/such/notification","params":{}}`)
	init(20, "2e3") // accepted: parses to 2000
	for i, v := range bad {
		f := p.await(-1, "error response", isResponse(1+i))
		if f.Error == nil || f.Error.Code != -32603 || f.Error.Message != "initialize maxTokens must be a positive safe integer" || f.Error.Data != nil {
			t.Errorf("maxTokens %s: %s", v, f.line)
		}
	}
	u := p.await(-1, "unknown method response", func(f *frame) bool { return f.Method == "" && string(f.ID) == `"u1"` })
	if u.Error == nil || u.Error.Code != -32603 || u.Error.Message != "unknown DeepSeek Harness SDK runtime method: session/cancel" || u.Error.Data != nil {
		t.Errorf("unknown method: %s", u.line)
	}
	ok := p.await(-1, "initialize 2e3", isResponse(20))
	if ok.Error != nil || !strings.Contains(string(ok.Result), "deepseek-harness-sdk-runtime") {
		t.Errorf("initialize with maxTokens 2e3: %s", ok.line)
	}
	for _, f := range p.all() {
		if f.Method != "" {
			t.Errorf("unexpected notification: %s", f)
		}
	}
	p.shutdown(21)
	if n := len(p.all()); n != len(bad)+3 {
		t.Errorf("%d frames, want one response per request (%d)", n, len(bad)+3)
	}
	return p
}

// (k) session/prompt before initialize: accepted on the default route.
func scenarioPromptBeforeInitialize(t *testing.T) *peer {
	fake := fakemodel.New(fakemodel.Text("answer on the default route"))
	p := startPeer(t, fake)
	tr := p.runTurn(1, "main", "prompt first")
	t.Logf("turn/end: %s", tr.turnEnd.line)
	if k := reasonKind(tr.turnEnd); k != "completed" {
		t.Errorf("turn/end reason %q", k)
	}
	// HEAD rule: the default route is provider and model "deepseek-official",
	// no SDK maxTokens (the adapter's default max_tokens is sent).
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Chat.Model != "deepseek-official" {
		t.Fatalf("model requests %d, want 1 with model deepseek-official", len(reqs))
	}
	if mt := reqs[0].Chat.MaxTokens; mt != nil {
		t.Logf("model request without initialize: model=%q max_tokens=%d", reqs[0].Chat.Model, *mt)
	}
	h := p.find(tr.receipt.idx, isEvent("main", "request/header"))
	if h == nil || dig(h.data(), "header", "config", "provider") != "deepseek-official" || dig(h.data(), "header", "config", "model") != "deepseek-official" {
		t.Errorf("request/header %v", h)
	} else {
		t.Logf("request/header config: %v", dig(h.data(), "header", "config"))
	}
	t.Logf("main: %s", strings.Join(eventTypes(p.all(), "main"), " "))
	p.initialize(2, p.initParams())
	p.shutdown(3)
	return p
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
