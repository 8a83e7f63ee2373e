package replay_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/replay/replaytest"
)

// askedTurn is a recording, in raw frames, of a turn in which the runtime
// asks its client for an approval (a request of the runtime's, given with
// s2c), and goes on once it is answered (the answer's direction inferred).
const askedTurn = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/w","provider":"deepseek-official","model":"deepseek-v4-flash"}}
{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}}
{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"main","contentBlocks":[{"type":"text","text":"clean up"}]}}
{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"main","event":{"type":"agent/inbox/spliced","seq":0,"time":1,"data":{"target":"next-turn","start":0,"inserted":[{"content":[{"type":"text","text":"clean up"}],"source":{"kind":"user"},"role":"user","id":"m-1"}]}}}}
{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"main","status":"running"}}
{"jsonrpc":"2.0","id":2,"result":{"messageId":"m-1"}}
s2c {"jsonrpc":"2.0","id":"ask-1","method":"approval/request","params":{"sessionId":"main","tool":"bash"}}
{"jsonrpc":"2.0","id":"ask-1","result":{"approved":true}}
{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"main","event":{"type":"assistant/message","seq":1,"time":2,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"cleaned up"}]}}}}}
{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"main","event":{"type":"turn/end","seq":2,"time":3,"data":{"turn":1,"reason":{"kind":"completed"}}}}}
{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"main","status":"idle"}}
{"jsonrpc":"2.0","id":3,"method":"shutdown"}
{"jsonrpc":"2.0","id":3,"result":{}}
`

type ask struct {
	SessionID string `json:"sessionId"`
	Tool      string `json:"tool"`
}

type decision struct {
	Approved bool `json:"approved"`
}

var approval = rpc.NewMethod[ask, decision]("approval/request")

// TestRuntimeRequestAnsweredByAResponder: the runtime's request is written
// once the prompt came, with the client's session id; what follows it in
// the recording waits for the client's answer, which must be the
// recorded one.
func TestRuntimeRequestAnsweredByAResponder(t *testing.T) {
	rec := loadString(t, askedTurn)
	var frames []string
	for _, f := range rec.Frames() {
		frames = append(frames, string(f.Dir)+" "+string(f.Kind))
	}
	if got := strings.Join(frames[6:8], ", "); got != "s2c request, c2s response" {
		t.Fatalf("the approval and its answer load as %s", got)
	}
	for _, c := range []struct {
		name     string
		approved bool
		final    string
		want     string
	}{
		{"recorded-answer", true, "cleaned up", ""},
		{"other-answer", false, "", "replay: the client departed from the recording at line 8 (a c2s response): result.approved: recorded true, got false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := make(chan ask, 1)
			r := replaytest.Start(t, rec, &sdkproto.ClientOptions{Responders: []sdkproto.Responder{
				sdkproto.Respond(approval, func(ctx context.Context, a ask) (decision, error) {
					asked <- a
					return decision{Approved: c.approved}, nil
				}),
			}})
			ctx := bound(t)
			if _, err := r.Client.Initialize(ctx, sdkproto.InitializeParams{Cwd: "/x", Provider: "deepseek-official", Model: "deepseek-v4-flash"}); err != nil {
				t.Fatal(err)
			}
			res, err := r.Client.Run(ctx, "mine", sdkproto.TextBlock("clean up"))
			select {
			case a := <-asked:
				if a.SessionID != "mine" || a.Tool != "bash" {
					t.Errorf("asked %+v", a)
				}
			default:
				t.Errorf("Run returned (%v) and the runtime's request was not answered", err)
			}
			if c.want == "" {
				if err != nil || res.FinalResponse != c.final || res.FinishReason != sdkproto.TurnCompleted {
					t.Fatalf("run: %+v, %v", res, err)
				}
				r.Client.Close()
				if err := r.Wait(); err != nil {
					t.Errorf("serve: %v", err)
				}
				return
			}
			var wait *sdkproto.RunWaitError
			if !errors.As(err, &wait) {
				t.Errorf("run: %+v, %v; want it to end waiting for the turn", res, err)
			}
			if err := r.Wait(); err == nil || err.Error() != c.want {
				t.Errorf("serve: %v\nwant %s", err, c.want)
			}
		})
	}
}
