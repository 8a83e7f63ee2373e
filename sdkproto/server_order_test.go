package sdkproto_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/sdkproto/demo"
)

// serveLines pipes lines (and then the end of the input) into the demo
// runtime's Serve and returns the responses it wrote, in order.
func serveLines(t *testing.T, lines []string) []string {
	t.Helper()
	in := strings.NewReader(strings.Join(lines, "\n") + "\n")
	var out rpctest.LockedBuffer
	if err := demo.Serve(context.Background(), in, &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	var responses []string
	for _, line := range bytes.Split([]byte(out.String()), []byte("\n")) {
		var f struct{ ID json.RawMessage }
		if len(line) > 0 && json.Unmarshal(line, &f) == nil && f.ID != nil {
			responses = append(responses, string(line))
		}
	}
	return responses
}

const (
	initializeLine = `{"jsonrpc":"2.0","id":%q,"method":"initialize","params":{"cwd":"/srv","provider":"deepseek-official","model":"deepseek-v4-flash"}}`
	promptLine     = `{"jsonrpc":"2.0","id":%q,"method":"session/prompt","params":{"sessionId":"main","contentBlocks":[{"type":"text","text":"hi"}]}}`
	shutdownLine   = `{"jsonrpc":"2.0","id":%q,"method":"shutdown"}`
)

// A prompt written before initialize is refused, and those written after
// it are accepted, every time: initialize is exclusive, so the handlers
// start in arrival order as the runtime's do (TestPromptBeforeInitialize
// regresses a Server whose handshake check raced on concurrent handlers).
func TestPromptBeforeInitializeIsRefusedEveryTime(t *testing.T) {
	rounds, after := 200, 20
	if testing.Short() {
		rounds = 20
	}
	for round := range rounds + 1 {
		if round == rounds {
			after = 10_000 // and once, with many prompts behind
		}
		lines := []string{fmt.Sprintf(promptLine, "early"), fmt.Sprintf(initializeLine, "init")}
		for i := range after {
			lines = append(lines, fmt.Sprintf(promptLine, fmt.Sprint("p", i)))
		}
		lines = append(lines, fmt.Sprintf(shutdownLine, "bye"))
		got := serveLines(t, lines)
		if len(got) != after+3 {
			t.Fatalf("round %d: %d responses, want %d", round, len(got), after+3)
		}
		want := []string{
			`{"jsonrpc":"2.0","id":"early","error":{"code":-32603,"message":"SDK server is not initialized"}}`,
			`{"jsonrpc":"2.0","id":"init","result":{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}}`,
		}
		for i, w := range want {
			if got[i] != w {
				t.Fatalf("round %d: response %d is %s, want %s", round, i, got[i], w)
			}
		}
		// Prompts wait behind initialize in the waiting room: beyond its
		// bound (rpc.DefaultMaxWaiting) they are answered
		// overloaded, never refused.
		accepted := 0
		for _, r := range got[2 : len(got)-1] {
			switch {
			case strings.Contains(r, `"result":{"messageId":`):
				accepted++
			case strings.Contains(r, fmt.Sprintf(`"code":%d,`, rpc.CodeOverloaded)):
			default:
				t.Fatalf("round %d: a prompt after initialize was answered %s", round, r)
			}
		}
		if accepted < min(after, rpc.DefaultMaxWaiting) {
			t.Fatalf("round %d: %d prompts of %d accepted", round, accepted, after)
		}
		if last := got[len(got)-1]; last != `{"jsonrpc":"2.0","id":"bye","result":{}}` {
			t.Fatalf("round %d: last response %s, want shutdown's", round, last)
		}
	}
}

// The same lines give the same answers, in the same order, every time:
// a prompt before initialize, initialize, an unknown method, shutdown.
func TestServeAnswersInArrivalOrder(t *testing.T) {
	lines := []string{
		fmt.Sprintf(promptLine, "1"),
		fmt.Sprintf(initializeLine, "2"),
		`{"jsonrpc":"2.0","id":"3","method":"session/unknown"}`,
		fmt.Sprintf(shutdownLine, "4"),
	}
	want := strings.Join([]string{
		`{"jsonrpc":"2.0","id":"1","error":{"code":-32603,"message":"SDK server is not initialized"}}`,
		`{"jsonrpc":"2.0","id":"2","result":{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}}`,
		`{"jsonrpc":"2.0","id":"3","error":{"code":-32603,"message":"unknown DeepSeek Harness SDK runtime method: session/unknown"}}`,
		`{"jsonrpc":"2.0","id":"4","result":{}}`,
	}, "\n")
	for round := range 100 {
		if got := strings.Join(serveLines(t, lines), "\n"); got != want {
			t.Fatalf("round %d:\n%s\nwant\n%s", round, got, want)
		}
	}
}
