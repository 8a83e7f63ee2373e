package transcript

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// What the first bytes of a frame show: only members that end within
// them, at the places cutFacts names, whatever the rest holds.
func TestReadCut(t *testing.T) {
	const event = `{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"agent/inbox/spliced","seq":3,"time":1,"data":{"target":"next-turn","start":0,"inserted":[`
	for _, c := range []struct{ prefix, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/tm`, `id 1 method "initialize"`},
		{`{"jsonrpc":"2.0","id":1,"method":"initi`, `id 1`},
		{`{"jsonrpc":"2.0","id":12`, ``}, // the number may go on
		{`{"jsonrpc":"2.0","id":"a\"b","res`, `id "a\"b"`},
		{`{"jsonrpc":"2.0","id":2,"result":{"messageId":"m-1"`, `id 2 result messageId "m-1"`},
		{`{"jsonrpc":"2.0","id":2,"result":{"messageId":"m-`, `id 2 result`},
		{`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,`, `id 2 error`},
		{event + `{"id":"m-1","role":"user","content":[{"type":"text","text":"hi`,
			`method "session.event" session "s" type "agent/inbox/spliced" seq 3 inserted [m-1]`},
		{event + `{"content":[{"type":"text","text":"[]{}\"id\":\"x"}],"id":"m-2"},{"id":"m-3"}]`,
			`method "session.event" session "s" type "agent/inbox/spliced" seq 3 inserted [m-2 m-3] whole`},
		{event[:strings.Index(event, `,"time"`)], `method "session.event" session "s" type "agent/inbox/spliced"`},
		{`{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"idle"}`, `method "session.status" session "s" status "idle"`},
		{`{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"id`, `method "session.status" session "s"`},
		{`{"jsonrpc":"2.0","method":"session.event","params":{"x":{"sessionId":"no","seq":9},"sessionId":"s"`, `method "session.event" session "s"`},
		{`{"jsonrpc":"2.0","params":{"sessionId":"s"},"method":"x","id":7}`, `id 7 method "x" session "s"`},
		{`not json`, ``},
		{`{"id":tru`, ``},
		{`{"id" 1, "method":"x"}`, ``}, // not JSON: nothing past the fault
		{`  {"method":"m"`, `method "m"`},
	} {
		if got := describeCut(readCut([]byte(c.prefix))); got != c.want {
			t.Errorf("readCut(%s) = %s, want %s", c.prefix, got, c.want)
		}
	}
}

// describeCut prints the facts a test compares.
func describeCut(f cutFacts) string {
	var parts []string
	add := func(ok bool, format string, args ...any) {
		if ok {
			parts = append(parts, fmt.Sprintf(format, args...))
		}
	}
	add(f.id.Raw != nil, "id %s", f.id.Raw)
	add(f.hasMethod, "method %q", f.method)
	add(f.response && f.result, "result")
	add(f.response && !f.result, "error")
	add(f.hasMessageID, "messageId %q", f.messageID)
	add(f.hasSession, "session %q", f.session)
	add(f.hasStatus, "status %q", f.status)
	add(f.hasEventType, "type %q", f.eventType)
	add(f.hasSeq, "seq %d", f.seq)
	add(f.inserted != nil, "inserted %v", f.inserted)
	add(f.insertedWhole, "whole")
	return strings.Join(parts, " ")
}

// logRecord is a frame of a transcript with its direction.
type logRecord struct{ Dir, Frame string }

// readLog decodes a transcript.
func readLog(t *testing.T, in string) []logRecord {
	t.Helper()
	var recs []logRecord
	for line := range strings.Lines(in) {
		var r logRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		recs = append(recs, r)
	}
	return recs
}

// cutLog returns recs as a tap log with --max-log-frame max holds them:
// every frame longer than max cut to its first max bytes.
func cutLog(recs []logRecord, max int) string {
	var b strings.Builder
	for _, r := range recs {
		rec := map[string]any{"dir": r.Dir, "frame": r.Frame}
		if len(r.Frame) > max {
			rec["frame"], rec["truncated"], rec["size"] = r.Frame[:max], true, len(r.Frame)
		}
		out, _ := json.Marshal(rec)
		b.Write(append(out, '\n'))
	}
	return b.String()
}

// A tap log that cut frames short reports them as not checked, and no
// problem or warning that the whole frames would not have given: cut
// anywhere, a frame's first bytes match responses to requests, carry a
// session's seqs and start runs as far as they show ids, methods,
// sessions and seqs; what they cut off leaves later frames unjudged.
func TestCutFramesFindNothingNew(t *testing.T) {
	files, err := filepath.Glob("../../testdata/transcripts/*.ndjson")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	// Each file is cut at every 13th length up to 400, from a different
	// start for each: together they try nearly every length, and the test
	// stays quick (every length for every file passes too, in 13 times
	// the time).
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		whole, _, _, _ := check(t, string(data), maxFrame)
		recs := readLog(t, string(data))
		for max := 1 + i%13; max <= 400; max += 13 {
			kinds, msgs, _, counts := check(t, cutLog(recs, max), maxFrame)
			for _, k := range kinds {
				if !strings.HasSuffix(k, " "+string(NotChecked)) && !slices.Contains(whole, k) {
					t.Fatalf("%s cut at %d bytes: %s, which the whole frames do not give:\n%s", name, max, k, msgs)
				}
			}
			if counts.Frames != strings.Count(string(data), "\n") {
				t.Fatalf("%s cut at %d bytes: %d frames counted, want one a line", name, max, counts.Frames)
			}
		}
	}
}

