package sdkproto_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
)

func TestInitializeValidate(t *testing.T) {
	const base = `"cwd":"/w","provider":"p","model":"m"`
	effort, tokens := sdkproto.ErrReasoningEffort, sdkproto.ErrMaxTokens
	cases := []struct {
		extra string
		want  error
	}{
		{``, nil},
		{`,"maxTokens":1`, nil},
		{`,"maxTokens":1.0`, nil},
		{`,"maxTokens":2e3`, nil},
		{`,"maxTokens":9007199254740991`, nil},
		{`,"maxTokens":0`, tokens},
		{`,"maxTokens":-0`, tokens},
		{`,"maxTokens":-1`, tokens},
		{`,"maxTokens":1.5`, tokens},
		{`,"maxTokens":9007199254740992`, tokens},
		{`,"maxTokens":9007199254740993`, tokens},
		{`,"maxTokens":1e300`, tokens},
		{`,"maxTokens":1e400`, tokens},
		{`,"maxTokens":null`, tokens},
		{`,"maxTokens":"4096"`, tokens},
		{`,"maxTokens":true`, tokens},
		{`,"maxTokens":[4096]`, tokens},
		{`,"maxTokens":{"value":4096}`, tokens},
		{`,"reasoningEffort":"high"`, nil},
		{`,"reasoningEffort":" "`, nil},
		{`,"reasoningEffort":""`, effort},
		{`,"reasoningEffort":null`, effort},
		{`,"reasoningEffort":42`, effort},
		{`,"reasoningEffort":false`, effort},
		{`,"reasoningEffort":["high"]`, effort},
		{`,"reasoningEffort":{}`, effort},
		{`,"reasoningEffort":"","maxTokens":0`, effort},
		{`,"maxTokens":0,"reasoningEffort":""`, effort},
		{`,"reasoningEffort":"low","maxTokens":0`, tokens},
	}
	for _, c := range cases {
		var p sdkproto.InitializeParams
		if err := json.Unmarshal([]byte(`{`+base+c.extra+`}`), &p); err != nil {
			t.Fatalf("%s: %v", c.extra, err)
		}
		if err := p.Validate(); !errors.Is(err, c.want) || (err == nil) != (c.want == nil) {
			t.Errorf("%s: Validate() = %v, want %v", c.extra, err, c.want)
		}
	}
	built := sdkproto.InitializeParams{Cwd: "/w", ReasoningEffort: sdkproto.Effort("max"), MaxTokens: sdkproto.Tokens(4096)}
	if err := built.Validate(); err != nil {
		t.Errorf("built: %v", err)
	}
	if err := (sdkproto.InitializeParams{MaxTokens: sdkproto.Tokens(0)}).Validate(); err != tokens {
		t.Errorf("Tokens(0): %v", err)
	}
}

