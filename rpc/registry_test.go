package rpc_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/linerpc/linerpc/rpc"
)

// Handles and HandlesUnknownNotifications report the registrations made,
// and only those.
func TestRegistryHandles(t *testing.T) {
	reg := rpc.NewRegistry()
	if reg.Handles("a") || reg.Handles("n") || reg.HandlesUnknownNotifications() {
		t.Fatal("an empty registry reports a handler")
	}
	rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, int]("a"), func(context.Context, rpc.NoParams) (int, error) { return 1, nil })
	rpc.HandleNotification(reg, rpc.NewNotification[rpc.NoParams]("n"), func(context.Context, rpc.NoParams) {})
	reg.HandleUnknown(func(context.Context, string, json.RawMessage) (any, error) { return nil, nil })
	if !reg.Handles("a") || !reg.Handles("n") || reg.Handles("b") {
		t.Error("Handles does not report the request and notification registered, and only them")
	}
	if reg.HandlesUnknownNotifications() {
		t.Error("HandleUnknown counted as a handler of unknown notifications")
	}
	reg.HandleUnknownNotification(func(context.Context, string, json.RawMessage) {})
	if !reg.HandlesUnknownNotifications() {
		t.Error("HandlesUnknownNotifications is false after HandleUnknownNotification")
	}
	var nilReg *rpc.Registry
	if nilReg.Handles("a") || nilReg.HandlesUnknownNotifications() {
		t.Error("a nil registry reports a handler")
	}
}
