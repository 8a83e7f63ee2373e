package sdkproto_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
)

func TestEventRoundTrip(t *testing.T) {
	for _, in := range []string{
		`{"type":"turn/start","seq":1,"time":1767225600000,"data":{"turn":1}}`,
		`{"type":"plugin/x","seq":48,"time":0,"data":{"anything":[1,2]},"ignorable":true,"extra":{"a":null}}`,
		`{"type":"user/message","seq":9,"time":1,"data":{},"surfaceOp":{"op":"replace","start":4,"end":37},"sourceEventSeqs":[4,37]}`,
		`{"type":"assistant/message","seq":26,"time":1,"data":{},"sourceEventSeqs":[],"surfaceOp":"append"}`,
		`{"type":"turn/start","seq":"3","time":1.0}`,
		`{"seq":0,"type":"x"}`,
	} {
		var e sdkproto.Event
		mustRoundTrip(t, in, &e)
	}
	for _, bad := range []string{`42`, `{"seq":1}`, `{"type":7}`, `null`, `[]`} {
		var e sdkproto.Event
		if err := json.Unmarshal([]byte(bad), &e); !errors.Is(err, sdkproto.ErrNoEnvelope) {
			t.Errorf("%s: %v, want ErrNoEnvelope", bad, err)
		}
	}
}

func TestEventBuiltAndModified(t *testing.T) {
	e := sdkproto.Event{Type: sdkproto.EventUserMessage, Seq: 2, Time: 3, Data: json.RawMessage(`{"id":"m"}`),
		SourceEventSeqs: []int64{}, SurfaceOp: sdkproto.AppendOp()}
	out, _ := encode(e)
	if want := `{"type":"user/message","seq":2,"time":3,"data":{"id":"m"},"sourceEventSeqs":[],"surfaceOp":"append"}`; string(out) != want {
		t.Errorf("got %s\nwant %s", out, want)
	}
	e.SurfaceOp = sdkproto.ReplaceOp(1, 5)
	out, _ = encode(e)
	if want := `{"type":"user/message","seq":2,"time":3,"data":{"id":"m"},"sourceEventSeqs":[],"surfaceOp":{"op":"replace","start":1,"end":5}}`; string(out) != want {
		t.Errorf("got %s\nwant %s", out, want)
	}
	var d sdkproto.Event
	_ = json.Unmarshal([]byte(`{"type":"x","seq":1,"time":2,"z":true}`), &d)
	d.Seq = 5
	out, _ = d.MarshalJSON()
	if want := `{"type":"x","seq":5,"time":2,"z":true}`; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
}

func TestKnownEventTypes(t *testing.T) {
	known := sdkproto.KnownEventTypes()
	seen := map[sdkproto.EventType]bool{}
	for _, k := range known {
		if seen[k] || !k.IsKnown() {
			t.Errorf("%s: duplicate or not known", k)
		}
		seen[k] = true
	}
	if len(known) != 48 {
		t.Errorf("%d known types, want 48", len(known))
	}
	if sdkproto.EventType("plugin/custom").IsKnown() {
		t.Error("plugin/custom is not known")
	}
}

