package sdkproto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/vectortest"
	"github.com/linerpc/linerpc/sdkproto"
)

// The per-file runners of TestVectorsTypes (vectors_types_test.go).

// isValidationReply reports whether a runtime reply message is produced by
// ValidatePromptBlocks or SessionPromptParams.Validate.
func isValidationReply(msg string) bool {
	return strings.HasPrefix(msg, "Image upload is not canonical base64.") ||
		strings.HasPrefix(msg, "Image type ") ||
		msg == sdkproto.ErrNoAttachmentStore.Error() ||
		strings.HasPrefix(msg, "Cannot read properties of") ||
		msg == "blocks.filter is not a function"
}

func policyOf(v vectortest.Vector) sdkproto.ImagePolicy {
	p := sdkproto.ImagePolicy{}
	if raw, ok := v.Given["attachmentStore"]; ok && string(raw) == "false" {
		p.NoAttachmentStore = true
	}
	if raw, ok := v.Given["acceptedMediaTypes"]; ok {
		_ = json.Unmarshal(raw, &p.AcceptedMediaTypes)
	}
	return p
}

// checkPrompt runs the prompt validation against the expected reply.
func checkPrompt(t *testing.T, tl *tally, file string, v vectortest.Vector, p sdkproto.SessionPromptParams) {
	t.Helper()
	_, err := p.Validate(policyOf(v))
	msg, isErr := replyError(t, v)
	var replyWant json.RawMessage
	if isErr {
		var r struct {
			Error struct {
				Message json.RawMessage `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(v.Expect["reply"], &r)
		replyWant = r.Error.Message
	}
	switch {
	case v.Expect["reply"] == nil || string(v.Expect["reply"]) == `"{{unspecified}}"`:
		return
	case !isErr:
		if err != nil {
			t.Errorf("reply: validation failed (%v), want success", err)
		}
	case isValidationReply(msg) || msg == "{{string}}":
		if err == nil {
			t.Fatalf("reply: validation passed, want %q", msg)
		}
		got, _ := json.Marshal(err.Error())
		if e := vectortest.Match(replyWant, got); e != nil {
			t.Errorf("reply message: %v", e)
		}
		if code, ok := expectString(v, "attachmentCode"); ok {
			var ie *sdkproto.ImageError
			if !errors.As(err, &ie) || ie.Code != code {
				t.Errorf("attachmentCode: got %v, want %s", err, code)
			}
			tl.checked(file, "attachmentCode")
		}
	default:
		// A later step (state, the store's image decoding) fails: the
		// checks of this package must let the prompt through.
		if err != nil {
			t.Errorf("reply: validation failed (%v), but the expected error %q comes later", err, msg)
		}
		if code, ok := expectString(v, "attachmentCode"); ok && code != "" {
			tl.checked(file, "attachmentCode")
		}
	}
	tl.checked(file, "reply")
}

func runContentVector(t *testing.T, tl *tally, v vectortest.Vector) {
	const file = "content-blocks.ndjson"
	tl.ran(file)
	params := frameParams(t, v)
	if v.Direction == "client->server" {
		var p sdkproto.SessionPromptParams
		roundTrip(t, params, &p)
		tl.checked(file, "roundtrip")
		if want, ok := v.Expect["blocks"]; ok {
			checkBlocks(t, want, p.ContentBlocks)
			tl.checked(file, "blocks")
		}
		checkPrompt(t, tl, file, v, p)
		return
	}
	var p sdkproto.SessionEventParams
	roundTrip(t, params, &p)
	tl.checked(file, "roundtrip")
	var content []sdkproto.ContentBlock
	switch p.Event.Type {
	case sdkproto.EventAssistantMessage:
		if d, err := p.Event.AssistantMessage(); err == nil {
			content = d.Message.Content
		}
	case sdkproto.EventToolResult:
		d, err := p.Event.ToolResult()
		if err != nil {
			t.Fatal(err)
		}
		content = d.Message.Content
	}
	if want, ok := v.Expect["blocks"]; ok {
		checkBlocks(t, want, content)
		tl.checked(file, "blocks")
	}
	if _, ok := v.Expect["runValidation"]; ok {
		checkRun(t, v, "runValidation", p.CheckRunEvent())
		tl.checked(file, "runValidation")
	}
	if want, ok := expectString(v, "finalResponseText"); ok {
		if got := sdkproto.FinalText(content); got != want {
			t.Errorf("finalResponseText: got %q, want %q", got, want)
		}
		tl.checked(file, "finalResponseText")
	}
}

func runEventVector(t *testing.T, tl *tally, v vectortest.Vector) {
	const file = "session-events.ndjson"
	tl.ran(file)
	var p sdkproto.SessionEventParams
	roundTrip(t, frameParams(t, v), &p)
	tl.checked(file, "roundtrip")
	e := p.Event
	if want, ok := expectString(v, "eventType"); ok {
		if string(e.Type) != want {
			t.Errorf("eventType: got %q, want %q", e.Type, want)
		}
		tl.checked(file, "eventType")
	}
	checkBool := func(key string, got bool) {
		if raw, ok := v.Expect[key]; ok {
			if want := string(raw) == "true"; got != want {
				t.Errorf("%s: got %v, want %v", key, got, want)
			}
			tl.checked(file, key)
		}
	}
	checkBool("known", e.Type.IsKnown())
	checkBool("surface", e.IsSurface())
	if _, ok := v.Expect["runValidation"]; ok {
		var err error
		if p.SessionID == v.GivenString("rootSession") {
			err = p.CheckRunEvent()
		}
		checkRun(t, v, "runValidation", err)
		tl.checked(file, "runValidation")
	}
	if raw, ok := v.Expect["isReceiptFor"]; ok {
		ids := e.ReceiptIDs()
		if string(raw) == "null" {
			if len(ids) != 0 {
				t.Errorf("isReceiptFor: got %v, want none", ids)
			}
		} else {
			want, _ := expectString(v, "isReceiptFor")
			if len(ids) != 1 || !e.ReceiptFor(want) || e.ReceiptFor(want+"x") {
				t.Errorf("isReceiptFor: got %v, want %s", ids, want)
			}
			if _, err := e.InboxSpliced(); err != nil {
				t.Errorf("InboxSpliced: %v", err)
			}
		}
		tl.checked(file, "isReceiptFor")
	}
	if want, ok := expectString(v, "chunkType"); ok {
		got, isString := e.ChunkType()
		if !isString || string(got) != want {
			t.Errorf("chunkType: got %q, want %q", got, want)
		}
		if _, err := e.AssistantChunk(); err != nil {
			t.Errorf("AssistantChunk: %v", err)
		}
		tl.checked(file, "chunkType")
	}
	if want, ok := expectString(v, "finishReason"); ok {
		got, err := e.TurnEndReasonKind()
		var pe *sdkproto.ProtocolError
		switch {
		case want == "SdkProtocolError":
			if !errors.As(err, &pe) || pe.Message != "turn/end event requires a string data.reason.kind" {
				t.Errorf("finishReason: got %q, %v; want the protocol error", got, err)
			}
		case err != nil || string(got) != want:
			t.Errorf("finishReason: got %q, %v; want %q", got, err, want)
		}
		tl.checked(file, "finishReason")
	}
	if want, ok := expectString(v, "finalResponseText"); ok {
		d, err := e.AssistantMessage()
		if err != nil {
			t.Fatal(err)
		}
		if got := sdkproto.FinalText(d.Message.Content); got != want {
			t.Errorf("finalResponseText: got %q, want %q", got, want)
		}
		tl.checked(file, "finalResponseText")
	}
}

func runNotificationVector(t *testing.T, tl *tally, v vectortest.Vector) {
	const file = "notifications.ndjson"
	tl.ran(file)
	var f struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(v.Frame, &f); err != nil {
		t.Fatal(err)
	}
	var decoded map[string]any
	var encoded []byte
	decode := func(p any) {
		roundTrip(t, f.Params, p)
		tl.checked(file, "roundtrip")
		encoded, _ = json.Marshal(p)
		_ = json.Unmarshal(encoded, &decoded)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(f.Params), []byte("{")) {
		return // transport normalisation, not a typed payload
	}
	switch f.Method {
	case sdkproto.SessionStatus.Name():
		var p sdkproto.SessionStatusParams
		decode(&p)
		decoded["type"] = "SessionStatusNotification"
	case sdkproto.SessionEvent.Name():
		var p sdkproto.SessionEventParams
		decode(&p)
		decoded = map[string]any{"type": "SessionEventNotification", "sessionId": p.SessionID, "eventType": string(p.Event.Type)}
		if _, ok := v.Expect["rootRunValidation"]; ok {
			checkRun(t, v, "rootRunValidation", p.CheckRunEvent())
			tl.checked(file, "rootRunValidation")
		}
	case sdkproto.SubagentStarted.Name():
		var p sdkproto.SubagentStartedParams
		decode(&p)
		decoded["type"] = "SubagentStartedNotification"
	case sdkproto.SubagentFinished.Name():
		var p sdkproto.SubagentFinishedParams
		decode(&p)
		decoded["type"] = "SubagentFinishedNotification"
	default:
		return // unknown method: no typed payload
	}
	if want, ok := v.Expect["params"]; ok {
		if err := vectortest.Match(want, encoded); err != nil {
			t.Errorf("params: %v", err)
		}
		tl.checked(file, "params")
	}
	if want, ok := v.Expect["decoded"]; ok {
		got, _ := json.Marshal(decoded)
		if err := vectortest.Match(want, got); err != nil {
			t.Errorf("decoded: %v", err)
		}
		tl.checked(file, "decoded")
	}
}

func runRequestVector(t *testing.T, tl *tally, v vectortest.Vector) {
	const file = "requests.ndjson"
	tl.ran(file)
	if want, ok := v.Expect["client"]; ok {
		checkResult(t, tl, v, want)
		return
	}
	method, _ := expectString(v, "method")
	params := frameParams(t, v)
	if params == nil {
		params = json.RawMessage(`{}`)
	}
	switch method {
	case sdkproto.Initialize.Name():
		var p sdkproto.InitializeParams
		if err := json.Unmarshal(params, &p); err != nil {
			t.Fatal(err)
		}
		err := p.Validate()
		msg, isErr := replyError(t, v)
		switch {
		case isErr && (msg == sdkproto.ErrReasoningEffort.Error() || msg == sdkproto.ErrMaxTokens.Error()):
			if err == nil || err.Error() != msg {
				t.Errorf("reply: Validate() = %v, want %q", err, msg)
			}
		default:
			if err != nil {
				t.Errorf("reply: Validate() = %v, want success (expected reply %s)", err, v.Expect["reply"])
			}
		}
		tl.checked(file, "reply")
		if want, ok := v.Expect["decoded"]; ok {
			got, _ := json.Marshal(p)
			if err := vectortest.Match(want, got); err != nil {
				t.Errorf("decoded: %v", err)
			}
			tl.checked(file, "decoded")
		}
	case sdkproto.SessionPrompt.Name():
		var p sdkproto.SessionPromptParams
		if err := json.Unmarshal(params, &p); err != nil {
			t.Fatal(err)
		}
		if msg, isErr := replyError(t, v); !isErr || isValidationReply(msg) {
			checkPrompt(t, tl, file, v, p)
		}
		if want, ok := v.Expect["decoded"]; ok {
			got, _ := json.Marshal(p)
			if err := vectortest.Match(want, got); err != nil {
				t.Errorf("decoded: %v", err)
			}
			tl.checked(file, "decoded")
		}
	}
}

// checkResult applies the client-side result checks to a response vector.
func checkResult(t *testing.T, tl *tally, v vectortest.Vector, want json.RawMessage) {
	var pending struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(v.Expect["pending"], &pending)
	var frame struct {
		Result json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(v.Frame, &frame)
	var err error
	switch pending.Method {
	case sdkproto.Initialize.Name():
		var r sdkproto.InitializeResult
		_ = r.UnmarshalJSON(frame.Result)
		err = r.Check()
	case sdkproto.SessionPrompt.Name():
		var r sdkproto.SessionPromptResult
		_ = r.UnmarshalJSON(frame.Result)
		err = r.Check()
	case sdkproto.Shutdown.Name():
		var r sdkproto.ShutdownResult
		if e := json.Unmarshal(frame.Result, &r); e != nil {
			t.Errorf("shutdown result: %v", e)
		}
	}
	var c struct {
		Outcome string `json:"outcome"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(want, &c)
	if c.Outcome == "ok" && err != nil {
		t.Errorf("client: got %v, want ok", err)
	}
	if c.Outcome == "SdkProtocolError" && (err == nil || err.Error() != c.Message) {
		t.Errorf("client: got %v, want %q", err, c.Message)
	}
	tl.checked("requests.ndjson", "client")
}
