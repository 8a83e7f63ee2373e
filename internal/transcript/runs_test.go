package transcript

import (
	"strings"
	"testing"
)

const (
	tInit    = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/w","provider":"deepseek-official","model":"m"}}`
	tInitOK  = `{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}}`
	tPrompt  = `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"main","contentBlocks":[{"type":"text","text":"hi"}]}}`
	tReply   = `{"jsonrpc":"2.0","id":2,"result":{"messageId":"m-1"}}`
	tReceipt = `{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"main","event":{"type":"agent/inbox/spliced","seq":0,"time":1,"data":{"target":"next-turn","start":0,"inserted":[{"id":"m-1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}]}}}}`
	tIdle    = `{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"main","status":"idle"}}`
	tShut    = `{"jsonrpc":"2.0","id":3,"method":"shutdown"}`
	tShutOK  = `{"jsonrpc":"2.0","id":3,"result":{}}`
)

// A runtime that answers the prompt but never sends what Client.Run
// awaits (the receipt, then the session's idle) is flagged, with a
// warning; a transcript that has them, in either order with the reply,
// or that shuts down, is not.
func TestRunUnfinished(t *testing.T) {
	cases := []struct {
		name   string
		frames []string
		want   string // the finding's line, kind and message start, "" for none
	}{
		{"complete", []string{tInit, tInitOK, tPrompt, tReceipt, tReply, tIdle}, ""},
		{"reply-before-receipt", []string{tInit, tInitOK, tPrompt, tReply, tReceipt, tIdle}, ""},
		// A client's Run subscribes before it prompts: it has seen the
		// receipt and the idle by the time the reply comes.
		{"reply-after-idle", []string{tInit, tInitOK, tPrompt, tReceipt, tIdle, tReply}, ""},
		{"no-receipt", []string{tInit, tInitOK, tPrompt, tReply, tIdle}, `4: run-unfinished: session main: the prompt was answered with message id "m-1", but no receipt`},
		{"no-idle", []string{tInit, tInitOK, tPrompt, tReceipt, tReply}, `5: run-unfinished: session main: message "m-1" was received, but the session never went idle`},
		{"idle-before-receipt", []string{tInit, tInitOK, tPrompt, tIdle, tReply, tReceipt}, `5: run-unfinished`},
		{"shut-down", []string{tInit, tInitOK, tPrompt, tReceipt, tReply, tShut, tShutOK}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var in strings.Builder
			for _, f := range tc.frames {
				dir := "s2c"
				if strings.Contains(f, `"method":"initialize"`) || strings.Contains(f, `"method":"session/prompt"`) || strings.Contains(f, `"method":"shutdown"`) {
					dir = "c2s"
				}
				in.WriteString(rec(dir, f))
			}
			kinds, msgs, _, counts := check(t, in.String(), maxFrame)
			if tc.want == "" {
				if len(kinds) > 0 {
					t.Errorf("findings %q:\n%s", kinds, msgs)
				}
				return
			}
			wantContains(t, msgs, tc.want)
			if counts.Findings[RunUnfinished] != 1 || counts.Problems() != 0 || !RunUnfinished.Warning() {
				t.Errorf("counts %+v: want one run-unfinished warning", counts)
			}
		})
	}
}
