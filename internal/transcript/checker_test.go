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

// check reads in as Read does and returns its findings as "line kind"
// and as full messages ("line: kind: message").
func check(t *testing.T, in string, maxFrame int) (kinds []string, messages string, format string, counts Counts) {
	t.Helper()
	var b strings.Builder
	format, counts, err := Read(strings.NewReader(in), maxFrame, func(f Finding) {
		kinds = append(kinds, fmt.Sprintf("%d %s", f.Line, f.Kind))
		fmt.Fprintf(&b, "%d: %s: %s\n", f.Line, f.Kind, f.Message)
	})
	if err != nil {
		t.Fatal(err)
	}
	return kinds, b.String(), format, counts
}

const maxFrame = 64 << 20

func rec(dir, frame string) string {
	b, _ := json.Marshal(map[string]string{"dir": dir, "frame": frame})
	return string(b) + "\n"
}

func wantContains(t *testing.T, out string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(out, p) {
			t.Errorf("findings do not contain %q:\n%s", p, out)
		}
	}
}

// The real runtime's transcripts are clean but for what their recording
// broke on purpose (errors.ndjson: bad initialize params, an unknown
// method and notification from the client; prompt-before-initialize).
// subagent.ndjson is clean too: its child's first forwarded event has seq
// 2, as the runtime never forwards what a child logs before it is
// published (testdata/transcripts/README.md, observed fact 7).
func TestRecordedTranscripts(t *testing.T) {
	files, err := filepath.Glob("../../testdata/transcripts/*.ndjson")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	expect := map[string][]string{
		"errors.ndjson": {
			"1 bad-payload", "2 bad-payload", "3 bad-payload", "4 bad-payload", "5 bad-payload", "6 bad-payload", "7 bad-payload",
			"8 unknown-method", "9 unknown-method",
		},
		"prompt-before-initialize.ndjson": {"1 early-prompt"},
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		kinds, msgs, format, _ := check(t, string(data), maxFrame)
		if format != FormatTranscript {
			t.Errorf("%s: format %q", name, format)
		}
		if strings.Join(kinds, ",") != strings.Join(expect[name], ",") {
			t.Errorf("%s: findings %q, want %q:\n%s", name, kinds, expect[name], msgs)
		}
	}
}

