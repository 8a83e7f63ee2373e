package fuzz

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/sdkproto"
)

// paramsShape exercises the decoding paths of go-json a handler's params
// type may take: typed fields, pointers, slices of structs, maps, untyped
// values, raw values, and members it skips (any member not listed).
type paramsShape struct {
	S  string                     `json:"s"`
	N  int                        `json:"n"`
	F  float64                    `json:"f"`
	B  bool                       `json:"b"`
	P  *int                       `json:"p"`
	L  []paramsShape              `json:"l"`
	M  map[string]any             `json:"m"`
	A  any                        `json:"a"`
	R  gojson.RawMessage          `json:"r"`
	MR map[string]json.RawMessage `json:"mr"`
}

// decodes reports whether go-json decodes data into a new T, a panic
// counting as a failure (the Conn contains decoder panics).
func decodes[T any](data []byte) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	var v T
	return gojson.UnmarshalOf(data, &v) == nil
}

// FuzzParamsDecoding checks what the Conn relies on when it leaves params
// to the decoder of a typed handler (wire.Scanner.LazyParams and
// ParamsToEnd): go-json decodes a value into a handler's params type only
// if the value is valid JSON, with nothing but whitespace after it, so that
// a line it accepts is one JSON.parse accepts too.
func FuzzParamsDecoding(f *testing.F) {
	for _, s := range []string{
		`{"s":"x","n":1,"f":1.5e3,"b":true,"p":null,"l":[{"s":"y"}],"m":{"k":[1]},"a":[{}],"r":{"x":1},"mr":{"a":1},"z":[1,{"q":2}]}`,
		`{"n":01}`, `{"f":1.}`, `{"f":-}`, `{"f":.5}`, `{"n":+1}`, `{"b":tru}`, `{"l":[{},]}`, `{"s":"a",}`,
		"{\"s\":\"a\x01b\"}", `{"s":"\q"}`, `{"s":"\u12"}`, `{"s" 1}`, `{'s':1}`, `{"f":NaN}`, `{"l":[{} {}]}`,
		`{"z":01}`, `{"z":[1,]}`, `{"z":{"a":1,}}`, `{"z":"\x"}`, `{"z":tru}`, `{"z":-}`, `{"r":[1,]}`, `{"mr":{"a":01}}`,
		`{"sessionId":"s","contentBlocks":[{"type":"text","text":"x"}]}`,
		`{"sessionId":"s","contentBlocks":[{"type":"text","text":"x",}]}`,
		`[1,2]]`, `{} {}`, `{"a":1} x`, `{"a":[}`, `"unterminated`, `nul`, ``,
		// params taken to the end of a frame with members after them
		// (wire.Scanner.ParamsToEnd): trailing members are not JSON
		`{"s":"x"},"id":1`, `{"s":"x"} ,"params":{"s":"y"}`, `[1],"method":"m"`, `{"s":"x"}}`, `{"sessionId":"s"},"x":[1,]`,
	} {
		f.Add([]byte(s))
	}
	var scanner wire.Scanner
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) { // lines reach the decoder repaired
			data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
		}
		_, depth, err := scanner.Scan(data, nil)
		if err == nil || depth > goMaxDepth {
			return // valid JSON: the decoder may take it or not
		}
		for shape, ok := range map[string]bool{
			"struct":               decodes[paramsShape](data),
			"any":                  decodes[any](data),
			"json.RawMessage":      decodes[json.RawMessage](data),
			"map of raw members":   decodes[map[string]gojson.RawMessage](data),
			"[]any":                decodes[[]any](data),
			"struct{}":             decodes[struct{}](data),
			"SessionPromptParams":  decodes[sdkproto.SessionPromptParams](data),
			"InitializeParams":     decodes[sdkproto.InitializeParams](data),
			"SessionEventParams":   decodes[sdkproto.SessionEventParams](data),
			"SubagentStartedParam": decodes[sdkproto.SubagentStartedParams](data),
		} {
			if ok {
				t.Fatalf("go-json decodes %q into %s, but it is not valid JSON (%v)", data, shape, err)
			}
		}
	})
}

// goMaxDepth is the nesting encoding/json refuses beyond; JSON.parse and
// the wire scanner accept deeper values (the Conn drops them as too deep).
const goMaxDepth = 10000
