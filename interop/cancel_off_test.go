package interop_test

import (
	"context"
	"errors"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// With no cancellation policy, the default, nothing on the DSH wire
// changes: a Go call whose context ends after its request was written
// sends nothing more (the TypeScript transport has no cancellation), and
// the link serves on.
func TestTransportCancelledCallSendsNothing(t *testing.T) {
	rpctest.CheckNoLeak(t)
	l := startLink(t, "serve", newGoSide().reg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.conn.Call(ctx, "hang", map[string]any{}, nil) }()
	waitContains(t, l.sent, `"method":"hang"`)
	cancel()
	if err := linetest.Within(t, done, "the cancelled call"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call returned %v", err)
	}
	var got struct {
		Notes []any `json:"notes"`
	}
	l.mustCall("notes", map[string]any{"clear": true}, &got)
	if len(got.Notes) != 0 {
		t.Errorf("the TS transport received notifications: %v", got.Notes)
	}
	frames := frames(t, l.sent, "Go rpc.Conn")
	if len(frames) != 2 || frames[0].method == nil || *frames[0].method != "hang" || frames[1].method == nil || *frames[1].method != "notes" {
		var lines []string
		for _, f := range frames {
			lines = append(lines, f.line)
		}
		t.Errorf("Go wrote %q, want the hang request and the notes request only", lines)
	}
}
