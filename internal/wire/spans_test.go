package wire

import (
	"bytes"
	"fmt"
	"testing"
)

// checkSpans fails t unless the spans of data agree with ms, its members
// as AppendMembers gives them: FillSpans always, and, when data is a
// valid object (valid), ScanFillSpans, a SpanWalker delimiting each value
// itself or having it delimited, and the lookups.
func checkSpans(t *testing.T, data []byte, ms []Member, valid bool) {
	t.Helper()
	same := func(how string, obj []byte, spans []Span) {
		t.Helper()
		if len(spans) != len(ms) {
			t.Fatalf("%s: %d spans, %d members", how, len(spans), len(ms))
		}
		for i, s := range spans {
			if k, v := s.Key(obj, nil), s.Value(obj); !bytes.Equal(k, ms[i].Key) || !bytes.Equal(v, ms[i].Value) {
				t.Fatalf("%s: span %d is %q=%q, member %q=%q", how, i, k, v, ms[i].Key, ms[i].Value)
			}
			if k, plain := s.PlainKey(obj); plain && !bytes.Equal(k, ms[i].Key) {
				t.Fatalf("%s: span %d: plain key %q, member %q", how, i, k, ms[i].Key)
			}
			if !s.HasKey(obj, string(ms[i].Key)) || s.HasKey(obj, string(ms[i].Key)+"x") {
				t.Fatalf("%s: span %d: HasKey wrong for %q", how, i, ms[i].Key)
			}
			if last, ok := LastSpan(obj, spans, string(ms[i].Key)); !ok || !bytes.Equal(last.Value(obj), Last(ms, string(ms[i].Key))) {
				t.Fatalf("%s: LastSpan(%q) is not Last's", how, ms[i].Key)
			}
		}
	}
	spans := make([]Span, len(ms)+1)
	if n := FillSpans(spans, data); n != len(ms) {
		t.Fatalf("FillSpans counts %d, AppendMembers gives %d", n, len(ms))
	}
	same("FillSpans", data, spans[:len(ms)])
	if !valid {
		return
	}
	n, top, _, err := ScanFillSpans(spans, data)
	if n != len(ms) || top != Object || err != nil {
		t.Fatalf("ScanFillSpans: %d %v %v", n, top, err)
	}
	same("ScanFillSpans", data, spans[:n])
	// The walker reads the object followed by other bytes, which it
	// leaves alone, and ends just past the closing brace.
	trimmed := bytes.TrimRight(data, " \t\r\n")
	obj := append(append([]byte(nil), trimmed...), `,"more":}`...)
	for _, delimitOwn := range []bool{false, true} {
		w := WalkSpans(obj)
		var walked []Span
		for {
			s, ok := w.Next()
			if !ok {
				break
			}
			end := 0
			if delimitOwn {
				end, _, _ = skipValue(obj, s.ValueStart())
			}
			if s, ok = w.Done(s, end); !ok {
				t.Fatalf("walk: member %d could not be delimited", len(walked))
			}
			walked = append(walked, s)
		}
		same(fmt.Sprintf("SpanWalker (delimiting %v)", delimitOwn), obj, walked)
		if w.End() != len(trimmed) {
			t.Fatalf("SpanWalker ends at %d, the object at %d", w.End(), len(trimmed))
		}
	}
}

func TestSpans(t *testing.T) {
	for _, in := range []string{
		`{}`, ` { } `, `{"a":1}`, "{\n\"a\" :\t[1, 2] ,\r\n\"b\":{\"c\":\"}\"} }", `{"a":1,"a":2,"b":null}`,
		`{"\u0069d":"x","i\"d":true,"\ud83d\ude00":-0.5e1}`, "{\"k\xff\":1}", `{"":"","\ud800":[]}`,
		`{"` + string(bytes.Repeat([]byte(`\u0061`), 20)) + `":1}`, // an escaped key longer than 64 bytes
	} {
		checkSpans(t, []byte(in), AppendMembers(nil, []byte(in)), true)
	}
	// Not objects: no members, and a walk of nothing.
	for _, in := range []string{``, `[]`, `"{}"`, `null`, `1`} {
		if n := FillSpans(make([]Span, 2), []byte(in)); n != 0 {
			t.Errorf("FillSpans(%q) = %d", in, n)
		}
		w := WalkSpans([]byte(in))
		if _, ok := w.Next(); ok || w.End() != 0 {
			t.Errorf("WalkSpans(%q) walks", in)
		}
	}
}
