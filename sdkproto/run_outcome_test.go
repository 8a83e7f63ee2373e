package sdkproto_test

import (
	"errors"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/demo"
)

// TestRunTurnOutcome: a turn that ran and failed is no error of Run's
// (session/prompt succeeded and the interval was followed to its end) but
// of its result's Err, a *TurnFailedError naming the kind and the reason;
// a completed turn's Err is nil. The runtime is the demo, a Server whose
// turns end as the recorded real ones do ("/fail X" fails the model call).
func TestRunTurnOutcome(t *testing.T) {
	t.Parallel()
	c := clDemo(t)

	res, err := c.Run(t.Context(), "main", sdkproto.TextBlock("hello"))
	if err != nil {
		t.Fatalf("Run of a completed turn: %v", err)
	}
	if err := res.Err(); err != nil || res.FinishReason != sdkproto.TurnCompleted || res.FinalResponse != "hello" {
		t.Fatalf("completed turn: Err %v, finish %q, response %q", err, res.FinishReason, res.FinalResponse)
	}

	res, err = c.Run(t.Context(), "main", sdkproto.TextBlock("/fail fake model rejects this request"))
	if err != nil {
		t.Fatalf("Run of a failed turn: %v (the turn's failure belongs to res.Err)", err)
	}
	var tf *sdkproto.TurnFailedError
	if !errors.As(res.Err(), &tf) {
		t.Fatalf("failed turn: Err %v, want a *TurnFailedError", res.Err())
	}
	if tf.Kind != sdkproto.TurnError || tf.SessionID != "main" || tf.MessageID != res.MessageID || tf.MessageID == "" ||
		tf.Reason.Error == nil || tf.Reason.Error.Message != "fake model rejects this request" {
		t.Errorf("failed turn: %+v", tf)
	}
	want := `sdkproto: the turn of message ` + res.MessageID + ` on session "main" failed: fake model rejects this request (` + demo.FailureCode + `)`
	if got := res.Err().Error(); got != want {
		t.Errorf("failed turn: %q, want %q", got, want)
	}
}

// TestRunTurnAbortedOrUnreported: the other ends of a turn, from a peer
// the test writes: a reply cut at the output cap (max-tokens, with the
// status of the model's failure), an aborted turn (the protocol has no
// cancel method; the runtime aborts a turn for its user, its parent, a
// hook or a disposal), an interrupted one, and an interval whose turn/end
// does not say how it ended or that has none at all.
func TestRunTurnAbortedOrUnreported(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, turnEnd string // the data of turn/end; "" sends none
		kind          sdkproto.TurnEndKind
		text          string
	}{
		{"max-tokens", `{"turn":1,"reason":{"kind":"max-tokens"}}`, sdkproto.TurnMaxTokens,
			`sdkproto: the turn of message m-1 on session "main" hit the output cap (max-tokens): its reply may be cut short`},
		{"error-status", `{"turn":1,"reason":{"kind":"error","error":{"message":"bad request","code":"INVALID_REQUEST","status":400}}}`, sdkproto.TurnError,
			`sdkproto: the turn of message m-1 on session "main" failed: bad request (INVALID_REQUEST, status 400)`},
		{"aborted", `{"turn":1,"reason":{"kind":"aborted","reason":{"kind":"hook","reason":"policy"}}}`, sdkproto.TurnAborted,
			`sdkproto: the turn of message m-1 on session "main" was aborted (hook: policy)`},
		{"interrupted", `{"turn":1,"reason":{"kind":"interrupted"}}`, sdkproto.TurnInterrupted,
			`sdkproto: the turn of message m-1 on session "main" ended interrupted`},
		{"kind-not-string", `{"turn":1,"reason":{"kind":7}}`, "",
			`sdkproto: session "main" went idle with no turn/end saying how the turn of message m-1 ended`},
		{"no-turn-end", "", "",
			`sdkproto: session "main" went idle with no turn/end saying how the turn of message m-1 ended`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, p := newClPeer(t, nil)
			run := clGo(func() (*sdkproto.RunResult, error) { return c.Run(t.Context(), "main", sdkproto.TextBlock("hi")) })
			r := p.expect("session/prompt")
			p.send("%s", clReceipt("main", "m-1", 0))
			p.result(r, `{"messageId":"m-1"}`)
			if tc.turnEnd != "" {
				p.send("%s", clEvent("main", "turn/end", 1, tc.turnEnd))
			}
			p.send("%s", clStatus("main", "idle"))
			res, err := run()
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			var tf *sdkproto.TurnFailedError
			if !errors.As(res.Err(), &tf) || tf.Kind != tc.kind {
				t.Fatalf("Err %v, want a *TurnFailedError of kind %q", res.Err(), tc.kind)
			}
			if got := tf.Error(); got != tc.text {
				t.Errorf("Err %q, want %q", got, tc.text)
			}
		})
	}
	if err := (*sdkproto.RunResult)(nil).Err(); err != nil {
		t.Errorf("nil result: Err %v", err)
	}
}

// TestStreamTurnErr: Stream ends a failed turn without an error, and
// Notification.TurnErr, given the root session, finds the failure at the
// root's turn/end, not at a subagent's failed turn/end, nor for a
// completed turn.
func TestStreamTurnErr(t *testing.T) {
	t.Parallel()
	c, p := newClPeer(t, nil)
	type outcome struct {
		streamErr   error   // what Stream yielded as an error
		turnErrs    []error // TurnErr("main") of each notification, when not nil
		childErrors int     // TurnErr("child") was not nil
	}
	stream := clGo(func() (outcome, error) {
		var o outcome
		for n, err := range c.Stream(t.Context(), "main", sdkproto.TextBlock("hi")) {
			if err != nil {
				o.streamErr = err
				continue
			}
			if err := n.TurnErr("main"); err != nil {
				o.turnErrs = append(o.turnErrs, err)
			}
			if n.TurnErr("child") != nil {
				o.childErrors++
			}
		}
		return o, nil
	})
	r := p.expect("session/prompt")
	p.send("%s", clReceipt("main", "m-1", 0))
	p.result(r, `{"messageId":"m-1"}`)
	p.send(`{"jsonrpc":"2.0","method":"subagent.started","params":{"parentSessionId":"main","childSessionId":"child"}}`)
	p.send("%s", clEvent("child", "turn/end", 0, `{"turn":1,"reason":{"kind":"error","error":{"message":"child failed","code":"X"}}}`))
	p.send("%s", clTurnEnd("main", "completed", 1)) // an earlier turn's end
	p.send("%s", clEvent("main", "turn/end", 2, `{"turn":2,"reason":{"kind":"error","error":{"message":"rate limited","code":"RATE_LIMIT"}}}`))
	p.send("%s", clStatus("main", "idle"))
	o, _ := stream()
	if o.streamErr != nil {
		t.Fatalf("Stream yielded %v for a turn that ran", o.streamErr)
	}
	if len(o.turnErrs) != 1 {
		t.Fatalf("TurnErr(main) reported %d turns, want the failed root turn only: %v", len(o.turnErrs), o.turnErrs)
	}
	var tf *sdkproto.TurnFailedError
	if !errors.As(o.turnErrs[0], &tf) || tf.Kind != sdkproto.TurnError || tf.MessageID != "" ||
		tf.Error() != `sdkproto: the turn on session "main" failed: rate limited (RATE_LIMIT)` {
		t.Errorf("TurnErr(main) = %v", o.turnErrs[0])
	}
	if o.childErrors != 1 {
		t.Errorf("TurnErr(child) reported %d turns, want the child's failed one", o.childErrors)
	}
}
