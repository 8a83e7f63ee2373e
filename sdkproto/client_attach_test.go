package sdkproto_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
)

// AttachConn refuses a registry that would hide notifications from the
// Client, naming the conflict, and leaves the registry as it was.
func TestAttachConnConflict(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, want string
		setup      func(reg *rpc.Registry)
	}{
		{"unknown notifications", "unknown notifications", func(reg *rpc.Registry) {
			reg.HandleUnknownNotification(func(context.Context, string, json.RawMessage) {})
		}},
		{"session.event", "session.event", func(reg *rpc.Registry) {
			rpc.HandleNotification(reg, sdkproto.SessionEvent, func(context.Context, sdkproto.SessionEventParams) {})
		}},
		{"session.status", "session.status", func(reg *rpc.Registry) {
			rpc.HandleNotification(reg, sdkproto.SessionStatus, func(context.Context, sdkproto.SessionStatusParams) {})
		}},
		{"subagent.started", "subagent.started", func(reg *rpc.Registry) {
			rpc.HandleNotification(reg, sdkproto.SubagentStarted, func(context.Context, sdkproto.SubagentStartedParams) {})
		}},
		{"subagent.finished", "subagent.finished", func(reg *rpc.Registry) {
			rpc.HandleNotification(reg, sdkproto.SubagentFinished, func(context.Context, sdkproto.SubagentFinishedParams) {})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := rpc.NewRegistry()
			tc.setup(reg)
			hadUnknown := reg.HandlesUnknownNotifications()
			r, w := io.Pipe()
			defer r.Close()
			conn := rpc.NewConn(r, io.Discard, &rpc.Options{Handler: reg})
			defer conn.Close()
			c, err := sdkproto.AttachConn(conn, reg, nil)
			if c != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("AttachConn = %v, %v; want no Client and an error naming %q", c, err, tc.want)
			}
			if reg.HandlesUnknownNotifications() != hadUnknown {
				t.Error("the refused AttachConn changed the registry")
			}
			w.Close()
		})
	}
	if _, err := sdkproto.AttachConn(nil, rpc.NewRegistry(), nil); err == nil {
		t.Error("AttachConn with a nil conn succeeded")
	}
}

// A Client attached to a connection whose registry has handlers of its own
// drives a Server like any other Client.
func TestAttachConnDrivesServer(t *testing.T) {
	t.Parallel()
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := sdkproto.NewServer(&routeRuntime{}, nil).Serve(context.Background(), cr, sw)
		sw.Close()
		served <- err
	}()
	t.Cleanup(func() { cw.Close(); sr.Close() })

	reg := rpc.NewRegistry()
	rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, string]("client/ping"), func(context.Context, rpc.NoParams) (string, error) {
		return "pong", nil
	})
	c, err := sdkproto.AttachConn(rpc.NewConn(sr, cw, &rpc.Options{Handler: reg}), reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reg.HandlesUnknownNotifications() {
		t.Error("AttachConn did not install the Client's intake")
	}
	ctx := t.Context()
	if _, err := c.Initialize(ctx, clInitParams()); err != nil {
		t.Fatal(err)
	}
	if id, err := c.Prompt(ctx, "main", sdkproto.TextBlock("hi")); err != nil || id != "1" {
		t.Fatalf("Prompt = %q, %v; want \"1\"", id, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
