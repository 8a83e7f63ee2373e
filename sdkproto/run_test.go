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
		go func() {
			// The answer, then the runtime's output ends: no receipt ever.
			p.result(p.expect("session/prompt"), `{"messageId":"m-1"}`)
			p.out.Close()
		}()
		_, err := c.Run(clCtx(t), "main", sdkproto.TextBlock("hi"))
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
		go func() {
			r := p.expect("session/prompt")
			p.send("%s", clReceipt("main", "m-2", 0))
			p.result(r, `{"messageId":"m-2"}`)
		}()
		ctx, cancel := context.WithCancel(clCtx(t))
		defer cancel()
		// Cancelled once the receipt was collected: Run then waits for idle.
		_, err := c.RunFunc(ctx, "main", func(sdkproto.Notification) error { cancel(); return nil }, sdkproto.TextBlock("hi"))
		var we *sdkproto.RunWaitError
		if !errors.As(err, &we) || !we.Receipt || !errors.Is(err, context.Canceled) {
			t.Fatalf("Run: %v, want a *RunWaitError awaiting idle, caused by context.Canceled", err)
		}
		if want := `session.status idle for session "main"`; !strings.Contains(err.Error(), want) {
			t.Errorf("Run: %q does not say %q", err.Error(), want)
		}
	})
}
