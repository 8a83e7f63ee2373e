package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestCheckRecordedTranscripts checks every real-runtime transcript. They
// are clean except where the recording deliberately broke the contract
// (errors.ndjson: bad initialize params, an unknown method and an unknown
// notification from the client; prompt-before-initialize.ndjson) or the
// real runtime deviates from docs/wire.md (subagent.ndjson: the child's first
// forwarded event has seq 2, README observed fact 7).
func TestCheckRecordedTranscripts(t *testing.T) {
	files, err := filepath.Glob("../../testdata/transcripts/*.ndjson")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	expect := map[string]struct {
		code     int
		findings []string // "line kind", in order
	}{
		"errors.ndjson": {exitFailed, []string{
			"1 bad-payload", "2 bad-payload", "3 bad-payload", "4 bad-payload", "5 bad-payload", "6 bad-payload", "7 bad-payload",
			"8 unknown-method", "9 unknown-method",
		}},
		"prompt-before-initialize.ndjson": {exitOK, []string{"1 early-prompt"}},
		"subagent.ndjson":                 {exitOK, []string{"26 seq-gap"}},
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			r := dshrpc(t, "", "check", f)
			want := expect[name]
			r.wantCode(t, want.code)
			got := findingsOf(r.stdout)
			if strings.Join(got, ",") != strings.Join(want.findings, ",") {
				t.Errorf("findings %q, want %q:\n%s", got, want.findings, r.stdout)
			}
			if len(want.findings) == 0 && !strings.HasSuffix(r.stdout, ": ok\n") {
				t.Errorf("summary: %s", r.stdout)
			}
		})
	}
	// --strict turns the warnings into failures.
	r := dshrpc(t, "", "check", "--strict", "../../testdata/transcripts/subagent.ndjson")
	r.wantCode(t, exitFailed)
}

var findingRE = regexp.MustCompile(`(?m)^[^\n]*?:(\d+): (?:warning: )?([a-z-]+): `)

// findingsOf extracts "line kind" of every finding check printed.
func findingsOf(out string) []string {
	var got []string
	for _, m := range findingRE.FindAllStringSubmatch(out, -1) {
		got = append(got, m[1]+" "+m[2])
	}
	return got
}

