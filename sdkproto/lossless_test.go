package sdkproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/wire"
)

// tokenMembers is what parseObject must agree with: encoding/json's token
// decoder walking the object, less the white space bytes.TrimSpace
// removes around it, member by member (duplicates included).
func tokenMembers(data []byte) (keys []string, values []json.RawMessage, ok bool, err error) {
	data = bytes.TrimSpace(data)
	if kindOf(data) != kindObject {
		return nil, nil, false, nil
	}
	d := json.NewDecoder(bytes.NewReader(data))
	if _, err := d.Token(); err != nil {
		return nil, nil, true, err
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, nil, true, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, nil, true, err
		}
		keys, values = append(keys, key), append(values, v)
	}
	if _, err := d.Token(); err != nil {
		return nil, nil, true, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, nil, true, errors.New("trailing data")
	}
	return keys, values, true, nil
}

// checkParse compares parseObject with tokenMembers on data.
func checkParse(t *testing.T, data []byte) {
	t.Helper()
	ms, ok, err := parseObject(data)
	keys, values, wantOK, wantErr := tokenMembers(data)
	if ok != wantOK || (err == nil) != (wantErr == nil) {
		t.Fatalf("parseObject(%.80q) = ok %v, err %v; the token decoder: ok %v, err %v", data, ok, err, wantOK, wantErr)
	}
	if err != nil {
		// Too deep for encoding/json is reported in its words.
		if strings.Contains(wantErr.Error(), "exceeded max depth") && err.Error() != wantErr.Error() {
			t.Fatalf("parseObject(%.80q): %v, the token decoder: %v", data, err, wantErr)
		}
		return
	}
	if len(ms) != len(keys) {
		t.Fatalf("parseObject(%.80q): %d members, the token decoder %d", data, len(ms), len(keys))
	}
	obj := bytes.TrimSpace(data) // what the spans locate members in
	for i, m := range ms {
		if key, value := m.Key(obj, nil), m.Value(obj); string(key) != keys[i] || !bytes.Equal(value, values[i]) {
			t.Fatalf("parseObject(%.80q): member %d is %q=%.40q, the token decoder %q=%.40q", data, i, key, value, keys[i], values[i])
		}
	}
}

// parseObject reads an object as encoding/json's token decoder does: the
// same members, the same verdict on invalid input, the same depth bound.
func TestParseObject(t *testing.T) {
	for _, in := range []string{
		`{}`, ` {"a":1} `, "\u00a0{\"a\":1}\u2028", `{"a":1,"a":2}`, `{"\u0061":"\u00e9","b":[1, {"c" : null}]}`,
		"{\"k\xff\":\"v\xfe\"}", `{"\ud800":1}`, `{"a":1}{}`, `{"a":1} x`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `{"a":01}`,
		`{"a":"` + "\x01" + `"}`, `{`, `{"a":`, `[]`, `null`, `"x"`, ``, `  `, `{"a":tru}`, `{"a":[1,]}`,
	} {
		checkParse(t, []byte(in))
	}
	for _, depth := range []int{9999, 10000, 10001, 10002} {
		value := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		checkParse(t, []byte(`{"a":1,"deep":`+value+`}`))
		value = `{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
		checkParse(t, []byte(`{"a":1,"deep":`+value+`,"b":`+value+`}`))
	}
	// Mutations of a payload: white space, duplicates, escapes, bytes
	// removed or added.
	base := []byte(`{"sessionId":"s","event":{"type":"assistant/message","seq":1,"time":2,"data":{"message":{"content":[{"type":"text","text":"a\"b\\nc"}]}},"surfaceOp":"append"}}`)
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		data := append([]byte(nil), base...)
		for range 1 + r.IntN(3) {
			i := r.IntN(len(data) + 1)
			switch r.IntN(5) {
			case 0:
				data = append(data[:i], append([]byte{" \t\n\r"[r.IntN(4)]}, data[i:]...)...)
			case 1:
				if i < len(data) {
					data = append(data[:i], data[i+1:]...)
				}
			case 2:
				data = append(data[:i], append([]byte{`{}[]:,"\\x1\xff`[r.IntN(12)]}, data[i:]...)...)
			case 3:
				data = bytes.Replace(data, []byte(`"type"`), []byte(`"t\u0079pe"`), 1)
			case 4:
				data = bytes.Replace(data, []byte(`{"`), []byte(`{"seq":[],"`), 1)
			}
		}
		checkParse(t, data)
	}
}

