package sdkproto_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
)

// decodeAs decodes data into a new T, failing t if it does not decode.
func decodeAs[T any](t *testing.T, data string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatalf("decoding %s as %T: %v", data, v, err)
	}
	return v
}

// Each wire value prints as its compact JSON text with %v, %+v and %s:
// decoded ones as received (unknown members and spelling kept, spaces
// gone), those built in Go as they encode.
func TestWireValuesPrintTheirJSON(t *testing.T) {
	for _, tc := range []struct {
		value any
		want  string
	}{
		{decodeAs[sdkproto.InitializeResult](t, `{"serverInfo": {"name": "rt", "version": "0.0.1"}, "extra": [1, 2]}`),
			`{"serverInfo":{"name":"rt","version":"0.0.1"},"extra":[1,2]}`},
		{sdkproto.DefaultInitializeResult(), `{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}`},
		{decodeAs[sdkproto.SessionPromptResult](t, `{"messageId": "m-1"}`), `{"messageId":"m-1"}`},
		{sdkproto.InitializeParams{Cwd: "/w", Provider: "p", Model: "m", MaxTokens: sdkproto.Tokens(4096)},
			`{"cwd":"/w","provider":"p","model":"m","maxTokens":4096}`},
		{sdkproto.SessionPromptParams{SessionID: "main", ContentBlocks: []sdkproto.ContentBlock{sdkproto.TextBlock("<hi>")}},
			`{"sessionId":"main","contentBlocks":[{"type":"text","text":"<hi>"}]}`},
		{sdkproto.ShutdownResult{}, `{}`},
		{decodeAs[sdkproto.SessionStatusParams](t, `{"sessionId":"main","status":"idle"}`), `{"sessionId":"main","status":"idle"}`},
		{decodeAs[sdkproto.ContentBlock](t, ` "not a block" `), `"not a block"`},
		{sdkproto.ImageUpload("image/png", []byte{1, 2, 3}), `{"type":"image","data":"AQID","mimeType":"image/png"}`},
		{decodeAs[sdkproto.Event](t, `{"type":"turn/start","seq":1,"time":2,"data":{"turn":1},"x":true}`),
			`{"type":"turn/start","seq":1,"time":2,"data":{"turn":1},"x":true}`},
		{sdkproto.AppendOp(), `"append"`},
		{sdkproto.TurnEndData{Turn: 2, Reason: sdkproto.TurnEndReason{Kind: sdkproto.TurnError,
			Error: &sdkproto.LLMFailure{Message: "boom", Code: "E", Status: ptr(500)}}},
			`{"turn":2,"reason":{"kind":"error","error":{"message":"boom","code":"E","status":500}}}`},
		{sdkproto.StreamChunk{Type: sdkproto.ChunkToolCallDelta, ID: "c1", Name: ptr("bash"), ArgumentsDelta: "{"},
			`{"type":"tool-call-delta","index":0,"id":"c1","name":"bash","argumentsDelta":"{"}`},
		{sdkproto.TokenUsage{InputTokens: 3, OutputTokens: 4, CacheReadTokens: ptr[int64](5)},
			`{"inputTokens":3,"outputTokens":4,"cacheReadTokens":5}`},
		{sdkproto.StreamChunk{Type: sdkproto.ChunkFinish, ReplayState: json.RawMessage("{")},
			`<invalid: json: error calling MarshalJSON for type json.RawMessage: unexpected end of JSON input>`},
	} {
		for _, verb := range []string{"%v", "%+v", "%s"} {
			if got := fmt.Sprintf(verb, tc.value); got != tc.want {
				t.Errorf("%T with %s: %s\nwant %s", tc.value, verb, got, tc.want)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// A value holding wire values prints each as JSON: no kept bytes as lists
// of numbers, no addresses of optional members.
func TestNestedWireValuesPrintTheirJSON(t *testing.T) {
	params := decodeAs[sdkproto.SessionEventParams](t,
		`{"sessionId":"main","event":{"type":"turn/end","seq":3,"time":5,"data":{"turn":1,"reason":{"kind":"error","error":{"message":"m","code":"c"}}}}}`)
	turnEnd, err := params.Event.TurnEnd()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(params)
	res := sdkproto.RunResult{
		SessionID:     "main",
		Events:        []sdkproto.Event{params.Event},
		Notifications: []sdkproto.Notification{{Method: "session.event", Params: raw, Index: 7}},
		FinishReason:  sdkproto.TurnError,
	}
	event := `{"type":"turn/end","seq":3,"time":5,"data":{"turn":1,"reason":{"kind":"error","error":{"message":"m","code":"c"}}}}`
	for _, tc := range []struct {
		format string
		value  any
		want   string
	}{
		{"%+v", res, `{SessionID:main MessageID: FinalResponse: Events:[` + event + `] ` +
			`Notifications:[#7 session.event {"sessionId":"main","event":` + event + `}] FinishReason:error}`},
		{"%+v", turnEnd.Reason, `{"kind":"error","error":{"message":"m","code":"c"}}`},
		{"%v", []sdkproto.ContentBlock{sdkproto.TextBlock("a"), sdkproto.ReasoningBlock("b")},
			`[{"type":"text","text":"a"} {"type":"reasoning","text":"b"}]`},
		{"%+v", sdkproto.InitializeRequest{Params: sdkproto.InitializeParams{Cwd: "/"}},
			`{Route:{Cwd: Provider: Model: ReasoningEffort: MaxTokens:0} Params:{"cwd":"/","provider":"","model":""}}`},
	} {
		if got := fmt.Sprintf(tc.format, tc.value); got != tc.want {
			t.Errorf("%T with %s:\n%s\nwant\n%s", tc.value, tc.format, got, tc.want)
		}
	}
}

// The optional members print their raw JSON, as a string does, or absent;
// an integer verb prints OptionalInt's value.
func TestOptionalsPrintTheirJSON(t *testing.T) {
	p := decodeAs[sdkproto.InitializeParams](t, `{"reasoningEffort":null,"maxTokens":1.5}`)
	for _, tc := range []struct {
		format string
		value  any
		want   string
	}{
		{"%v", sdkproto.OptionalInt{}, "absent"},
		{"%v", sdkproto.Tokens(4096), "4096"},
		{"%d", sdkproto.Tokens(4096), "4096"},
		{"%5d|%x", []any{sdkproto.Tokens(42), sdkproto.Tokens(255)}, "   42|ff"},
		{"%+v", p.MaxTokens, "1.5"},
		{"%d", p.MaxTokens, "%!d(string=1.5)"}, // no integer: the raw JSON, as a string
		{"%v", sdkproto.OptionalString{}, "absent"},
		{"%v", sdkproto.Effort("high"), `"high"`},
		{"%q", sdkproto.Effort("high"), `"\"high\""`},
		{"%s", p.ReasoningEffort, "null"},
	} {
		var got string
		if args, ok := tc.value.([]any); ok {
			got = fmt.Sprintf(tc.format, args...)
		} else {
			got = fmt.Sprintf(tc.format, tc.value)
		}
		if got != tc.want {
			t.Errorf("%s of %#v: %s, want %s", tc.format, tc.value, got, tc.want)
		}
	}
}

func TestNotificationAndUploadPrint(t *testing.T) {
	for _, tc := range []struct {
		value fmt.Stringer
		want  string
	}{
		{sdkproto.Notification{Method: "session.status", Params: json.RawMessage(`{ "status": "idle" }`), Index: 3},
			`#3 session.status {"status":"idle"}`},
		{sdkproto.Notification{Method: "x", Params: json.RawMessage(`{}`)}, `x {}`},
		{sdkproto.Notification{Method: "x"}, `x`},
		{sdkproto.Upload{Index: 2, MimeType: "image/png", Data: make([]byte, 1000)}, `image/png, 1000 bytes (block 2)`},
	} {
		if got := fmt.Sprint(tc.value); got != tc.want {
			t.Errorf("%s, want %s", got, tc.want)
		}
	}
}

// Every type of the package that encodes to JSON (one with MarshalJSON or
// json tags) declares String or Format, so that a type added later prints
// its JSON too.
func TestEveryWireTypePrints(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	encodes, prints := map[string]bool{}, map[string]bool{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					continue
				}
				recv := receiverName(d.Recv.List[0].Type)
				switch d.Name.Name {
				case "MarshalJSON":
					encodes[recv] = true
				case "String", "Format":
					prints[recv] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.IsExported() && hasJSONTags(ts.Type) {
						encodes[ts.Name.Name] = true
					}
				}
			}
		}
	}
	if len(encodes) < 30 {
		t.Fatalf("found %d types that encode: the parse missed some", len(encodes))
	}
	for name := range encodes {
		if !prints[name] {
			t.Errorf("%s encodes to JSON but declares neither String nor Format", name)
		}
	}
}

func receiverName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	return e.(*ast.Ident).Name
}

// hasJSONTags reports whether a field of the struct type e has a json tag.
func hasJSONTags(e ast.Expr) bool {
	st, ok := e.(*ast.StructType)
	if !ok {
		return false
	}
	for _, f := range st.Fields.List {
		if f.Tag != nil && reflect.StructTag(strings.Trim(f.Tag.Value, "`")).Get("json") != "" {
			return true
		}
	}
	return false
}