// badRaw is a raw-frames transcript with every kind of problem; the
// comment of each line names what check must report for it.
var badRaw = []struct{ line, want string }{
	{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/w","provider":"deepseek-official","model":"m"}}`, ""},
	{`{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}}`, ""},
	{`not json at all`, "malformed"},
	{`[{"jsonrpc":"2.0","id":9,"method":"shutdown"}]`, "malformed"},
	{`{"jsonrpc":"2.0","id":null,"result":{}}`, "malformed"},
	{`{"jsonrpc":"2.0","id":2,"method":"session/cancel","params":{"sessionId":"s"}}`, "unknown-method"},
	{`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: session/cancel"}}`, ""},
	{`{"jsonrpc":"2.0","method":"session.tick","params":{}}`, "unknown-method"},
	{`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"cwd":"/w","provider":"p","model":"m","maxTokens":0}}`, "bad-payload"},
	{`{"jsonrpc":"2.0","id":3,"error":{"code":"-32603","message":"initialize maxTokens must be a positive safe integer"}}`, "bad-payload"},
	{`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s","contentBlocks":[{"type":"image","data":"not base64!","mimeType":"image/png"}]}}`, "bad-payload"},
	{`{"jsonrpc":"2.0","id":4,"result":{"accepted":true}}`, "bad-payload"},
	{`{"jsonrpc":"2.0","id":"4","result":{"messageId":"m"}}`, "unmatched-response"},
	{`{"jsonrpc":"2.0","id":4,"result":{"messageId":"m"}}`, "unmatched-response"},
	{`{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}}}`, ""},
	{`{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"step/start","seq":1,"time":1,"data":{"turn":1,"step":1}}}}`, ""},
	{`{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"step/end","seq":1,"time":1,"data":{"turn":1,"step":1}}}}`, "seq-order"},
	{`{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"step/end","seq":4,"time":1,"data":{"turn":1,"step":1}}}}`, "seq-gap"},
	{`{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"turn/end","seq":5,"time":1,"data":{"turn":1,"reason":{}}}}}`, "bad-payload"},
	{`{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"seq":6}}}`, "bad-payload"},
	{`{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"assistant/message","seq":6,"time":1,"data":{"turn":1,"step":1,"message":{"id":"a","role":"assistant","content":"hi","source":{"kind":"model"}}}}}}`, "bad-payload"},
	{`{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"turn/start","seq":"7","time":1,"data":{"turn":2}}}}`, "bad-payload"},
	{`{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"busy"}}`, "bad-payload"},
	{`{"jsonrpc":"2.0","method":"subagent.started","params":{"parentSessionId":"s"}}`, "bad-payload"},
	{`{"jsonrpc":"2.0","method":"subagent.finished","params":{"provider":"spawn","agentId":"c","parentSessionId":"s","childSessionId":"c","status":"fine","stopReason":"completed"}}`, "bad-payload"},
	{`{"jsonrpc":"2.0","id":5,"method":"shutdown"}`, "unanswered-request"},
}

func TestCheckBadRawFrames(t *testing.T) {
	var in strings.Builder
	var want []string
	for i, l := range badRaw {
		in.WriteString(l.line + "\n")
		if l.want != "" {
			want = append(want, itoa(i+1)+" "+l.want)
		}
	}
	in.WriteString(`{"jsonrpc":"2.0","method":"session.status"`) // unterminated
	want = append(want, itoa(len(badRaw)+1)+" malformed")

	path := filepath.Join(t.TempDir(), "bad.ndjson")
	os.WriteFile(path, []byte(in.String()), 0o644)
	r := dshrpc(t, "", "check", path)
	r.wantCode(t, exitFailed)
	got := findingsOf(r.stdout)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s\noutput:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), r.stdout)
	}
	wantContains(t, "check", r.stdout,
		path+": raw frames, 27 lines, 26 frames",
		path+":6: unknown-method: request \"session/cancel\" (id 2) is not a runtime method",
		path+":11: bad-payload: session/prompt params: Image upload is not canonical base64.",
		path+":13: unmatched-response: response to id \"4\", which no request is waiting for",
		path+":14: unmatched-response: response to id 4, which was already answered on line 12",
		path+":17: seq-order: session s: step/end has seq 1 after seq 1",
		path+":18: warning: seq-gap: session s: seq jumps from 1 to 4",
		path+":26: unanswered-request: c2s request \"shutdown\" (id 5) got no response",
		"problems, 1 warning")

	// The same through stdin.
	r2 := dshrpc(t, in.String(), "check")
	r2.wantCode(t, exitFailed)
	if strings.ReplaceAll(r2.stdout, "<stdin>", path) != r.stdout {
		t.Errorf("stdin output differs:\n%s", r2.stdout)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// TestCheckBadTranscript covers what only a transcript with directions
// can show, and bad transcript lines.
func TestCheckBadTranscript(t *testing.T) {
	rec := func(dir, frame string) string {
		b, _ := json.Marshal(map[string]string{"dir": dir, "frame": frame})
		return string(b)
	}
	lines := []struct{ line, want string }{
		{rec("c2s", `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","contentBlocks":[{"type":"text","text":"hi"}]}}`), "early-prompt"},
		{rec("s2c", `{"jsonrpc":"2.0","id":1,"result":{"messageId":"m"}}`), ""},
		{rec("s2c", `{"jsonrpc":"2.0","id":7,"method":"approval/ask","params":{}}`), "unknown-method"},
		{rec("c2s", `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found: approval/ask"}}`), ""},
		{rec("c2s", `{"jsonrpc":"2.0","method":"session.event","params":{}}`), "unknown-method"},
		{rec("c2s", `{"jsonrpc":"2.0","id":1,"result":{}}`), "unmatched-response"}, // a response in the wrong direction
		{`{"dir":"sideways","frame":"{}"}`, "malformed"},
		{`{"dir":"c2s"}`, "malformed"},
		{`garbage`, "malformed"},
		{`{"t":"2026-01-01T00:00:00Z","dir":"s2c","frame":{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"idle"}}}`, ""},
	}
	// Found at the end: the prompt of line 1 was answered, but no receipt
	// followed (the idle of line 10 does not end a run without one).
	var in strings.Builder
	var want []string
	for i, l := range lines {
		in.WriteString(l.line + "\n")
		if l.want != "" {
			want = append(want, itoa(i+1)+" "+l.want)
		}
	}
	want = append(want, "2 run-unfinished")
	r := dshrpc(t, in.String(), "check", "-")
	r.wantCode(t, exitFailed)
	if got := findingsOf(r.stdout); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("findings %q, want %q:\n%s", got, want, r.stdout)
	}
	wantContains(t, "check", r.stdout, "<stdin>: transcript, 10 lines, 7 frames")
}

func TestCheckUsage(t *testing.T) {
	r := dshrpc(t, "", "check", "--max-frame-size", "0")
	r.wantCode(t, exitUsage)
	r = dshrpc(t, "", "check", "/no/such/transcript")
	r.wantCode(t, exitUsage)
	wantContains(t, "stderr", r.stderr, "no such file or directory")
	r = dshrpc(t, "", "check")
	r.wantCode(t, exitOK)
	wantContains(t, "stdout", r.stdout, "<stdin>: empty, 0 lines")
}
