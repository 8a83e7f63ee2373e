package scripted

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/sdkproto"
)

// These tests are internal: a Turn's actions are what it plays, so
// comparing them proves that a script read back plays what was written.

func ptr[T any](v T) *T { return &v }

// everyKind is a script with every kind of action, every member set
// somewhere, and the edge cases of each (nothing, nil, zero).
func everyKind() Script {
	return Script{Turns: []*Turn{
		NewTurn().
			Reasoning("let me ", "think").
			Text("Hel", "lo <b>&").
			Usage(sdkproto.TokenUsage{InputTokens: 20, OutputTokens: 9, CacheReadTokens: ptr(int64(1)), CacheWriteTokens: ptr(int64(2)), ReasoningTokens: ptr(int64(5))}).
			Pause(1500*time.Millisecond).
			Ask("approval/request", map[string]any{"tool": "bash"}).
			Event(sdkproto.EventTodoWrite, map[string]any{"todos": []string{"<a>"}}).
			ToolCall(ToolCall{ID: "c1", Name: "bash", Arguments: `{"command":"echo hi"}`, Output: "hi\n",
				IsError: true, Error: &sdkproto.ToolError{Name: "ToolArgsError", Code: "INVALID_ARGS"}}).
			Subagent("greet", "say hi", NewTurn().Text("hi").ModelError(sdkproto.LLMFailure{Message: "down", Code: "X"})).
			MaxTokens(),
		NewTurn().ModelError(sdkproto.LLMFailure{Message: "fake model rejects this request", Code: "INVALID_REQUEST",
			Status: ptr(400), ProviderRetryAfterMs: ptr(1.5), RequestID: "r1"}),
		Refuse("no"),
		NewTurn(),
		NewTurn().Text().Reasoning().Usage(sdkproto.TokenUsage{}).ToolCall(ToolCall{}).Subagent("", "", nil).
			Pause(0).Ask("m", nil).Event("x", nil),
	}}
}

// everyKindJSON is the JSON form of everyKind, one turn a line.
var everyKindJSON = `{"turns":[` + strings.Join([]string{
	`[{"kind":"reasoning","parts":["let me ","think"]},` +
		`{"kind":"text","parts":["Hel","lo <b>&"]},` +
		`{"kind":"usage","usage":{"inputTokens":20,"outputTokens":9,"cacheReadTokens":1,"cacheWriteTokens":2,"reasoningTokens":5}},` +
		`{"kind":"pause","duration":"1.5s"},` +
		`{"kind":"ask","method":"approval/request","params":{"tool":"bash"}},` +
		`{"kind":"event","type":"todo/write","data":{"todos":["<a>"]}},` +
		`{"kind":"tool-call","id":"c1","name":"bash","arguments":"{\"command\":\"echo hi\"}","output":"hi\n","isError":true,"error":{"name":"ToolArgsError","code":"INVALID_ARGS"}},` +
		`{"kind":"subagent","label":"greet","prompt":"say hi","child":[{"kind":"text","parts":["hi"]},{"kind":"model-error","failure":{"message":"down","code":"X"}}]},` +
		`{"kind":"max-tokens"}]`,
	`[{"kind":"model-error","failure":{"message":"fake model rejects this request","code":"INVALID_REQUEST","status":400,"providerRetryAfterMs":1.5,"requestId":"r1"}}]`,
	`[{"kind":"refuse","message":"no"}]`,
	`[]`,
	`[{"kind":"text"},{"kind":"reasoning"},{"kind":"usage","usage":{"inputTokens":0,"outputTokens":0}},{"kind":"tool-call"},{"kind":"subagent"},` +
		`{"kind":"pause","duration":"0s"},{"kind":"ask","method":"m","params":{}},{"kind":"event","type":"x","data":{}}]`,
}, ",") + `]}`

// sameTurns fails t unless got and want play the same actions and end
// alike.
func sameTurns(t *testing.T, got, want Script) {
	t.Helper()
	if len(got.Turns) != len(want.Turns) {
		t.Fatalf("%d turns, want %d", len(got.Turns), len(want.Turns))
	}
	for i := range want.Turns {
		g, w := got.Turns[i], want.Turns[i]
		if !reflect.DeepEqual(g.actions, w.actions) || g.ended != w.ended || g.err != nil {
			gj, _ := json.Marshal(actionsJSON(g.actions))
			wj, _ := json.Marshal(actionsJSON(w.actions))
			t.Errorf("turn %d: ended %v, err %v, actions\n%s\nwant ended %v\n%s", i, g.ended, g.err, gj, w.ended, wj)
		}
	}
}

