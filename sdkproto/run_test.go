package sdkproto_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/sdkproto"
)

// TestRunSaysWhatItAwaits: a runtime that answers session/prompt but
// never sends the interval Run waits for makes Run fail with a
// *RunWaitError naming what was missing, the cause kept.
func TestRunSaysWhatItAwaits(t *testing.T) {
	t.Parallel()
	t.Run("receipt", func(t *testing.T) {
		t.Parallel()
		c, p := newClPeer(t, nil)
		run := clGo(func() (*sdkproto.RunResult, error) { return c.Run(t.Context(), "main", sdkproto.TextBlock("hi")) })
		// The answer, then the runtime's output ends: no receipt ever.
		p.result(p.expect("session/prompt"), `{"messageId":"m-1"}`)
		p.CloseInput(nil)
		_, err := run()
		var we *sdkproto.RunWaitError
		if !errors.As(err, &we) || we.Receipt || we.SessionID != "main" || we.MessageID != "m-1" {
			t.Fatalf("Run: %v, want a *RunWaitError awaiting the receipt of m-1", err)
		}
		var closed *sdkproto.TransportClosedError
		if !errors.As(err, &closed) {
			t.Errorf("Run: %v does not wrap the *TransportClosedError", err)
		}
		if want := "the receipt of message m-1 (session.event agent/inbox/spliced"; !strings.Contains(err.Error(), want) {
			t.Errorf("Run: %q does not say %q", err.Error(), want)
		}
	})
	t.Run("idle", func(t *testing.T) {
		t.Parallel()
		c, p := newClPeer(t, nil)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		// Cancelled once the receipt was collected: Run then waits for idle.
		run := clGo(func() (*sdkproto.RunResult, error) {
			return c.RunFunc(ctx, "main", func(sdkproto.Notification) error { cancel(); return nil }, sdkproto.TextBlock("hi"))
		})
		r := p.expect("session/prompt")
		p.send("%s", clReceipt("main", "m-2", 0))
		p.result(r, `{"messageId":"m-2"}`)
		_, err := run()
		var we *sdkproto.RunWaitError
		if !errors.As(err, &we) || !we.Receipt || !errors.Is(err, context.Canceled) {
			t.Fatalf("Run: %v, want a *RunWaitError awaiting idle, caused by context.Canceled", err)
		}
		if want := `session.status idle for session "main"`; !strings.Contains(err.Error(), want) {
			t.Errorf("Run: %q does not say %q", err.Error(), want)
		}
	})
}
