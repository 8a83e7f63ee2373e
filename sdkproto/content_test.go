package sdkproto_test

import (
	"bytes"
	"encoding/json"
	"testing"

	gojson "github.com/goccy/go-json"
	"github.com/linerpc/linerpc/sdkproto"
)

// mustRoundTrip decodes in into v and checks that MarshalJSON gives in back
// byte for byte, and that a frame encoder writes its compact form.
func mustRoundTrip(t *testing.T, in string, v json.Marshaler) {
	t.Helper()
	if err := json.Unmarshal([]byte(in), v); err != nil {
		t.Fatalf("decode %s: %v", in, err)
	}
	out, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip:\n got %s\nwant %s", out, in)
	}
	var want bytes.Buffer
	_ = json.Compact(&want, []byte(in))
	if framed, err := encode(v); err != nil || !bytes.Equal(framed, want.Bytes()) {
		t.Errorf("encoded in a frame: got %s (%v), want %s", framed, err, want.Bytes())
	}
}

// encode encodes v as the rpc package writes frames: go-json without HTML
// escaping. MarshalJSON's own bytes are checked where whitespace matters.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := gojson.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func TestContentBlockRoundTrip(t *testing.T) {
	cases := []struct {
		in   string
		kind sdkproto.BlockKind
	}{
		{`{"type":"text","text":"hi"}`, sdkproto.KindText},
		{`{"text":"hi","type":"text"}`, sdkproto.KindText},
		{`{"type":"text","text":"hi","cacheControl":{"type":"ephemeral"}}`, sdkproto.KindText},
		{`{"type":"text","text":42}`, sdkproto.KindText},
		{`{"type":"text"}`, sdkproto.KindText},
		{`{"type":"reasoning","text":"hmm"}`, sdkproto.KindReasoning},
		{`{"type":"image","attachment":{"attachmentId":"sha256:ab","mediaType":"image/webp","bytes":2048,"width":640,"height":480,"name":"s.webp","originalDimensions":{"width":1280,"height":960}}}`, sdkproto.KindImage},
		{`{"type":"image","attachment":{"mediaType":"image/png","bytes":1.0,"width":1,"height":1,"x":[1]}}`, sdkproto.KindImage},
		{`{"type":"image"}`, sdkproto.KindImage},
		{`{"type":"image","data":"aGk=","mimeType":"image/png","name":"p.png"}`, sdkproto.KindImageUpload},
		{`{"type":"image","data":null,"mimeType":"image/png"}`, sdkproto.KindImageUpload},
		{`{"type":"image", "data":"aGk="}`, sdkproto.KindImageUpload},
		{`{ "type" : "citation" , "url":"u" }`, sdkproto.KindUnknown},
		{`{"type":"image","data":"aGk=","mimeType":"image/png","attachment":{"attachmentId":"a","mediaType":"image/png","bytes":1,"width":1,"height":1}}`, sdkproto.KindImageUpload},
		{`{"type":"tool-call","id":"c1","name":"bash","arguments":"{\"command\": "}`, sdkproto.KindToolCall},
		{`{"type":"tool-call","id":"c1","name":"bash","arguments":{"command":"ls"}}`, sdkproto.KindToolCall},
		{`{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"x"},{"type":"diff","patch":"@@"}],"isError":false}`, sdkproto.KindToolResult},
		{`{"type":"tool-result","toolCallId":"c1","content":[]}`, sdkproto.KindToolResult},
		{`{"type":"citation","url":"https://example.com","n":1.50}`, sdkproto.KindUnknown},
		{`{"text":"orphan"}`, sdkproto.KindUnknown},
		{`{"type":7}`, sdkproto.KindUnknown},
		{`{"type":"text","text":"a","text":"b"}`, sdkproto.KindText},
		{`{"type":"text","text":"\u00e9<&>"}`, sdkproto.KindText},
		{`"hello"`, sdkproto.KindUnknown},
		{`5`, sdkproto.KindUnknown},
		{`null`, sdkproto.KindUnknown},
		{`[{"type":"text"}]`, sdkproto.KindUnknown},
	}
	for _, c := range cases {
		var b sdkproto.ContentBlock
		mustRoundTrip(t, c.in, &b)
		if b.Kind() != c.kind {
			t.Errorf("%s: kind %s, want %s", c.in, b.Kind(), c.kind)
		}
	}
	var b sdkproto.ContentBlock
	_ = json.Unmarshal([]byte(`{"type":"text","text":"a","text":"b"}`), &b)
	if b.Text != "b" {
		t.Errorf("duplicate member: got %q, want the last one", b.Text)
	}
}

