package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	cases := map[string]string{
		`{}`:      ``,
		` { } `:   ``,
		`{"a":1}`: `a=1`,
		"{\n\"a\" :\t[1, 2] ,\r\n\"b\":{\"c\":\"}\"} }":     `a=[1, 2]|b={"c":"}"}`,
		`{"a":1,"a":2,"b":null}`:                            `a=1|a=2|b=null`,
		`{"\u0069d":"x","i\"d":true,"\ud83d\ude00":-0.5e1}`: `id="x"|i"d=true|😀=-0.5e1`,
		"{\"k\xff\":1}":       "k\uFFFD=1",
		`{"":"","\ud800":[]}`: `=""|` + "\uFFFD=[]",
	}
	for in, want := range cases {
		if top, _, err := ScanValue([]byte(in)); err != nil || top != Object {
			t.Fatalf("%q: not a valid object: %v", in, err)
		}
		var got []string
		Members([]byte(in), func(k, v []byte) bool { got = append(got, string(k)+"="+string(v)); return true })
		if strings.Join(got, "|") != want {
			t.Errorf("Members(%q) = %q, want %q", in, strings.Join(got, "|"), want)
		}
		got = got[:0]
		for _, m := range AppendMembers(nil, []byte(in)) {
			got = append(got, string(m.Key)+"="+string(m.Value))
		}
		if strings.Join(got, "|") != want {
			t.Errorf("AppendMembers(%q) = %q, want %q", in, strings.Join(got, "|"), want)
		}
	}
	n := 0
	Members([]byte(`{"a":1,"b":2,"c":3}`), func(k, v []byte) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("yield returning false: %d calls, want 2", n)
	}
	for _, in := range []string{``, `[]`, `"{}"`, `null`, `1`} {
		Members([]byte(in), func(k, v []byte) bool { t.Errorf("%q: a member %s=%s", in, k, v); return true })
	}
}

// The keys Members decodes into its buffer are its own in AppendMembers:
// each stays as it was when the next one is decoded.
func TestAppendMembersOwnKeys(t *testing.T) {
	ms := AppendMembers(nil, []byte(`{"\u0061":1,"\u0062":2,"c":3}`))
	var got []string
	for _, m := range ms {
		got = append(got, string(m.Key))
	}
	if strings.Join(got, ",") != "a,b,c" {
		t.Errorf("keys %q, want a,b,c", got)
	}
}

func TestLookup(t *testing.T) {
	obj := []byte(`{"type":"a","seq":1,"t\u0079pe":"b","data":{"type":"inner"},"` + strings.Repeat("k", 70) + `":1,"\u006b` + strings.Repeat("k", 69) + `":2}`)
	for key, want := range map[string]string{
		"type":                  `"b"`,
		"seq":                   `1`,
		"data":                  `{"type":"inner"}`,
		"missing":               ``,
		strings.Repeat("k", 70): `2`,
	} {
		if got := Lookup(obj, key); string(got) != want || (want == "") != (got == nil) {
			t.Errorf("Lookup(%q) = %q, want %q", key, got, want)
		}
		if got := Last(AppendMembers(nil, obj), key); string(got) != want || (want == "") != (got == nil) {
			t.Errorf("Last(%q) = %q, want %q", key, got, want)
		}
	}
	for _, in := range []string{`[{"a":1}]`, `"a"`, ``, `{`} {
		if got := Lookup([]byte(in), "a"); got != nil {
			t.Errorf("Lookup(%q) = %q, want nil", in, got)
		}
	}
	short := []byte(`{"type":"a","t\u0079pe":"b","seq":1}`)
	if n := testing.AllocsPerRun(100, func() { Lookup(short, "seq") }); n != 0 {
		t.Errorf("Lookup allocates %v times", n)
	}
}

// On input that is not a valid object, the members up to the first fault
// are yielded (a value is delimited without being validated), and nothing
// panics.
func TestMembersInvalid(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"b"}`:      `a=1`,
		`{"a":1 "b":2}`:    `a=1`,
		`{"a":,"b":2}`:     ``,
		`{"a":[1,"b":2}`:   `a=[1,"b":2}`,
		`{"a":1,}`:         `a=1`,
		`{1:2}`:            ``,
		`{"a`:              ``,
		`{"a":"b`:          ``,
		`{"a":1`:           `a=1`,
		"{\"a\x01\":1}":    ``,
		`{"a":{"b":]}}`:    `a={"b":]`,
		`{"a":tru,"b":{}}`: `a=tru|b={}`,
	} {
		var got []string
		Members([]byte(in), func(k, v []byte) bool { got = append(got, string(k)+"="+string(v)); return true })
		if strings.Join(got, "|") != want {
			t.Errorf("Members(%q) = %q, want %q", in, strings.Join(got, "|"), want)
		}
	}
}

