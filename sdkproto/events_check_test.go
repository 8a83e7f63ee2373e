package sdkproto

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// accessorTypes are the types the event accessors decode data into, by
// event type.
var accessorTypes = map[EventType]reflect.Type{
	EventAgentInboxSpliced:  reflect.TypeFor[InboxSplicedData](),
	EventUserMessage:        reflect.TypeFor[Message](),
	EventAssistantChunk:     reflect.TypeFor[AssistantChunkData](),
	EventAssistantMessage:   reflect.TypeFor[AssistantMessageData](),
	EventToolCall:           reflect.TypeFor[ToolCallData](),
	EventToolResult:         reflect.TypeFor[ToolResultData](),
	EventTurnStart:          reflect.TypeFor[TurnData](),
	EventTurnEnd:            reflect.TypeFor[TurnEndData](),
	EventStepStart:          reflect.TypeFor[StepData](),
	EventStepEnd:            reflect.TypeFor[StepData](),
	EventRequestHeader:      reflect.TypeFor[RequestHeaderData](),
	EventRequestContext:     reflect.TypeFor[RequestContextData](),
	EventTodoWrite:          reflect.TypeFor[TodoWriteData](),
	EventSessionTitle:       reflect.TypeFor[SessionTitleData](),
	EventSubagentDescriptor: reflect.TypeFor[SubagentDescriptorData](),
	EventLLMRetry:           reflect.TypeFor[LLMRetryData](),
	EventLLMRetryStarted:    reflect.TypeFor[LLMRetryStartedData](),
}

// checkDataDecodes fails when dataDecodes says data decodes as t and
// encoding/json fails to decode it; it returns what each said.
func checkDataDecodes(t *testing.T, typ reflect.Type, data []byte) (fast, decodes bool) {
	t.Helper()
	fast = dataDecodes(typ, Event{Data: data})
	decodes = json.Unmarshal(data, reflect.New(typ).Interface()) == nil
	if fast && !decodes {
		t.Fatalf("%v: dataDecodes says %q decodes; encoding/json fails", typ, data)
	}
	return fast, decodes
}

// recordedData returns the data of every event of the recorded
// transcripts, by event type.
func recordedData(t *testing.T) map[EventType][][]byte {
	t.Helper()
	names, err := filepath.Glob("../testdata/transcripts/*.ndjson")
	if err != nil || len(names) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	out := map[EventType][][]byte{}
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var line struct{ Frame string }
			var frame struct {
				Params struct{ Event Event }
			}
			if json.Unmarshal(sc.Bytes(), &line) != nil || json.Unmarshal([]byte(line.Frame), &frame) != nil {
				continue
			}
			if ev := frame.Params.Event; ev.Data != nil {
				out[ev.Type] = append(out[ev.Type], ev.Data)
			}
		}
		f.Close()
	}
	return out
}

// The data the runtime writes is told to decode from the JSON alone, with
// encoding/json's verdict.
func TestDataDecodesRecorded(t *testing.T) {
	seen := 0
	for typ, datas := range recordedData(t) {
		rt := accessorTypes[typ]
		if rt == nil {
			continue
		}
		for _, data := range datas {
			if fast, decodes := checkDataDecodes(t, rt, data); decodes && !fast {
				t.Errorf("%s: dataDecodes cannot tell that %.200s decodes", typ, data)
			}
			seen++
		}
	}
	if seen < 100 {
		t.Fatalf("only %d events of known types in the transcripts", seen)
	}
}

