package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/sdkproto"
)

// sameExported reports the first difference between a and b in their
// exported fields, recursively; raw JSON is compared compacted.
func sameExported(a, b reflect.Value, path string) string { return compareExported(a, b, path, false) }

// sameExportedLax is sameExported with nil and empty slices equal, for the
// plain encoding/json structs of the event accessors, whose omitempty
// slices drop an empty array.
func sameExportedLax(a, b reflect.Value, path string) string {
	return compareExported(a, b, path, true)
}

func compareExported(a, b reflect.Value, path string, laxNil bool) string {
	if a.Type() != b.Type() {
		return path + ": types differ"
	}
	if a.Type() == reflect.TypeOf(json.RawMessage(nil)) {
		if (a.Len() == 0) != (b.Len() == 0) || !sameJSON(a.Bytes(), b.Bytes()) {
			return fmt.Sprintf("%s: %s != %s", path, a.Bytes(), b.Bytes())
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": nil and non-nil"
			}
			return ""
		}
		return compareExported(a.Elem(), b.Elem(), path, laxNil)
	case reflect.Struct:
		for i := range a.NumField() {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			if d := compareExported(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name, laxNil); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		// Content arrays are always written (upstream always sends them):
		// a nil one built in Go comes back empty, which means the same.
		lax := laxNil || strings.HasSuffix(path, ".Content") || strings.HasSuffix(path, ".ContentBlocks")
		if (a.IsNil() != b.IsNil() && !lax) || a.Len() != b.Len() {
			return fmt.Sprintf("%s: slices of %d (nil %v) and %d (nil %v)", path, a.Len(), a.IsNil(), b.Len(), b.IsNil())
		}
		for i := range a.Len() {
			if d := compareExported(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i), laxNil); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.Len() != b.Len() || (a.IsNil() != b.IsNil() && !laxNil) {
			return path + ": maps differ in size"
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return fmt.Sprintf("%s[%v]: missing", path, k)
			}
			if d := compareExported(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k), laxNil); d != "" {
				return d
			}
		}
		return ""
	case reflect.Float32, reflect.Float64:
		if a.Float() != b.Float() && !(a.Float() != a.Float() && b.Float() != b.Float()) {
			return fmt.Sprintf("%s: %v != %v", path, a.Float(), b.Float())
		}
		return ""
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return fmt.Sprintf("%s: %#v != %#v", path, a.Interface(), b.Interface())
		}
		return ""
	}
}

// sameJSON reports whether a and b are the same JSON value: equal after
// decoding, numbers compared by their text (encoding/json escapes <, >
// and & in the output of MarshalJSON methods, so bytes may differ).
func sameJSON(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	dec := func(x []byte) (any, bool) {
		d := json.NewDecoder(bytes.NewReader(x))
		d.UseNumber()
		var v any
		return v, d.Decode(&v) == nil
	}
	va, oka := dec(a)
	vb, okb := dec(b)
	return oka && okb && reflect.DeepEqual(va, vb)
}