// Every kind of action is written as the format says, and read back into
// the same actions.
func TestScriptJSONRoundTrip(t *testing.T) {
	s := everyKind()
	data, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != everyKindJSON {
		t.Errorf("MarshalJSON:\n%s\nwant\n%s", data, everyKindJSON)
	}
	var back Script
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	sameTurns(t, back, s)

	// Through json.Marshal, which escapes the HTML of raw JSON again: the
	// same values, if not the same bytes.
	data, err = json.Marshal(struct{ S Script }{s})
	if err != nil {
		t.Fatal(err)
	}
	var wrapped struct{ S Script }
	if err := json.Unmarshal(data, &wrapped); err != nil {
		t.Fatal(err)
	}
	if a := wrapped.S.Turns[0].actions[5]; a.Kind != actEvent || !json.Valid(a.Data) || !strings.Contains(string(a.Data), `\u003ca\u003e`) {
		t.Errorf("event through json.Marshal: %+v", a)
	}
}

// A script written by hand may spread its JSON over lines, write a tool
// call's arguments as an object, leave members out or null; Reply is not
// the JSON's to change.
func TestScriptJSONByHand(t *testing.T) {
	const byHand = `{
	  "turns": [
	    [
	      {"kind": "tool-call", "name": "bash",
	       "arguments": {"command": "echo hi",
	                     "description": "print hi"},
	       "output": "hi\n", "error": null},
	      {"kind": "event", "type": "todo/write", "data": {
	         "todos": []
	      }},
	      {"kind": "ask", "method": "m", "params": null},
	      {"kind": "pause", "duration": "2m30s"},
	      {"kind": "text", "parts": null},
	      {"kind": "subagent", "label": "l", "prompt": "p", "child": []},
	      {"kind": "subagent", "child": null},
	      {"kind": "max-tokens"}
	    ]
	  ]
	}`
	reply := func(Prompt) *Turn { return nil }
	got := Script{Turns: []*Turn{NewTurn()}, Reply: reply}
	if err := json.Unmarshal([]byte(byHand), &got); err != nil {
		t.Fatal(err)
	}
	if got.Reply == nil {
		t.Error("UnmarshalJSON dropped Reply")
	}
	sameTurns(t, got, Script{Turns: []*Turn{NewTurn().
		ToolCall(ToolCall{Name: "bash", Arguments: `{"command":"echo hi","description":"print hi"}`, Output: "hi\n"}).
		Event(sdkproto.EventTodoWrite, json.RawMessage(`{"todos":[]}`)).
		Ask("m", json.RawMessage(`null`)).
		Pause(150*time.Second).
		Text().
		Subagent("l", "p", NewTurn()).
		Subagent("", "", nil).
		MaxTokens(),
	}})
}

// Keys are compared with their escapes decoded, as JSON reads them: a
// key spelled with an escape is the key it spells.
func TestScriptJSONEscapedKeys(t *testing.T) {
	var got Script
	in := `{"t\u0075rns":[[{"\u006bind":"usage","usage":{"input\u0054okens":3,"outputTokens":4}},{"kind":"text","p\u0061rts":["a"]}]]}`
	if err := json.Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	sameTurns(t, got, Script{Turns: []*Turn{NewTurn().Usage(sdkproto.TokenUsage{InputTokens: 3, OutputTokens: 4}).Text("a")}})
}