func TestAppendUnquoteUTF8(t *testing.T) {
	for _, in := range []string{
		`""`, `"abc"`, `"\u00e9\n\"\\\/"`, `"\ud83d\ude00"`, `"\ud800"`, `"\udc00\ud800x"`, `"\ud800\u0041"`,
		"\"a\xffb\"", "\"\xe2\x82\"", "\"\xe2\x82\\u00e9\"", "\"\\u00e9\x80\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"",
	} {
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := AppendUnquoteUTF8([]byte("x"), []byte(in)); string(got) != "x"+want {
			t.Errorf("AppendUnquoteUTF8(%q) = %q, want %q", in, got, "x"+want)
		}
	}
}

func TestCompact(t *testing.T) {
	for _, in := range []string{
		`1`, `{}`, ` { "a" : [ 1 , "b c" , { } ] } `, "[\n\t\"x\\\" y\",\r\n null ]", `{"a":"  "}`, `"\\"`,
	} {
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(in)); err != nil {
			t.Fatal(err)
		}
		if got := Compact([]byte(in)); string(got) != want.String() {
			t.Errorf("Compact(%q) = %q, want %q", in, got, want.String())
		}
	}
	compact := []byte(`{"a":[1,"b c"]}`)
	if got := Compact(compact); &got[0] != &compact[0] {
		t.Error("Compact copied a compact value")
	}
}

// ScanMembers validates as ScanValue does, in the same words, and yields
// the members as Members does; it stops yielding when told to, not
// validating.
func TestScanMembers(t *testing.T) {
	for _, in := range []string{
		`{}`, ` { "a" : [1, {"b":"}"}] , "\u0063":null } `, `{"a":1,"a":2}`, `[1]`, `"x"`, ``, `{`, `{"a"`, `{"a":`, `{"a":1`,
		`{"a":1,}`, `{"a" 1}`, `{1:2}`, `{"a":[1,]}`, `{"a":01}`, `{"a":1}x`, `{"a":1} {}`, `{"a":tru}`, `{"a":"\x"}`,
		`{"a":{"b":{"c":[[]]}}}`, "{\"a\":\"\x01\"}", `{"a":1 "b":2}`, `{"a":{"b":]}}`,
	} {
		vTop, vDepth, vErr := ScanValue([]byte(in))
		var got []string
		top, depth, err := ScanMembers([]byte(in), func(k, v []byte) bool { got = append(got, string(k)+"="+string(v)); return true })
		if top != vTop || depth != vDepth || fmt.Sprint(err) != fmt.Sprint(vErr) {
			t.Errorf("ScanMembers(%q) = %v %d %v, ScanValue %v %d %v", in, top, depth, err, vTop, vDepth, vErr)
		}
		if err == nil {
			var want []string
			Members([]byte(in), func(k, v []byte) bool { want = append(want, string(k)+"="+string(v)); return true })
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("ScanMembers(%q) yields %q, Members %q", in, got, want)
			}
		}
	}
	calls := 0
	_, _, err := ScanMembers([]byte(`{"a":1,"b":2,"c":tru}`), func(k, v []byte) bool { calls++; return false })
	if calls != 1 || err == nil {
		t.Errorf("yield returning false: %d calls, error %v; want 1 call and the fault found", calls, err)
	}
	obj := []byte(`{"a":[1,2],"b":{"c":"d"},"e":"f"}`)
	if n := testing.AllocsPerRun(100, func() { ScanMembers(obj, func(k, v []byte) bool { return true }) }); n != 0 && !raceEnabled {
		t.Errorf("ScanMembers allocates %v times", n)
	}
}

func TestScanValue(t *testing.T) {
	top, depth, err := ScanValue([]byte(` {"a":[[1]]} `))
	if top != Object || depth != 3 || err != nil {
		t.Errorf("ScanValue = %v %d %v", top, depth, err)
	}
	_, _, err1 := ScanValue([]byte(`{"a":}`))
	_, _, err2 := ScanValue([]byte(`[1 2]`))
	if err1 == nil || err2 == nil || err1 == err2 || err1.Error() == err2.Error() {
		t.Errorf("errors %v and %v: each call's error must be its own", err1, err2)
	}
	deep := []byte(strings.Repeat("[", 600) + strings.Repeat("]", 600))
	ScanValue(deep) // the pooled scanner's stack grows once
	if n := testing.AllocsPerRun(100, func() { ScanValue(deep) }); n != 0 && !raceEnabled {
		t.Errorf("ScanValue allocates %v times", n)
	}
}