func compactJSON(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

// roundTrip decodes data as a T with encoding/json. What decodes must
// encode to valid JSON that decodes again to a value with the same
// exported fields and encodes to the same bytes; with mutate, the mutated
// value must survive a round trip too, and every member of data that T
// does not know must survive it unchanged.
func roundTrip[T any](t *testing.T, name string, data []byte, known []string, mutate func(*T)) (T, bool) {
	t.Helper()
	var v T
	if json.Unmarshal(data, &v) != nil {
		return v, false
	}
	b1, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: encoding a decoded value: %v", name, err)
	}
	var v2 T
	if err := json.Unmarshal(b1, &v2); err != nil {
		t.Fatalf("%s: %s does not decode again: %v", name, b1, err)
	}
	if d := sameExported(reflect.ValueOf(v), reflect.ValueOf(v2), name); d != "" {
		t.Fatalf("%s: re-decoded value differs: %s\ninput %q\nencoded %s", name, d, data, b1)
	}
	if b2, _ := json.Marshal(v2); !bytes.Equal(b1, b2) {
		t.Fatalf("%s: encodings differ:\n%s\n%s", name, b1, b2)
	}
	if mutate == nil {
		return v, true
	}
	m := v
	mutate(&m)
	b3, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("%s: encoding a mutated value: %v", name, err)
	}
	var v3 T
	if err := json.Unmarshal(b3, &v3); err != nil {
		t.Fatalf("%s: mutated encoding %s does not decode: %v", name, b3, err)
	}
	if d := sameExported(reflect.ValueOf(m), reflect.ValueOf(v3), name); d != "" {
		t.Fatalf("%s: mutated value lost in a round trip: %s\ninput %q\nencoded %s", name, d, data, b3)
	}
	var in, out map[string]json.RawMessage
	if json.Unmarshal(data, &in) == nil && json.Unmarshal(b3, &out) == nil {
		isKnown := map[string]bool{}
		for _, k := range known {
			isKnown[k] = true
		}
		for k, raw := range in {
			if isKnown[k] {
				continue
			}
			if got, ok := out[k]; !ok || !sameJSON(got, raw) {
				t.Fatalf("%s: unknown member %q = %s lost after a change: %s", name, k, raw, b3)
			}
		}
	}
	return v, true
}