// Changed data (members of other types, other spellings, numbers out of
// range, duplicates) is never said to decode when encoding/json refuses
// it, and mostly told apart without decoding when it does decode.
func TestDataDecodesMutated(t *testing.T) {
	recorded := recordedData(t)
	edits := [][2]string{
		{`"turn":`, `"turn":"1",`}, {`"turn":`, `"TURN":`}, {`"turn":`, `"Turn":1.5,"turn":`}, {`"step":`, `"step":1e2,"x":`},
		{`"seq":`, `"seq":null,"x":`}, {`"text":`, `"text":5,"x":`}, {`"content":`, `"content":{},"x":`}, {`"id":`, `"ıd":1,"id":`},
		{`"message":`, `"message":null,"x":`}, {`"usage":`, `"usage":[],"x":`}, {`"inputTokens":`, `"inputTokens":99999999999999999999,"x":`},
		{`"header":`, `"header":null,"x":`}, {`"system":`, `"system":true,"x":`}, {`"tools":`, `"tools":[1],"x":`}, {`"config":`, `"CONFIG":1,"config":`},
		{`"maxTokens":`, `"maxTokens":-5.5,"x":`}, {`"reason":`, `"reason":"x","y":`}, {`"kind":`, `"kind":{},"y":`}, {`"chunk":`, `"chunk":[],"y":`},
		{`"index":`, `"index":"0","y":`}, {`"block":`, `"block":null,"y":`}, {`"block":`, `"block":5,"y":`}, {`"delayMs":`, `"delayMs":1e400,"y":`},
		{`"messageSeqs":`, `"messageSeqs":[1.5],"y":`}, {`"inserted":`, `"inserted":[null],"y":`}, {`"source":`, `"source":"x","y":`},
		{`"status":`, `"status":"404","y":`}, {`"todos":`, `"todos":{},"y":`}, {`"contextWindow":`, `"contextWindow":true,"y":`},
		{`{`, `{"\u0074urn":"x",`}, {`{`, `{"ſtep":"x",`}, {`{`, `{"K":1,`}, {`"`, `"` + "\xff"},
	}
	r := rand.New(rand.NewPCG(3, 4))
	told, decoded := 0, 0
	for typ, datas := range recorded {
		rt := accessorTypes[typ]
		if rt == nil {
			continue
		}
		for _, data := range datas {
			for range 20 {
				d := data
				for range 1 + r.IntN(2) {
					e := edits[r.IntN(len(edits))]
					if i := bytes.Index(d, []byte(e[0])); i >= 0 {
						d = append(append(append([]byte(nil), d[:i]...), e[1]...), d[i+len(e[0]):]...)
					}
				}
				fast, decodes := checkDataDecodes(t, rt, d)
				if decodes {
					decoded++
					if fast {
						told++
					}
				}
			}
		}
	}
	t.Logf("of %d changed data that decode, %d told from the JSON", decoded, told)
}

// FuzzDataDecodes feeds any bytes as the data of every accessor: what
// dataDecodes says decodes, encoding/json decodes.
func FuzzDataDecodes(f *testing.F) {
	for _, s := range []string{
		`{"turn":1,"step":2,"chunk":{"type":"text-delta","index":0,"text":"a","block":{"type":"text","text":"b"},"usage":{"inputTokens":1,"outputTokens":2},"reason":{"kind":"stop","failure":{"message":"m","code":"c","status":500}}}}`,
		`{"header":{"config":{"provider":"p","model":"m","temperature":0.5,"maxTokens":5,"stop":["x"]},"adapterDefaults":{"maxTokens":true},"system":"s","tools":[{"name":"n","description":"d","parameters":{}}]},"reason":"initial"}`,
		`{"target":"next-turn","start":0,"inserted":[{"id":"u","role":"user","content":[],"source":{"kind":"user"}}]}`,
		`{"turn":1,"reason":{"kind":"aborted","error":{"message":"m","code":"c"},"reason":{"kind":"hook","reason":"r"}}}`,
		`{"Turn":1,"STEP":"x"}`, `{"todos":[{"content":"c","status":"pending"}],"title":"t","messageSeqs":[1,2],"source":{"kind":"k"}}`, `null`, `[]`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	types := make([]reflect.Type, 0, len(accessorTypes))
	for _, rt := range accessorTypes {
		types = append(types, rt)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, rt := range types {
			checkDataDecodes(t, rt, data)
		}
	})
}

// int64s decodes sourceEventSeqs as encoding/json decodes a []int64.
func TestInt64s(t *testing.T) {
	for _, in := range []string{
		`[]`, `[1,2,3]`, `[ 1 , -2 ]`, `[null,5]`, `[1.5]`, `[1e2]`, `["1"]`, `[true]`, `[[1]]`, `[{}]`, `[-0]`,
		`[9223372036854775807]`, `[9223372036854775808]`, `[-9223372036854775808]`, `null`, `{}`, `"x"`, `5`,
		// Written plainly (read in one pass) or nearly so.
		`[ ]`, `[12,13,14,15,16,17,18]`, ` [ -1 , 0 ,-0, 9223372036854775807 ] `, `[-9223372036854775809]`, `[1,"a,b"]`,
	} {
		var want []int64
		err := json.Unmarshal([]byte(in), &want)
		wantOK := err == nil && kindOf(json.RawMessage(in)) == kindArray
		got, ok := int64s(json.RawMessage(in))
		if ok != wantOK || ok && !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("int64s(%s) = %v %v; encoding/json: %v %v", in, got, ok, want, err)
		}
	}
}
