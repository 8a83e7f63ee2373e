package sdkproto

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestReceivedNotificationsDecodeAsAnyOther: a Notification the Client
// made of a frame rpc read skips the checks its params already passed,
// and decodes to what the same bytes decode to in any Notification;
// once a program replaces its Params, they are checked again.
func TestReceivedNotificationsDecodeAsAnyOther(t *testing.T) {
	paths, err := filepath.Glob("../testdata/transcripts/*.ndjson")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	seen := map[string]int{}
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var line struct{ Frame string }
			var frame struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(sc.Bytes(), &line) != nil || json.Unmarshal([]byte(line.Frame), &frame) != nil ||
				frame.ID != nil || frame.Method == "" {
				continue
			}
			seen[frame.Method]++
			got := received(frame.Method, append(json.RawMessage(" \n"), frame.Params...))
			want := Notification{Method: frame.Method, Params: frame.Params}
			if !got.checked() || want.checked() {
				t.Fatalf("checked: received %v, built %v", got.checked(), want.checked())
			}
			sameDecoding(t, got, want)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []string{"session.event", "session.status", "subagent.started", "subagent.finished"} {
		if seen[m] == 0 {
			t.Errorf("no %s in the transcripts", m)
		}
	}

	// Params replaced (or cut) are no longer the bytes received.
	n := received("session.event", json.RawMessage(`{"sessionId":"s","event":{"type":"x","seq":0,"time":1}}`))
	n.Params = json.RawMessage(`{"sessionId":"s","event":{"type":"x",}`)
	if n.checked() {
		t.Fatal("replaced params still count as checked")
	}
	if _, err := n.SessionEvent(); err == nil {
		t.Fatal("invalid params replacing received ones decoded")
	}
	if _, ok := n.SessionID(); ok {
		t.Fatal("SessionID read invalid params")
	}
	n = received("session.event", json.RawMessage(`{"sessionId":"s","event":{"type":"x","seq":0,"time":1}}`))
	n.Params = n.Params[:20]
	if n.checked() {
		t.Fatal("cut params still count as checked")
	}
	if _, err := n.SessionEvent(); err == nil {
		t.Fatal("cut params decoded")
	}
}

// sameDecoding fails t unless got and want decode alike, in every way a
// program reads a notification.
func sameDecoding(t *testing.T, got, want Notification) {
	t.Helper()
	for _, f := range []func(Notification) (any, error){
		func(n Notification) (any, error) { return n.SessionEvent() },
		func(n Notification) (any, error) { return n.SessionStatus() },
		func(n Notification) (any, error) { return n.SubagentStarted() },
		func(n Notification) (any, error) { return n.SubagentFinished() },
		func(n Notification) (any, error) { s, ok := n.SessionID(); return [2]any{s, ok}, nil },
		func(n Notification) (any, error) { s, ok := n.TextDelta(); return [2]any{s, ok}, nil },
	} {
		g, gerr := f(got)
		w, werr := f(want)
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%s: errors differ: %v, %v", want.Params, gerr, werr)
		}
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		if string(gj) != string(wj) || reflect.TypeOf(g) != reflect.TypeOf(w) {
			t.Fatalf("%s: decoded to %s, want %s", want.Params, gj, wj)
		}
	}
	if p, err := got.SessionEvent(); err == nil {
		if err, werr := p.CheckRunEvent(), must(want.SessionEvent()).CheckRunEvent(); (err == nil) != (werr == nil) {
			t.Fatalf("%s: CheckRunEvent %v, want %v", want.Params, err, werr)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// FuzzReceivedNotification: a received Notification decodes as any other
// when its params are valid; when they are not (only bytes changed in
// place after the Client received them can be, which Notification's doc
// forbids), reading it may give nonsense, but never panics. (Encoding
// what was decoded from them may: the encoders trust decoded bytes.)
func FuzzReceivedNotification(f *testing.F) {
	for _, s := range []string{
		`{"sessionId":"main","event":{"type":"assistant/chunk","seq":1,"time":2,"data":{"chunk":{"type":"text-delta","text":"hi"}}}}`,
		`{"sessionId":"s","event":{"type":"x","sourceEventSeqs":[1,null,3],"surfaceOp":"append"},"event":{"seq":1}}`,
		`{"sessionId":"s","status":"idle","parentSessionId":"p","childSessionId":"c","event":{"type":"user/message","data":{"message":{"role":"user","content":[{"type":"text","text":"x"}]}}}}`,
		`{"":0`, `{"a":{"b":`, `{"event":{"type":"x"`, `{"\u0065vent":{"type":"x"}}`, `{"event":{"type":"x",}}`, `{`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := kindOf(data) == kindObject && validate(data, maxDepth) == nil
		for _, method := range []string{"session.event", "session.status", "subagent.started", "subagent.finished"} {
			n := Notification{Method: method, Params: data, received: data} // as received, whatever the bytes
			if valid {
				sameDecoding(t, n, Notification{Method: method, Params: data})
				continue
			}
			readAll(n)
		}
	})
}

// readAll reads n in every way a program reads a notification.
func readAll(n Notification) {
	n.SessionID()
	n.TextDelta()
	if p, err := n.SessionEvent(); err == nil {
		p.Member("event")
		p.CheckRunEvent()
		p.Event.Check()
		p.Event.Member("data")
	}
	if p, err := n.SessionStatus(); err == nil {
		p.Check()
		p.Member("status")
	}
	if p, err := n.SubagentStarted(); err == nil {
		p.Check()
	}
	if p, err := n.SubagentFinished(); err == nil {
		p.Check()
	}
}