// FuzzSDKPayloads decodes arbitrary bytes as every sdkproto payload type,
// round-trips what decodes (see roundTrip), runs the typed accessors and
// checks of events and content, and feeds the bytes as the params of each
// notification to a Client, whose subscription must hand them back in
// order with the accessors working on them. Nothing may panic or hang.
func FuzzSDKPayloads(f *testing.F) {
	for _, s := range []string{
		`{"sessionId":"s","event":{"type":"assistant/message","seq":1,"time":2,"data":{"turn":1,"step":1,"message":{"id":"m","role":"assistant","content":[{"type":"text","text":"hi"},{"type":"tool-result","toolCallId":"c","content":[{"type":"image","attachment":{"attachmentId":"a","mediaType":"image/png","bytes":1,"width":2,"height":3,"originalDimensions":{"width":4,"height":5}}}],"isError":true}],"source":{"kind":"model","provider":"p","model":"m","replayState":{"x":1}}}},"surfaceOp":{"op":"replace","start":1,"end":2},"sourceEventSeqs":[1,2],"x":[1]}}`,
		`{"type":"turn/end","seq":9007199254740993,"time":1.0,"data":{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"hook","reason":"r"}}},"surfaceOp":"append","ignorable":true}`,
		`{"cwd":"/","provider":"p","model":"m","reasoningEffort":null,"maxTokens":1e3,"extra":{}}`,
		`{"provider":"spawn","agentId":"a","parentSessionId":"p","childSessionId":"c","status":"ok","stopReason":"completed","lastAssistantMessage":[{"type":"reasoning","text":"t"},"x",null]}`,
		`{"type":"image","data":"aGk=","mimeType":"image/png","unknown":1}`,
		`{"type":"tool-call","id":"1","name":"n","arguments":"{bad json"}`,
		`{"type":"agent/inbox/spliced","data":{"target":"next-turn","start":0,"inserted":[{"id":"u","role":"user","content":[],"source":{"kind":"user"}}]}}`,
		`{"type":"assistant/chunk","data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}}`,
		`"append"`, `null`, `[]`, `{"serverInfo":{"name":"n","version":"v"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip[sdkproto.InitializeParams](t, "InitializeParams", data, []string{"cwd", "provider", "model", "reasoningEffort", "maxTokens"},
			func(p *sdkproto.InitializeParams) { p.Model = "changed"; p.MaxTokens = sdkproto.Tokens(7) })
		if r, ok := roundTrip[sdkproto.InitializeResult](t, "InitializeResult", data, []string{"serverInfo"},
			func(r *sdkproto.InitializeResult) { r.ServerInfo.Name = "changed" }); ok {
			_ = r.Check()
		}
		roundTrip[sdkproto.ServerInfo](t, "ServerInfo", data, []string{"name", "version"}, func(s *sdkproto.ServerInfo) { s.Version = "9" })
		if p, ok := roundTrip[sdkproto.SessionPromptParams](t, "SessionPromptParams", data, []string{"sessionId", "contentBlocks"},
			func(p *sdkproto.SessionPromptParams) { p.SessionID = "changed" }); ok {
			_, _ = p.Validate(sdkproto.ImagePolicy{})
			_ = sdkproto.FinalText(p.ContentBlocks)
		}
		if r, ok := roundTrip[sdkproto.SessionPromptResult](t, "SessionPromptResult", data, []string{"messageId"}, nil); ok {
			_ = r.Check()
		}
		if p, ok := roundTrip[sdkproto.SessionEventParams](t, "SessionEventParams", data, []string{"sessionId", "event"},
			func(p *sdkproto.SessionEventParams) { p.SessionID = "changed" }); ok {
			_ = p.CheckEnvelope()
			_ = p.CheckRunEvent()
			eventAccessors(t, p.Event)
		}
		roundTrip[sdkproto.SessionStatusParams](t, "SessionStatusParams", data, []string{"sessionId", "status"},
			func(p *sdkproto.SessionStatusParams) { p.Status = sdkproto.StatusIdle })
		roundTrip[sdkproto.SubagentStartedParams](t, "SubagentStartedParams", data, []string{"parentSessionId", "childSessionId"},
			func(p *sdkproto.SubagentStartedParams) { p.ChildSessionID = "changed" })
		roundTrip[sdkproto.SubagentFinishedParams](t, "SubagentFinishedParams", data, []string{"provider", "agentId", "parentSessionId", "childSessionId", "status", "stopReason", "lastAssistantMessage"},
			func(p *sdkproto.SubagentFinishedParams) { p.StopReason = sdkproto.StopAborted })
		if b, ok := roundTrip[sdkproto.ContentBlock](t, "ContentBlock", data, nil, nil); ok {
			_ = b.Kind()
			_ = sdkproto.FinalText([]sdkproto.ContentBlock{b})
			_, _ = sdkproto.ValidatePromptBlocks([]sdkproto.ContentBlock{b}, sdkproto.ImagePolicy{})
		}
		roundTrip[sdkproto.ImageAttachmentRef](t, "ImageAttachmentRef", data, []string{"attachmentId", "mediaType", "bytes", "width", "height", "name", "originalDimensions"},
			func(r *sdkproto.ImageAttachmentRef) { r.Width = 12 })
		roundTrip[sdkproto.Dimensions](t, "Dimensions", data, []string{"width", "height"}, func(d *sdkproto.Dimensions) { d.Height = 3 })
		if e, ok := roundTrip[sdkproto.Event](t, "Event", data, []string{"type", "seq", "time", "data", "ignorable", "sourceEventSeqs", "surfaceOp"},
			func(e *sdkproto.Event) { e.Seq = 42 }); ok {
			eventAccessors(t, e)
		}
		roundTrip[sdkproto.SurfaceOp](t, "SurfaceOp", data, nil, nil)
		roundTrip[sdkproto.Message](t, "Message", data, []string{"id", "role", "content", "source"}, func(m *sdkproto.Message) { m.Role = "user" })
		roundTrip[sdkproto.MessageSource](t, "MessageSource", data, []string{"kind", "plugin", "form", "summary", "provider", "model", "callId", "replayState"},
			func(s *sdkproto.MessageSource) { s.Kind = "tool"; s.CallID = "c" })
		roundTrip[sdkproto.OptionalInt](t, "OptionalInt", data, nil, nil)
		roundTrip[sdkproto.OptionalString](t, "OptionalString", data, nil, nil)
		clientIntake(t, data)
	})
}

// eventAccessors runs every typed accessor and check of e; what decodes
// must round-trip.
func eventAccessors(t *testing.T, e sdkproto.Event) {
	t.Helper()
	_ = e.IsSurface()
	_ = e.CheckAssistantContent()
	_ = e.ReceiptIDs()
	_, _ = e.TurnEndReasonKind()
	_, _ = e.ChunkType()
	_ = e.Type.IsKnown()
	check := func(name string, v any, err error) {
		if err != nil {
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: encoding decoded data: %v", name, err)
		}
		p := reflect.New(reflect.TypeOf(v))
		if err := json.Unmarshal(b, p.Interface()); err != nil {
			t.Fatalf("%s: %s does not decode again: %v", name, b, err)
		}
		if d := sameExportedLax(reflect.ValueOf(v), p.Elem(), name); d != "" {
			t.Fatalf("%s: data differs after a round trip: %s", name, d)
		}
	}
	v1, err := e.InboxSpliced()
	check("InboxSpliced", v1, err)
	v2, err := e.UserMessage()
	check("UserMessage", v2, err)
	v3, err := e.AssistantChunk()
	check("AssistantChunk", v3, err)
	v4, err := e.AssistantMessage()
	check("AssistantMessage", v4, err)
	if err == nil {
		_ = sdkproto.FinalText(v4.Message.Content)
	}
	v5, err := e.ToolCall()
	check("ToolCall", v5, err)
	v6, err := e.ToolResult()
	check("ToolResult", v6, err)
	v7, err := e.TurnStart()
	check("TurnStart", v7, err)
	v8, err := e.TurnEnd()
	check("TurnEnd", v8, err)
	v9, err := e.StepStart()
	check("StepStart", v9, err)
	v10, err := e.StepEnd()
	check("StepEnd", v10, err)
	v11, err := e.RequestHeader()
	check("RequestHeader", v11, err)
	v12, err := e.RequestContext()
	check("RequestContext", v12, err)
	v13, err := e.TodoWrite()
	check("TodoWrite", v13, err)
	v14, err := e.SessionTitle()
	check("SessionTitle", v14, err)
	v15, err := e.SubagentDescriptor()
	check("SubagentDescriptor", v15, err)
	v16, err := e.LLMRetry()
	check("LLMRetry", v16, err)
	v17, err := e.LLMRetryStarted()
	check("LLMRetryStarted", v17, err)
}

// clientIntake sends data as the params of each notification the Client
// knows, and of an unknown one, then ends the input: a subscription must
// get them all, in order, with params normalised to an object, and the
// accessors must work on them.
func clientIntake(t *testing.T, data []byte) {
	t.Helper()
	if !json.Valid(data) || bytes.ContainsAny(data, "\n") {
		return
	}
	methods := []string{"session.event", "session.status", "subagent.started", "subagent.finished", "x.unknown"}
	pr, pw := io.Pipe()
	c := sdkproto.NewClient(pr, io.Discard, nil)
	sub := c.Subscribe(nil)
	tree := c.SubscribeSessionTree("root")
	go func() {
		for _, m := range methods {
			fmt.Fprintf(pw, `{"jsonrpc":"2.0","method":%q,"params":%s}`+"\n", m, data)
		}
		pw.Close()
	}()
	select {
	case <-c.Done():
	case <-time.After(waitBound):
		t.Fatal("the Client did not read its input within 10s")
	}
	for _, m := range methods {
		n, ok := sub.TryNext()
		if !ok || n.Method != m {
			t.Fatalf("subscription gave %q %v, want %q", n.Method, ok, m)
		}
		if !json.Valid(n.Params) || compactJSON(n.Params)[0] != '{' {
			t.Fatalf("params %q not normalised to an object", n.Params)
		}
		_, _ = n.SessionID()
		_, _ = n.TextDelta()
		if p, err := n.SessionEvent(); err == nil {
			_ = p.CheckRunEvent()
			eventAccessors(t, p.Event)
		}
		_, _ = n.SessionStatus()
		_, _ = n.SubagentStarted()
		_, _ = n.SubagentFinished()
	}
	for {
		if _, ok := tree.TryNext(); !ok {
			break
		}
	}
	_, _ = c.ParentOf("x")
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	_, _ = sub.Next(ctx)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