func TestInterpolate(t *testing.T) {
	cases := map[string]string{
		``: "undefined", `null`: "null", `true`: "true", `"a\"b"`: `a"b`, `5`: "5",
		`1.0`: "1", `2e3`: "2000", `-0`: "0", `1.5`: "1.5", `1e21`: "1e+21", `1e20`: "100000000000000000000",
		`0.000001`: "0.000001", `1e-7`: "1e-7", `123.456e-10`: "1.23456e-8", `[1,null,"x"]`: "1,,x",
		`{"a":1}`: "[object Object]", `9007199254740993`: "9007199254740992", `1e400`: "Infinity",
	}
	for in, want := range cases {
		var raw json.RawMessage
		if in != "" {
			raw = json.RawMessage(in)
		}
		if got := sdkproto.Interpolate(raw); got != want {
			t.Errorf("Interpolate(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestValidatePromptBlocks(t *testing.T) {
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	base64Err := "Image upload is not canonical base64."
	cases := []struct {
		name, blocks string
		policy       sdkproto.ImagePolicy
		want         string // "" = ok
		uploads      int
	}{
		{"text only", `[{"type":"text","text":"x"},"str",5,{"type":"file"}]`, sdkproto.ImagePolicy{NoAttachmentStore: true}, "", 0},
		{"durable ref", `[{"type":"image","attachment":{}}]`, sdkproto.ImagePolicy{NoAttachmentStore: true}, "", 0},
		{"null block", `[{"type":"text","text":"x"},null]`, sdkproto.ImagePolicy{}, "Cannot read properties of null (reading 'type')", 0},
		{"upload ok", `[{"type":"image","data":"` + png + `","mimeType":"image/png"}]`, sdkproto.ImagePolicy{}, "", 1},
		{"no store", `[{"type":"image","data":"!!","mimeType":"image/bmp"}]`, sdkproto.ImagePolicy{NoAttachmentStore: true}, "SDK image prompt requires an attachment store", 0},
		{"unpadded", `[{"type":"image","data":"aGk","mimeType":"image/png"}]`, sdkproto.ImagePolicy{}, base64Err, 0},
		{"newline", `[{"type":"image","data":"aGk=\n","mimeType":"image/png"}]`, sdkproto.ImagePolicy{}, base64Err, 0},
		{"non-zero padding bits", `[{"type":"image","data":"aGl=","mimeType":"image/png"}]`, sdkproto.ImagePolicy{}, base64Err, 0},
		{"url alphabet", `[{"type":"image","data":"-_8=","mimeType":"image/png"}]`, sdkproto.ImagePolicy{}, base64Err, 0},
		{"empty", `[{"type":"image","data":"","mimeType":"image/png"}]`, sdkproto.ImagePolicy{}, base64Err, 0},
		{"data null", `[{"type":"image","data":null,"mimeType":"image/png"}]`, sdkproto.ImagePolicy{}, base64Err, 0},
		{"base64 before mime", `[{"type":"image","data":"aGk=","mimeType":"image/bmp"},{"type":"image","data":"abc","mimeType":"image/png"}]`, sdkproto.ImagePolicy{}, base64Err, 0},
		{"bmp", `[{"type":"image","data":"aGk=","mimeType":"image/bmp"}]`, sdkproto.ImagePolicy{}, "Image type image/bmp is not accepted by this deployment.", 0},
		{"missing mime", `[{"type":"image","data":"aGk="}]`, sdkproto.ImagePolicy{}, "Image type undefined is not accepted by this deployment.", 0},
		{"numeric mime", `[{"type":"image","data":"aGk=","mimeType":5}]`, sdkproto.ImagePolicy{}, "Image type 5 is not accepted by this deployment.", 0},
		{"custom types", `[{"type":"image","data":"aGk=","mimeType":"image/png"}]`, sdkproto.ImagePolicy{AcceptedMediaTypes: []string{"image/gif"}}, "Image type image/png is not accepted by this deployment.", 0},
		{"batch hook", `[{"type":"image","data":"aGk=","mimeType":"image/bmp"}]`, sdkproto.ImagePolicy{CheckBatch: func(u []sdkproto.Upload) error {
			if len(u) != 1 || string(u[0].Data) != "hi" {
				t.Errorf("batch got %+v", u)
			}
			return errors.New("too many")
		}}, "too many", 0},
	}
	for _, c := range cases {
		var blocks []sdkproto.ContentBlock
		if err := json.Unmarshal([]byte(c.blocks), &blocks); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		uploads, err := sdkproto.ValidatePromptBlocks(blocks, c.policy)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		case len(uploads) != c.uploads:
			t.Errorf("%s: %d uploads, want %d", c.name, len(uploads), c.uploads)
		}
	}
	// Built in Go.
	up := []sdkproto.ContentBlock{sdkproto.TextBlock("x"), sdkproto.ImageUpload("image/gif", []byte{1, 2, 3})}
	uploads, err := sdkproto.ValidatePromptBlocks(up, sdkproto.ImagePolicy{})
	if err != nil || len(uploads) != 1 || uploads[0].Index != 1 || string(uploads[0].Data) != "\x01\x02\x03" {
		t.Errorf("built: %+v, %v", uploads, err)
	}
	var ie *sdkproto.ImageError
	if _, err := sdkproto.ValidatePromptBlocks([]sdkproto.ContentBlock{sdkproto.ImageUpload("image/bmp", []byte("x"))}, sdkproto.ImagePolicy{}); !errors.As(err, &ie) || ie.Code != sdkproto.CodeUnsupportedImageType {
		t.Errorf("code: %v", err)
	}
}

func TestSessionPromptValidate(t *testing.T) {
	cases := map[string]string{
		`{"sessionId":"s"}`:                      "Cannot read properties of undefined (reading 'filter')",
		`{"sessionId":"s","contentBlocks":null}`: "Cannot read properties of null (reading 'filter')",
		`{"sessionId":"s","contentBlocks":"hi"}`: "blocks.filter is not a function",
		`{"sessionId":"s","contentBlocks":{}}`:   "blocks.filter is not a function",
		`{"sessionId":"s","contentBlocks":[]}`:   "",
	}
	for in, want := range cases {
		var p sdkproto.SessionPromptParams
		if err := json.Unmarshal([]byte(in), &p); err != nil {
			t.Fatal(err)
		}
		_, err := p.Validate(sdkproto.ImagePolicy{})
		if (want == "" && err != nil) || (want != "" && (err == nil || err.Error() != want)) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
}