// A script that does not read says where and why, and leaves the Script
// as it was.
func TestScriptJSONErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[]`, `scripted: the script: want an object, got []`},
		{`{"turn":[]}`, `scripted: the script: unknown member "turn" (its members: turns)`},
		{`{"turns":{}}`, `scripted: turns: want a list of turns, got {}`},
		{`{"turns":[{}]}`, `scripted: turns[0]: want a list of actions, got {}`},
		{`{"turns":[null]}`, `scripted: turns[0]: want a list of actions, got null`},
		{`{"turns":[[3]]}`, `scripted: turns[0][0]: want an object, got 3`},
		{`{"turns":[[],[{"kind":"text"},{"kind":"txt"}]]}`, `scripted: turns[1][1]: unknown kind "txt" (one of text, reasoning, usage, tool-call, subagent, model-error, max-tokens, refuse, pause, ask, event)`},
		{`{"turns":[[{"parts":["a"]}]]}`, `scripted: turns[0][0]: no kind (one of text, reasoning,`},
		{`{"turns":[[{"kind":3}]]}`, `scripted: turns[0][0].kind: want a string, got 3`},
		{`{"turns":[[{"kind":"text","part":["a"]}]]}`, `scripted: turns[0][0]: unknown member "part" of a text action (its members: kind, parts)`},
		{`{"turns":[[{"kind":"max-tokens","message":"x"}]]}`, `scripted: turns[0][0]: unknown member "message" of a max-tokens action (its members: kind)`},
		{`{"turns":[[{"kind":"text","parts":"a"}]]}`, `scripted: turns[0][0].parts: want a list of strings, got "a"`},
		{`{"turns":[[{"kind":"text","parts":["a",1]}]]}`, `scripted: turns[0][0].parts[1]: want a string, got 1`},
		{`{"turns":[[{"kind":"text"},{"kind":"text","parts":["a",null]}]]}`, `scripted: turns[0][1].parts[1]: null, not a string`},
		{`{"turns":[[{"kind":"reasoning","parts":[null]}]]}`, `scripted: turns[0][0].parts[0]: null, not a string`},
		// A member written twice, which encoding/json would read as its
		// last value, kind included; keys compared with escapes decoded.
		{`{"turns":[],"turns":[[{"kind":"text"}]]}`, `scripted: the script: member "turns" twice`},
		{`{"turns":[[{"kind":"text"},{"kind":"text","parts":["a"],"parts":["b"],"kind":"reasoning"}]]}`, `scripted: turns[0][1]: member "parts" twice`},
		{`{"turns":[[{"kind":"text","kind":"reasoning"}]]}`, `scripted: turns[0][0]: member "kind" twice`},
		{`{"turns":[[{"kind":"text","parts":["a"],"p\u0061rts":["b"]}]]}`, `scripted: turns[0][0]: member "parts" twice`},
		{`{"turns":[[{"kind":"usage","usage":{"inputTokens":1,"inputTokens":2}}]]}`, `scripted: turns[0][0].usage: member "inputTokens" twice`},
		{`{"turns":[[{"kind":"subagent","child":[{"kind":"text","parts":[],"parts":[]}]}]]}`, `scripted: turns[0][0].child[0]: member "parts" twice`},
		// The nested wire objects' keys are matched exactly, not whatever
		// their case as encoding/json matches them.
		{`{"turns":[[{"kind":"text"},{"kind":"text"},{"kind":"usage","usage":{"INPUTTOKENS":7}}]]}`, `scripted: turns[0][2].usage: unknown member "INPUTTOKENS" (its members: inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens)`},
		{`{"turns":[[{"kind":"model-error","failure":{"Message":"x"}}]]}`, `scripted: turns[0][0].failure: unknown member "Message" (its members: message, code, status, providerRetryAfterMs, requestId)`},
		{`{"turns":[[{"kind":"tool-call","error":{"name":"x","CODE":"y"}}]]}`, `scripted: turns[0][0].error: unknown member "CODE" (its members: name, code)`},
		{`{"turns":[[{"kind":"text","Parts":["a"]}]]}`, `scripted: turns[0][0]: unknown member "Parts" of a text action`},
		// Not JSON, when UnmarshalJSON is called itself.
		{`{"turns":[`, `scripted: the script: invalid JSON at offset 10: `},
		{`{"turns":[]} x`, `scripted: the script: invalid JSON at offset 13: `},
		{`null`, `scripted: the script: want an object, got null`},
		{`{"turns":[[{"kind":"usage","usage":{"inputTokens":"x"}}]]}`, `scripted: turns[0][0].usage.inputTokens: want an integer, got a JSON string`},
		{`{"turns":[[{"kind":"usage","usage":{"inputTokes":1}}]]}`, `scripted: turns[0][0].usage: unknown member "inputTokes"`},
		{`{"turns":[[{"kind":"tool-call","error":{"message":"x"}}]]}`, `scripted: turns[0][0].error: unknown member "message"`},
		{`{"turns":[[{"kind":"tool-call","isError":"yes"}]]}`, `scripted: turns[0][0].isError: want true or false, got "yes"`},
		{`{"turns":[[{"kind":"tool-call","arguments":3}]]}`, `scripted: turns[0][0].arguments: want the arguments as a JSON object or as its text (a string), got 3`},
		{`{"turns":[[{"kind":"model-error","failure":{"status":"400"}}]]}`, `scripted: turns[0][0].failure.status: want an integer, got a JSON string`},
		{`{"turns":[[{"kind":"pause","duration":1500}]]}`, `scripted: turns[0][0].duration: want a duration string such as "1.5s" or "250ms", got 1500`},
		{`{"turns":[[{"kind":"pause","duration":"soon"}]]}`, `scripted: turns[0][0].duration: want a duration string such as "1.5s" or "250ms", got "soon"`},
		// What the builder refuses, said where.
		{`{"turns":[[{"kind":"pause","duration":"-1s"}]]}`, `scripted: turns[0][0]: Pause(-1s): negative`},
		{`{"turns":[[],[{"kind":"max-tokens"},{"kind":"text"}]]}`, `scripted: turns[1][1]: text after the turn ended (Refuse, ModelError and MaxTokens end it)`},
		{`{"turns":[[{"kind":"model-error"},{"kind":"pause"}]]}`, `scripted: turns[0][1]: pause after the turn ended`},
		{`{"turns":[[{"kind":"refuse"},{"kind":"tool-call"}]]}`, `scripted: turns[0][1]: tool-call after the turn ended`},
		{`{"turns":[[{"kind":"text"},{"kind":"refuse"}]]}`, `scripted: turns[0][1]: refuse is the only action of its turn`},
		{`{"turns":[[{"kind":"subagent","child":[{"kind":"refuse"}]}]]}`, `scripted: turns[0][0]: a Subagent's child turn cannot Refuse`},
		{`{"turns":[[{"kind":"subagent","child":[{"kind":"text"},{"kind":"x"}]}]]}`, `scripted: turns[0][0].child[1]: unknown kind "x"`},
		{`{"turns":[[{"kind":"subagent","child":[{"kind":"max-tokens"},{"kind":"text"}]}]]}`, `scripted: turns[0][0].child[1]: text after the turn ended`},
		{`{"turns":[[{"kind":"subagent","child":"hi"}]]}`, `scripted: turns[0][0].child: want a list of actions, got "hi"`},
	} {
		s := Script{Turns: []*Turn{NewTurn().Text("kept")}}
		err := s.UnmarshalJSON([]byte(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\ngot  %v\nwant %s", c.in, err, c.want)
		}
		if len(s.Turns) != 1 || s.Turns[0].actions[0].Parts[0] != "kept" {
			t.Errorf("%s: the Script changed", c.in)
		}
	}
}

// What has no JSON form is refused by MarshalJSON.
func TestScriptJSONMarshalErrors(t *testing.T) {
	for _, c := range []struct {
		s    Script
		want string
	}{
		{Script{Reply: func(Prompt) *Turn { return nil }}, "scripted: Script.Reply has no JSON form"},
		{Script{Turns: []*Turn{NewTurn(), nil}}, "scripted: Script.Turns[1] is nil"},
		{Script{Turns: []*Turn{NewTurn().MaxTokens().Text("late")}}, "Script.Turns[0]: scripted: text after the turn ended"},
		{Script{Turns: []*Turn{NewTurn().Ask("m", func() {})}}, `Script.Turns[0]: scripted: Ask("m"): the params do not encode`},
	} {
		if _, err := c.s.MarshalJSON(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("MarshalJSON: %v, want %s", err, c.want)
		}
	}
}

// LoadScript names the file, and the line and column of a syntax error.
func TestLoadScript(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.json", everyKindJSON)
	s, err := LoadScript(good)
	if err != nil {
		t.Fatal(err)
	}
	sameTurns(t, s, everyKind())

	syntax := write("syntax.json", "{\"turns\": [\n  [{\"kind\": \"text\"}],\n  [x]\n]}\n")
	bad := write("bad.json", `{"turns":[[{"kind":"txt"}]]}`)
	missing := filepath.Join(dir, "missing.json")
	for path, want := range map[string]string{
		syntax:  "scripted: " + syntax + ":3:4: invalid character 'x' looking for beginning of value",
		bad:     "scripted: " + bad + `: turns[0][0]: unknown kind "txt"`,
		missing: "open " + missing + ": ",
	} {
		if _, err := LoadScript(path); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("LoadScript(%s): %v, want %s", filepath.Base(path), err, want)
		}
	}
}