func TestContentBlockModified(t *testing.T) {
	cases := []struct {
		in     string
		modify func(*sdkproto.ContentBlock)
		want   string
	}{
		{`{"text":"a", "x":{"k" : 1},"type":"text"}`, func(b *sdkproto.ContentBlock) { b.Text = "b" },
			`{"text":"b","x":{"k" : 1},"type":"text"}`},
		{`{"type":"text","text":42,"z":1}`, func(b *sdkproto.ContentBlock) { b.Type = "reasoning" },
			`{"type":"reasoning","text":42,"z":1}`},
		{`{"type":"text","text":42}`, func(b *sdkproto.ContentBlock) { b.Text = "now" },
			`{"type":"text","text":"now"}`},
		{`{"type":"tool-result","toolCallId":"c","content":[{"type":"x","y":2}],"isError":true}`,
			func(b *sdkproto.ContentBlock) { b.IsError = nil },
			`{"type":"tool-result","toolCallId":"c","content":[{"type":"x","y":2}]}`},
		{`{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"a","k":0}]}`,
			func(b *sdkproto.ContentBlock) { b.Content[0].Text = "b" },
			`{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"b","k":0}]}`},
		{`{"type":"image","attachment":{"attachmentId":"a","mediaType":"image/png","bytes":1,"width":1,"height":1,"q":true}}`,
			func(b *sdkproto.ContentBlock) { b.Attachment.Name = "n.png" },
			`{"type":"image","attachment":{"attachmentId":"a","mediaType":"image/png","bytes":1,"width":1,"height":1,"q":true,"name":"n.png"}}`},
	}
	for _, c := range cases {
		var b sdkproto.ContentBlock
		if err := json.Unmarshal([]byte(c.in), &b); err != nil {
			t.Fatal(err)
		}
		c.modify(&b)
		out, _ := b.MarshalJSON()
		if string(out) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, out, c.want)
		}
	}
}

func TestContentBlockBuilt(t *testing.T) {
	yes := true
	cases := []struct {
		b    sdkproto.ContentBlock
		want string
	}{
		{sdkproto.TextBlock("hi <b>"), `{"type":"text","text":"hi <b>"}`},
		{sdkproto.TextBlock(""), `{"type":"text","text":""}`},
		{sdkproto.ReasoningBlock("r"), `{"type":"reasoning","text":"r"}`},
		{sdkproto.ImageUpload("image/png", []byte("hi")), `{"type":"image","data":"aGk=","mimeType":"image/png"}`},
		{sdkproto.ImageBlock(sdkproto.ImageAttachmentRef{AttachmentID: "a", MediaType: "image/png", Bytes: 1, Width: 2, Height: 3}),
			`{"type":"image","attachment":{"attachmentId":"a","mediaType":"image/png","bytes":1,"width":2,"height":3}}`},
		{sdkproto.ImageBlock(sdkproto.ImageAttachmentRef{AttachmentID: "a", Name: "n", OriginalDimensions: &sdkproto.Dimensions{Width: 4, Height: 5}}),
			`{"type":"image","attachment":{"attachmentId":"a","mediaType":"","bytes":0,"width":0,"height":0,"name":"n","originalDimensions":{"width":4,"height":5}}}`},
		{sdkproto.ToolCallBlock("c", "bash", `{"a":1}`), `{"type":"tool-call","id":"c","name":"bash","arguments":"{\"a\":1}"}`},
		{sdkproto.ToolResultBlock("c", nil, false), `{"type":"tool-result","toolCallId":"c","content":[]}`},
		{sdkproto.ToolResultBlock("c", []sdkproto.ContentBlock{sdkproto.TextBlock("x")}, true),
			`{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"x"}],"isError":true}`},
		{sdkproto.ContentBlock{Type: "tool-result", ToolCallID: "c", Content: []sdkproto.ContentBlock{}, IsError: &yes},
			`{"type":"tool-result","toolCallId":"c","content":[],"isError":true}`},
	}
	for _, c := range cases {
		out, err := encode(c.b)
		if err != nil || string(out) != c.want {
			t.Errorf("got %s (%v), want %s", out, err, c.want)
		}
		var back sdkproto.ContentBlock
		mustRoundTrip(t, c.want, &back)
		if back.Kind() != c.b.Kind() {
			t.Errorf("%s: kind %s after decode, %s before", c.want, back.Kind(), c.b.Kind())
		}
	}
}

func TestFinalText(t *testing.T) {
	cases := map[string]string{
		`[{"type":"reasoning","text":"r"},{"type":"text","text":"a"},{"type":"tool-call","id":"c","name":"n","arguments":"{}"},{"type":"text","text":"b"}]`: "ab",
		`[]`: "",
		`[{"type":"text","text":5},{"type":"text"},{"type":"text","text":null},{"type":"text","text":true}]`: "5true",
		`["text",{"type":"citation","text":"no"}]`:                                                           "",
	}
	for in, want := range cases {
		var blocks []sdkproto.ContentBlock
		if err := json.Unmarshal([]byte(in), &blocks); err != nil {
			t.Fatal(err)
		}
		if got := sdkproto.FinalText(blocks); got != want {
			t.Errorf("%s: got %q, want %q", in, got, want)
		}
	}
	if got := sdkproto.FinalText([]sdkproto.ContentBlock{sdkproto.TextBlock("x"), sdkproto.TextBlock("y")}); got != "xy" {
		t.Errorf("built: %q", got)
	}
}