// A tap log that cut frames at various lengths: the cut initialize and
// prompt are the requests their whole responses answer, the cut events
// carry their seqs where their first bytes reach them, so a gap after one
// is still found, and one after an event cut before its seq is not
// claimed.
func TestCutFramesCount(t *testing.T) {
	cut := func(dir, frame string, max int) string {
		b, _ := json.Marshal(map[string]any{"dir": dir, "frame": frame[:max], "truncated": true, "size": len(frame)})
		return string(b) + "\n"
	}
	event := func(seq int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"main","event":{"type":"turn/start","seq":%d,"time":1,"data":{"turn":1}}}}`, seq)
	}
	in := cut("c2s", tInit, 30) + rec("s2c", tInitOK) +
		cut("c2s", tPrompt, 60) + cut("s2c", tReceipt, 150) + rec("s2c", tReply) +
		cut("s2c", event(1), 100) + rec("s2c", event(2)) + cut("s2c", event(4), 110) +
		cut("s2c", tIdle, 80) + rec("c2s", tShut) + rec("s2c", tShutOK)
	kinds, msgs, _, counts := check(t, in, maxFrame)
	want := []string{"1 not-checked", "3 not-checked", "4 not-checked", "6 not-checked", "8 not-checked", "8 seq-gap", "9 not-checked"}
	if !slices.Equal(kinds, want) {
		t.Errorf("findings %q, want %q:\n%s", kinds, want, msgs)
	}
	wantContains(t, msgs,
		fmt.Sprintf("1: not-checked: c2s a frame of %d bytes was logged cut to its first 30: not checked, but its id, method, session and seq count where those hold them", len(tInit)),
		"8: seq-gap: session main: seq jumps from 2 to 4 (turn/start)")
	if counts.Requests != 3 || counts.Responses != 3 || counts.Notifications != 5 {
		t.Errorf("counts %+v", counts)
	}
	// Without the shutdown, the run awaits its idle, which the log cut
	// before its status: nothing is said of the run.
	in = in[:strings.Index(in, `{"dir":"c2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":3`)]
	if kinds, msgs, _, _ = check(t, in, maxFrame); slices.ContainsFunc(kinds, func(k string) bool { return strings.HasSuffix(k, "run-unfinished") }) {
		t.Errorf("a run awaiting an idle cut short is reported:\n%s", msgs)
	}
}