func decodeEvent(t *testing.T, in string) sdkproto.Event {
	t.Helper()
	var e sdkproto.Event
	if err := json.Unmarshal([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestEventAccessors(t *testing.T) {
	e := decodeEvent(t, `{"type":"assistant/message","seq":1,"time":1,"data":{"turn":1,"step":2,"message":{"id":"a","role":"assistant","content":[{"type":"reasoning","text":"r"},{"type":"text","text":"hi"}],"source":{"kind":"model","provider":"p","model":"m","replayState":{"k":1}}},"usage":{"inputTokens":3,"outputTokens":4,"reasoningTokens":1},"interrupted":true}}`)
	d, err := e.AssistantMessage()
	if err != nil || d.Step != 2 || !d.Interrupted || d.Usage.OutputTokens != 4 || *d.Usage.ReasoningTokens != 1 ||
		d.Message.Source.Kind != "model" || string(d.Message.Source.Replay) != `{"k":1}` || sdkproto.FinalText(d.Message.Content) != "hi" {
		t.Errorf("AssistantMessage: %+v, %v", d, err)
	}
	if err := e.CheckAssistantContent(); err != nil {
		t.Error(err)
	}
	if _, err := e.TurnEnd(); !errors.Is(err, sdkproto.ErrEventType) {
		t.Errorf("TurnEnd on assistant/message: %v", err)
	}

	te := decodeEvent(t, `{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"hook","reason":"policy"}}}}`)
	td, err := te.TurnEnd()
	if err != nil || td.Reason.Kind != sdkproto.TurnAborted || td.Reason.Reason.Reason != "policy" {
		t.Errorf("TurnEnd: %+v, %v", td, err)
	}
	te = decodeEvent(t, `{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{"kind":"error","error":{"message":"m","code":"AUTH","status":401}}}}`)
	if td, err := te.TurnEnd(); err != nil || *td.Reason.Error.Status != 401 {
		t.Errorf("TurnEnd error: %+v, %v", td, err)
	}

	ch := decodeEvent(t, `{"type":"assistant/chunk","seq":1,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"block-end","index":1,"block":{"type":"text","text":"x","k":1}}}}`)
	cd, err := ch.AssistantChunk()
	if err != nil || cd.Chunk.Type != sdkproto.ChunkBlockEnd || cd.Chunk.Block.Text != "x" {
		t.Errorf("AssistantChunk: %+v, %v", cd, err)
	}
	fin := decodeEvent(t, `{"type":"assistant/chunk","seq":1,"time":1,"data":{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"error","failure":{"message":"m","code":"C"}}}}}`)
	if fd, err := fin.AssistantChunk(); err != nil || fd.Chunk.Reason.Kind != sdkproto.FinishError || fd.Chunk.Reason.Failure.Code != "C" {
		t.Errorf("finish: %+v, %v", fd, err)
	}

	sp := decodeEvent(t, `{"type":"agent/inbox/spliced","seq":1,"time":1,"data":{"target":"next-turn","start":0,"inserted":[{"id":"m-1","role":"user","content":[{"type":"text","text":"go"}],"source":{"kind":"user"}}]}}`)
	if !sp.ReceiptFor("m-1") || sp.ReceiptFor("m-2") {
		t.Error("ReceiptFor")
	}
	if sd, err := sp.InboxSpliced(); err != nil || len(sd.Inserted) != 1 || sd.Inserted[0].ID != "m-1" {
		t.Errorf("InboxSpliced: %+v, %v", sd, err)
	}
	for _, notReceipt := range []string{
		`{"type":"agent/inbox/spliced","seq":1,"time":1,"data":{"inserted":null}}`,
		`{"type":"agent/inbox/spliced","seq":1,"time":1,"data":{"inserted":["m-1",{"id":5}]}}`,
		`{"type":"user/message","seq":1,"time":1,"data":{"id":"m-1"}}`,
	} {
		if decodeEvent(t, notReceipt).ReceiptFor("m-1") {
			t.Errorf("%s is not a receipt", notReceipt)
		}
	}

	for in, check := range map[string]func(sdkproto.Event) error{
		`{"type":"tool/call","seq":1,"time":1,"data":{"turn":1,"step":1,"callId":"c","name":"bash","arguments":"{}"}}`:                                  func(e sdkproto.Event) error { _, err := e.ToolCall(); return err },
		`{"type":"step/start","seq":1,"time":1,"data":{"turn":1,"step":1}}`:                                                                             func(e sdkproto.Event) error { _, err := e.StepStart(); return err },
		`{"type":"llm/retry-started","seq":1,"time":1,"data":{"retryId":"r","turn":1,"step":1,"retry":1}}`:                                              func(e sdkproto.Event) error { _, err := e.LLMRetryStarted(); return err },
		`{"type":"request/context","seq":1,"time":1,"data":{"provider":"p","model":"m","contextWindow":1000000}}`:                                       func(e sdkproto.Event) error { _, err := e.RequestContext(); return err },
		`{"type":"todo/write","seq":1,"time":1,"data":{"todos":[{"content":"c","status":"pending"}]}}`:                                                  func(e sdkproto.Event) error { _, err := e.TodoWrite(); return err },
		`{"type":"session/title","seq":1,"time":1,"data":{"title":"t","messageSeqs":[4],"source":{"kind":"fallback"}}}`:                                 func(e sdkproto.Event) error { _, err := e.SessionTitle(); return err },
		`{"type":"subagent/descriptor","seq":1,"time":1,"data":{"version":2,"mode":"one-shot","provider":"spawn"}}`:                                     func(e sdkproto.Event) error { _, err := e.SubagentDescriptor(); return err },
		`{"type":"user/message","seq":1,"time":1,"data":{"id":"u","role":"user","content":[],"source":{"kind":"plugin","plugin":"x","form":"notice"}}}`: func(e sdkproto.Event) error { _, err := e.UserMessage(); return err },
	} {
		if err := check(decodeEvent(t, in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

func TestRunChecks(t *testing.T) {
	cases := map[string]string{
		`{"sessionId":"main","event":{"type":"turn/start"}}`: "",
		`{"sessionId":"main","event":42}`:                    "session.event carried no event envelope: 42",
		`{"sessionId":"main"}`:                               "session.event carried no event envelope: undefined",
		`{"sessionId":"main","event":{"type": 7}}`:           `session.event carried no event envelope: {"type":7}`,
		`{"sessionId":"main","event":{"type":"assistant/message","data":{"message":{"content":[{"text":"x"}]}}}}`: `assistant/message event carried malformed content: {"type":"assistant/message","data":{"message":{"content":[{"text":"x"}]}}}`,
		`{"sessionId":"main","event":{"type":"assistant/message"}}`:                                               `assistant/message event carried malformed content: {"type":"assistant/message"}`,
		`{"sessionId":"main","event":{"type":"assistant/message","data":{"message":{"content":[]}}}}`:             "",
	}
	for in, want := range cases {
		var p sdkproto.SessionEventParams
		if err := json.Unmarshal([]byte(in), &p); err != nil {
			t.Fatal(err)
		}
		err := p.CheckRunEvent()
		if (want == "" && err != nil) || (want != "" && (err == nil || err.Error() != want)) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
	tk := decodeEvent(t, `{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":"completed"}}`)
	if _, err := tk.TurnEndReasonKind(); err == nil || err.Error() != "turn/end event requires a string data.reason.kind" {
		t.Errorf("TurnEndReasonKind: %v", err)
	}
}
