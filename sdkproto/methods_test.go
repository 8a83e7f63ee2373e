package sdkproto_test

import (
	"encoding/json"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
)

func TestDescriptorNames(t *testing.T) {
	names := map[string]string{
		sdkproto.Initialize.Name():       "initialize",
		sdkproto.SessionPrompt.Name():    "session/prompt",
		sdkproto.Shutdown.Name():         "shutdown",
		sdkproto.SessionEvent.Name():     "session.event",
		sdkproto.SessionStatus.Name():    "session.status",
		sdkproto.SubagentStarted.Name():  "subagent.started",
		sdkproto.SubagentFinished.Name(): "subagent.finished",
	}
	for got, want := range names {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestPayloadsBuilt(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{sdkproto.InitializeParams{Cwd: "/w", Provider: "deepseek-official", Model: "m"},
			`{"cwd":"/w","provider":"deepseek-official","model":"m"}`},
		{sdkproto.InitializeParams{Cwd: "/w", Provider: "p", Model: "m", ReasoningEffort: sdkproto.Effort("high"), MaxTokens: sdkproto.Tokens(4096)},
			`{"cwd":"/w","provider":"p","model":"m","reasoningEffort":"high","maxTokens":4096}`},
		{sdkproto.DefaultInitializeResult(), `{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}`},
		{sdkproto.SessionPromptParams{SessionID: "main", ContentBlocks: []sdkproto.ContentBlock{sdkproto.TextBlock("say hi")}},
			`{"sessionId":"main","contentBlocks":[{"type":"text","text":"say hi"}]}`},
		{sdkproto.SessionPromptParams{SessionID: "main"}, `{"sessionId":"main","contentBlocks":[]}`},
		{sdkproto.SessionPromptResult{MessageID: "m-1"}, `{"messageId":"m-1"}`},
		{sdkproto.ShutdownResult{}, `{}`},
		{sdkproto.SessionStatusParams{SessionID: "main", Status: sdkproto.StatusIdle}, `{"sessionId":"main","status":"idle"}`},
		{sdkproto.SubagentStartedParams{ParentSessionID: "main", ChildSessionID: "c"}, `{"parentSessionId":"main","childSessionId":"c"}`},
		{sdkproto.SubagentFinishedParams{Provider: "spawn", AgentID: "c", ParentSessionID: "main", ChildSessionID: "c", Status: sdkproto.RunError, StopReason: sdkproto.StopError},
			`{"provider":"spawn","agentId":"c","parentSessionId":"main","childSessionId":"c","status":"error","stopReason":"error"}`},
		{sdkproto.SubagentFinishedParams{Status: sdkproto.RunOK, StopReason: sdkproto.StopCompleted, LastAssistantMessage: []sdkproto.ContentBlock{}},
			`{"provider":"","agentId":"","parentSessionId":"","childSessionId":"","status":"ok","stopReason":"completed","lastAssistantMessage":[]}`},
		{sdkproto.SessionEventParams{SessionID: "main", Event: sdkproto.Event{Type: sdkproto.EventTurnStart, Seq: 1, Time: 1767225600000, Data: json.RawMessage(`{"turn":1}`)}},
			`{"sessionId":"main","event":{"type":"turn/start","seq":1,"time":1767225600000,"data":{"turn":1}}}`},
	}
	for _, c := range cases {
		out, err := encode(c.v)
		if err != nil || string(out) != c.want {
			t.Errorf("got %s (%v), want %s", out, err, c.want)
		}
	}
}

func TestPayloadsRoundTrip(t *testing.T) {
	cases := []struct {
		in string
		v  json.Marshaler
	}{
		{`{"cwd":"/w","provider":"p","model":"m","maxTokens":1.0,"clientName":"go"}`, &sdkproto.InitializeParams{}},
		{`{"cwd":5,"maxTokens":null,"reasoningEffort":null}`, &sdkproto.InitializeParams{}},
		{`{"model":"m","cwd":"/w","maxTokens":9007199254740993}`, &sdkproto.InitializeParams{}},
		{`{"sessionId":"s","contentBlocks":"hello","profile":"x"}`, &sdkproto.SessionPromptParams{}},
		{`{"sessionId":"s","contentBlocks":[null,"x",{"type":"file"}]}`, &sdkproto.SessionPromptParams{}},
		{`{"sessionId":5,"status":"busy"}`, &sdkproto.SessionStatusParams{}},
		{`{"childSessionId":"main"}`, &sdkproto.SubagentFinishedParams{}},
		{`{"provider":"spawn","agentId":"c","parentSessionId":"m","childSessionId":"c","status":"ok","stopReason":"timeout","lastAssistantMessage":[]}`, &sdkproto.SubagentFinishedParams{}},
		{`{"sessionId":"main","event":42}`, &sdkproto.SessionEventParams{}},
		{`{"sessionId":"main"}`, &sdkproto.SessionEventParams{}},
		{`{"serverInfo":{"name":"x","version":1}}`, &sdkproto.InitializeResult{}},
	}
	for _, c := range cases {
		mustRoundTrip(t, c.in, c.v)
	}
}

func TestOptionalMembers(t *testing.T) {
	var p sdkproto.InitializeParams
	_ = json.Unmarshal([]byte(`{"cwd":"/w","maxTokens":1.0,"reasoningEffort":null}`), &p)
	if n, ok := p.MaxTokens.Int64(); !ok || n != 1 || string(p.MaxTokens.Raw()) != "1.0" {
		t.Errorf("maxTokens: %d %v %s", n, ok, p.MaxTokens.Raw())
	}
	if !p.ReasoningEffort.IsPresent() {
		t.Error("null reasoningEffort must count as present")
	}
	if _, ok := p.ReasoningEffort.String(); ok {
		t.Error("null is not a string")
	}
	if string(p.Member("cwd")) != `"/w"` || p.Member("provider") != nil {
		t.Error("Member")
	}
	// Modifying one member keeps the others' spelling and unknown members.
	p.Cwd = "/x"
	out, _ := p.MarshalJSON()
	if want := `{"cwd":"/x","maxTokens":1.0,"reasoningEffort":null}`; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
	var absent sdkproto.SubagentFinishedParams
	_ = json.Unmarshal([]byte(`{"status":"ok"}`), &absent)
	var empty sdkproto.SubagentFinishedParams
	_ = json.Unmarshal([]byte(`{"lastAssistantMessage":[]}`), &empty)
	if absent.LastAssistantMessage != nil || empty.LastAssistantMessage == nil || len(empty.LastAssistantMessage) != 0 {
		t.Error("absent and [] must stay distinct")
	}
}

func TestResultChecks(t *testing.T) {
	var r sdkproto.InitializeResult
	_ = json.Unmarshal([]byte(`{"serverInfo":{"name":"n","version":"v"}}`), &r)
	if r.Check() != nil || r.ServerInfo.Name != "n" {
		t.Errorf("ok result: %v", r.Check())
	}
	_ = json.Unmarshal([]byte(`{}`), &r)
	if err := r.Check(); err == nil || err.Error() != "initialize returned no server identity: {}" {
		t.Errorf("empty: %v", err)
	}
	var pr sdkproto.SessionPromptResult
	_ = json.Unmarshal([]byte(`{"accepted":true}`), &pr)
	if err := pr.Check(); err == nil || err.Error() != `session/prompt returned no message id: {"accepted":true}` {
		t.Errorf("prompt: %v", err)
	}
}
