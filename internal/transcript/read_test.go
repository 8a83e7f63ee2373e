package transcript

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// What only a transcript with directions can show, and bad transcript
// lines.
func TestTranscriptLines(t *testing.T) {
	lines := []struct{ line, want string }{
		{rec("c2s", `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","contentBlocks":[{"type":"text","text":"hi"}]}}`), "early-prompt"},
		{rec("s2c", `{"jsonrpc":"2.0","id":1,"result":{"messageId":"m"}}`), ""},
		{rec("s2c", `{"jsonrpc":"2.0","id":7,"method":"approval/ask","params":{}}`), "unknown-method"},
		{rec("c2s", `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found: approval/ask"}}`), ""},
		{rec("c2s", `{"jsonrpc":"2.0","method":"session.event","params":{}}`), "unknown-method"},
		{rec("c2s", `{"jsonrpc":"2.0","id":1,"result":{}}`), "unmatched-response"}, // a response in the wrong direction
		{`{"dir":"sideways","frame":"{}"}` + "\n", "malformed"},
		{`{"dir":"c2s"}` + "\n", "malformed"},
		{"garbage\n", "malformed"},
		{`{"t":"2026-01-01T00:00:00Z","dir":"s2c","frame":{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"idle"}}}` + "\n", ""},
	}
	// Found at the end: the prompt of line 1 was answered, but no receipt
	// followed (the idle of line 10 does not end a run without one).
	var in strings.Builder
	var want []string
	for i, l := range lines {
		in.WriteString(l.line)
		if l.want != "" {
			want = append(want, fmt.Sprintf("%d %s", i+1, l.want))
		}
	}
	want = append(want, "2 run-unfinished")
	kinds, msgs, format, counts := check(t, in.String(), maxFrame)
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("findings %q, want %q:\n%s", kinds, want, msgs)
	}
	if format != FormatTranscript || counts.Lines != 10 || counts.Frames != 7 {
		t.Errorf("format %q, counts %+v", format, counts)
	}
}

// A tap log's records of frames it cut short, or that did not end, are
// reported as such; a frame over the limit as a reader drops it.
func TestTapRecords(t *testing.T) {
	record := func(m map[string]any) string { b, _ := json.Marshal(m); return string(b) + "\n" }
	in := record(map[string]any{"dir": "s2c", "frame": `{"jsonrpc"`, "truncated": true, "size": 5000}) +
		record(map[string]any{"dir": "s2c", "frame": `{"jsonrpc"`, "truncated": true, "size": 500}) +
		record(map[string]any{"dir": "s2c", "frame": `{"jsonrpc":"2.0"`, "unterminated": true})
	_, msgs, _, counts := check(t, in, 1000)
	wantContains(t, msgs,
		"1: malformed: s2c a frame of 5000 bytes, longer than the maximum frame size (1000): the reader skips it",
		"2: not-checked: s2c a frame of 500 bytes was logged cut to its first 10: not checked",
		"3: malformed: s2c: unterminated last line")
	if counts.Frames != 2 || counts.Bad != 1 {
		t.Errorf("counts %+v", counts)
	}
}