// orderedMembers is the reference of Members: encoding/json's token
// decoder, which reads the keys in order, duplicates included.
func orderedMembers(data []byte) (keys []string, values []json.RawMessage, ok bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, nil, false
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, nil, false
		}
		keys, values = append(keys, t.(string)), append(values, v)
	}
	if _, err := d.Token(); err != nil {
		return nil, nil, false
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, nil, false
	}
	return keys, values, true
}

// FuzzMembers feeds any bytes to Members, AppendMembers and Lookup: nothing
// panics, and on a valid JSON object they agree with encoding/json, whose
// map decoding keeps the last member of each key as JSON.parse does and
// whose token decoder gives every member in order.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1,"a":2}`, `{"\u0069d":[1,{"x":"}"}],"id":null}`, "{\"k\xff\":1,\"k\\ufffd\":2}", `{"\ud800":1,"\udc00\ud800":2}`,
		` { "a" : "b" , "c" : { "d" : [ ] } } `, `{"a":1,}`, `{"a":[}`, `{"a"`, `[{"a":1}]`, `{"a":"\"","b":"\\"}`,
	} {
		f.Add([]byte(s))
	}
	for _, s := range seedFrames {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []string
		Members(data, func(k, v []byte) bool { got = append(got, fmt.Sprintf("%q=%q", k, v)); return true })
		ms := AppendMembers(nil, data)
		if len(ms) != len(got) {
			t.Fatalf("AppendMembers gave %d members, Members %d", len(ms), len(got))
		}
		for i, m := range ms {
			if s := fmt.Sprintf("%q=%q", m.Key, m.Value); s != got[i] {
				t.Fatalf("member %d: AppendMembers %s, Members %s", i, s, got[i])
			}
		}
		// ScanMembers and ScanFillSpans validate as ScanValue does and,
		// on a valid object, give what Members gives.
		vTop, vDepth, vErr := ScanValue(data)
		var scanned []string
		top, depth, err := ScanMembers(data, func(k, v []byte) bool { scanned = append(scanned, fmt.Sprintf("%q=%q", k, v)); return true })
		filled := make([]Span, 3)
		n, fTop, fDepth, fErr := ScanFillSpans(filled, data)
		for _, r := range []struct {
			top   Kind
			depth int
			err   error
		}{{top, depth, err}, {fTop, fDepth, fErr}} {
			if r.top != vTop || r.depth != vDepth || fmt.Sprint(r.err) != fmt.Sprint(vErr) {
				t.Fatalf("ScanMembers/ScanFillSpans: %v %d %v; ScanValue: %v %d %v", r.top, r.depth, r.err, vTop, vDepth, vErr)
			}
		}
		checkSpans(t, data, ms, vErr == nil && vTop == Object)
		if vErr == nil && vTop == Object {
			if strings.Join(scanned, ",") != strings.Join(got, ",") || n != len(ms) {
				t.Fatalf("ScanMembers gave %q (ScanFillSpans %d), Members %q", scanned, n, got)
			}
			for i := range min(n, len(filled)) {
				if k, v := filled[i].Key(data, nil), filled[i].Value(data); !bytes.Equal(k, ms[i].Key) || !bytes.Equal(v, ms[i].Value) {
					t.Fatalf("member %d: ScanFillSpans %q=%q, AppendMembers %q=%q", i, k, v, ms[i].Key, ms[i].Value)
				}
			}
		}
		var want map[string]json.RawMessage
		if json.Unmarshal(data, &want) != nil || want == nil {
			return // not an object encoding/json reads
		}
		if top, _, err := ScanValue(data); err != nil || top != Object {
			t.Fatalf("encoding/json reads an object, ScanValue says %v %v", top, err)
		}
		keys, values, ok := orderedMembers(data)
		if !ok {
			t.Fatal("the token decoder fails on what Unmarshal reads")
		}
		if len(keys) != len(ms) {
			t.Fatalf("%d members, encoding/json reads %d", len(ms), len(keys))
		}
		for i, m := range ms {
			if string(m.Key) != keys[i] || !bytes.Equal(m.Value, values[i]) {
				t.Fatalf("member %d: %q=%q, encoding/json reads %q=%q", i, m.Key, m.Value, keys[i], values[i])
			}
		}
		last := map[string][]byte{}
		for _, m := range ms {
			last[string(m.Key)] = m.Value
		}
		if len(last) != len(want) {
			t.Fatalf("%d distinct keys, encoding/json's map has %d", len(last), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(last[k], v) {
				t.Fatalf("member %q: %q, encoding/json's map has %q", k, last[k], v)
			}
			if got := Lookup(data, k); !bytes.Equal(got, v) {
				t.Fatalf("Lookup(%q) = %q, encoding/json's map has %q", k, got, v)
			}
			if got := Last(ms, k); !bytes.Equal(got, v) {
				t.Fatalf("Last(%q) = %q, encoding/json's map has %q", k, got, v)
			}
		}
	})
}