// Every rule of the contract that a frame on its own, or a frame against
// the earlier ones, can break.
func TestRawFrameRules(t *testing.T) {
	frames := []struct{ line, want string }{
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
	var in strings.Builder
	var want []string
	for i, f := range frames {
		in.WriteString(f.line + "\n")
		if f.want != "" {
			want = append(want, fmt.Sprintf("%d %s", i+1, f.want))
		}
	}
	in.WriteString(`{"jsonrpc":"2.0","method":"session.status"`) // unterminated
	kinds, msgs, format, counts := check(t, in.String(), maxFrame)
	// The unterminated line is found when the input ends, then the
	// unanswered request.
	want = append(want[:len(want)-1], fmt.Sprintf("%d malformed", len(frames)+1), want[len(want)-1])
	if strings.Join(kinds, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s\nmessages:\n%s", strings.Join(kinds, "\n"), strings.Join(want, "\n"), msgs)
	}
	if format != FormatRaw || counts.Lines != 27 || counts.Frames != 26 || counts.Problems() != 21 || counts.Warnings() != 1 {
		t.Errorf("format %q, counts %+v", format, counts)
	}
	wantContains(t, msgs,
		"6: unknown-method: request \"session/cancel\" (id 2) is not a runtime method",
		"11: bad-payload: session/prompt params: Image upload is not canonical base64.",
		"13: unmatched-response: response to id \"4\", which no request is waiting for",
		"14: unmatched-response: response to id 4, which was already answered on line 12",
		"17: seq-order: session s: step/end has seq 1 after seq 1",
		"18: seq-gap: session s: seq jumps from 1 to 4",
		"22: bad-payload: session.event turn/start: seq must be an integer, got \"7\"",
		"23: bad-payload: session.status: status must be \"running\" or \"idle\", got \"busy\"",
		"24: bad-payload: subagent.started: childSessionId must be a non-empty string, got nothing (member absent)",
		"25: bad-payload: subagent.finished: status must be \"ok\" or \"error\", got \"fine\"",
		"26: unanswered-request: c2s request \"shutdown\" (id 5) got no response")
}

// Ids match as rpc matches them: by JSON type, and numbers by their exact
// integer value (5.0 answers 5, 2^53+1 does not answer 2^53); seq and
// time are exact integers too (2^63 is out of range, not rounded into it).
func TestIDsAndIntegersExact(t *testing.T) {
	const prompt = `{"jsonrpc":"2.0","id":%s,"method":"shutdown"}`
	const reply = `{"jsonrpc":"2.0","id":%s,"result":{}}`
	cases := []struct {
		req, resp string
		match     bool
	}{
		{"5", "5.0", true},
		{"5", "5e0", true},
		{`"a"`, `"\u0061"`, true},
		{"5", `"5"`, false},
		{"9007199254740992", "9007199254740993", false},
	}
	for _, tc := range cases {
		in := rec("c2s", fmt.Sprintf(prompt, tc.req)) + rec("s2c", fmt.Sprintf(reply, tc.resp))
		kinds, msgs, _, _ := check(t, in, maxFrame)
		if got := len(kinds) == 0; got != tc.match {
			t.Errorf("request id %s, response id %s: match %v, want %v:\n%s", tc.req, tc.resp, got, tc.match, msgs)
		}
	}
	event := `{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"s","event":{"type":"turn/start","seq":%s,"time":1,"data":{"turn":1}}}}`
	for seq, ok := range map[string]bool{"0": true, "0.0": true, "9223372036854775808": false, "1e300": false} {
		kinds, msgs, _, _ := check(t, fmt.Sprintf(event, seq)+"\n", maxFrame)
		if bad := strings.Contains(msgs, "seq must be an integer"); bad == ok {
			t.Errorf("seq %s: findings %q:\n%s", seq, kinds, msgs)
		}
	}
}

// A Checker fed frames one by one: the direction is the caller's, the
// findings come back with each frame, and the end's from Finish.
func TestCheckerFrames(t *testing.T) {
	c := New(1 << 20)
	if f := c.Frame(1, ClientToRuntime, []byte(tShut)); len(f) != 0 {
		t.Errorf("a shutdown request: %v", f)
	}
	f := c.Frame(2, ClientToRuntime, []byte(tShutOK))
	if len(f) != 1 || f[0].Kind != UnmatchedResponse || f[0].Line != 2 {
		t.Errorf("a response in the request's own direction: %v", f)
	}
	if f := c.Frame(3, RuntimeToClient, []byte(tShutOK)); len(f) != 0 {
		t.Errorf("the response: %v", f)
	}
	if f := c.Frame(4, ClientToRuntime, []byte(strings.Repeat(" ", 1<<20+1))); len(f) != 1 || f[0].Kind != Malformed {
		t.Errorf("an oversize frame: %v", f)
	}
	c.Frame(5, Unknown, []byte(tPrompt)) // a client request, whatever the direction given
	f = c.Finish()
	if len(f) != 1 || f[0].Kind != UnansweredRequest || f[0].Line != 5 || !strings.HasPrefix(f[0].Message, "c2s request") {
		t.Errorf("Finish: %v", f)
	}
	if n := c.Counts(); n.Frames != 5 || n.Requests != 2 || n.Responses != 2 || n.Bad != 1 {
		t.Errorf("counts %+v", n)
	}
}

// Seqs as the real runtime forwards them (docs/wire.md §4.5): a session
// the client's prompt created from 0, any session without a gap from its
// first forwarded event on; a session the transcript does not show being
// created, such as a subagent child, from any seq.
func TestSeqRules(t *testing.T) {
	event := func(session string, seq int) string {
		return rec("s2c", fmt.Sprintf(`{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":%q,"event":{"type":"turn/start","seq":%d,"time":1,"data":{"turn":1}}}}`, session, seq))
	}
	started := rec("s2c", `{"jsonrpc":"2.0","method":"subagent.started","params":{"parentSessionId":"main","childSessionId":"child"}}`)
	in := rec("c2s", tInit) + rec("s2c", tInitOK) + rec("c2s", tPrompt) +
		event("main", 2) + // 4: the prompted session skips 0 and 1
		started + event("child", 2) + event("child", 3) + // 6, 7: a child's first forwarded events
		event("child", 5) + // 8: a gap
		event("other", 7) + // 9: a session of unknown origin
		rec("s2c", tReply) + rec("c2s", tShut) + rec("s2c", tShutOK)
	kinds, msgs, _, counts := check(t, in, maxFrame)
	if want := []string{"4 seq-gap", "8 seq-gap"}; !slices.Equal(kinds, want) {
		t.Errorf("findings %q, want %q:\n%s", kinds, want, msgs)
	}
	wantContains(t, msgs,
		"4: seq-gap: session main: its first event (turn/start) has seq 2, not 0: the runtime creates a session on its first prompt and forwards its events from seq 0 (docs/wire.md §4.5)",
		"8: seq-gap: session child: seq jumps from 3 to 5 (turn/start)")
	if counts.Problems() != 0 || !SeqGap.Warning() {
		t.Errorf("counts %+v: want warnings only", counts)
	}
}