// FuzzParseObject compares parseObject with encoding/json's token decoder
// on any bytes.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":[2]}`, ` {"\u0061" : {"b":"}"}} `, `{"a":1,}`, "{\"\xff\":1}", `{"a":1}{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data) })
}

// marshal writes the package's common types itself: as encoding/json does.
func TestMarshalAsStringify(t *testing.T) {
	var ev Event
	if err := json.Unmarshal([]byte(` { "type" : "x", "data" : { "a" : [ 1 ] }, "seq":1 } `), &ev); err != nil {
		t.Fatal(err)
	}
	var op *SurfaceOp
	for _, v := range []any{
		"", "plain", "quote \" backslash \\ controls \x00\x01\b\f\n\r\t\x1f\x7f", "<html> & \u2028\u2029 é 😀",
		"invalid \xff \xe2\x82 utf-8", int64(0), int64(-1 << 63), int64(1<<63 - 1), true, false,
		[]int64(nil), []int64{}, []int64{1, -2, 3},
		[]ContentBlock(nil), []ContentBlock{}, []ContentBlock{TextBlock("a<b"), ToolResultBlock("c", nil, true)},
		ev, op, AppendOp(), ReplaceOp(1, 2), Tokens(5), OptionalInt{}, Effort("high"),
	} {
		want, err := wire.Stringify(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := marshal(v); !bytes.Equal(got, want) {
			t.Errorf("marshal(%#v) = %s, want %s", v, got, want)
		}
	}
}

// A value decoded as is (an event in its params, content blocks) is not
// encoded at decode time; a change to it, in place or not, is still seen.
func TestNestedChangesSeen(t *testing.T) {
	in := `{"sessionId":"s","event":{"type":"assistant/message","seq":1,"time":2,"data":{"message":{"content":[]}} ,"x":1},"y":2}`
	var p SessionEventParams
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(p); string(b) != `{"sessionId":"s","event":{"type":"assistant/message","seq":1,"time":2,"data":{"message":{"content":[]}},"x":1},"y":2}` {
		t.Errorf("unchanged: %s", b)
	}
	p.Event.Data[2] = 'M' // in place
	if b, _ := json.Marshal(p); string(b) != `{"sessionId":"s","event":{"type":"assistant/message","seq":1,"time":2,"data":{"Message":{"content":[]}},"x":1},"y":2}` {
		t.Errorf("data changed in place: %s", b)
	}
	p.Event.Data = json.RawMessage(`{"z": 3}`)
	if b, _ := json.Marshal(p); string(b) != `{"sessionId":"s","event":{"type":"assistant/message","seq":1,"time":2,"data":{"z":3},"x":1},"y":2}` {
		t.Errorf("data replaced: %s", b)
	}

	var m Message
	if err := json.Unmarshal([]byte(`{"id":"m","role":"user","content":[{"type":"text","text":"a"}, {"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"b"}]}],"source":{"kind":"user"}}`), &m); err != nil {
		t.Fatal(err)
	}
	m.Content[1].Content[0].Text = "changed"
	if b, _ := json.Marshal(m); string(b) != `{"id":"m","role":"user","content":[{"type":"text","text":"a"},{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"changed"}]}],"source":{"kind":"user"}}` {
		t.Errorf("nested block changed in place: %s", b)
	}
}
