package interop_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/internal/peers"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// Scenario 4: cancellation against the real MCP SDK
// (@modelcontextprotocol/sdk), both ways, with rpc.MCPCancellation.

// needMCP is needPeers, with the MCP SDK installed too.
func needMCP(t *testing.T) {
	t.Helper()
	dir := needPeers(t)
	const f = "node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js"
	if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
		peers.Missing(t, errors.New("the MCP SDK is not installed (interop/"+f+" is missing): run `make interop-install`"))
	}
}

// The MCP messages the tests use, as Go types.
type (
	mcpImplementation struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	mcpInitializeParams struct {
		ProtocolVersion string            `json:"protocolVersion"`
		Capabilities    map[string]any    `json:"capabilities"`
		ClientInfo      mcpImplementation `json:"clientInfo"`
	}
	mcpInitializeResult struct {
		ProtocolVersion string            `json:"protocolVersion"`
		Capabilities    map[string]any    `json:"capabilities"`
		ServerInfo      mcpImplementation `json:"serverInfo"`
	}
	mcpToolCall struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken,omitempty"`
		} `json:"_meta"`
	}
	mcpToolResult struct {
		Content []mcpText `json:"content"`
	}
	mcpText struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	mcpProgress struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Progress      float64         `json:"progress"`
	}
)

var (
	mcpInitialize  = rpc.NewMethod[mcpInitializeParams, mcpInitializeResult]("initialize")
	mcpInitialized = rpc.NewNotification[rpc.NoParams]("notifications/initialized")
	mcpCallTool    = rpc.NewMethod[mcpToolCall, mcpToolResult]("tools/call")
	mcpProgressed  = rpc.NewNotification[mcpProgress]("notifications/progress")
)

// mcpLink is a Conn on the stdio of a node program, with both directions
// recorded.
type mcpLink struct {
	*child
	conn     *rpc.Conn
	sent     *rpctest.Recorder
	received *rpctest.Recorder
	drops    chan rpc.Drop
}

func startMCP(t *testing.T, script string, opts *rpc.Options) *mcpLink {
	t.Helper()
	rpctest.CheckNoLeak(t)
	needMCP(t)
	ch := startChild(t, nil, script)
	l := &mcpLink{child: ch, sent: &rpctest.Recorder{Stream: true}, received: &rpctest.Recorder{Stream: true}, drops: make(chan rpc.Drop, 64)}
	opts.OnDrop = func(d rpc.Drop) {
		select {
		case l.drops <- d:
		default:
		}
	}
	l.conn = rpc.NewConn(&tapReader{f: ch.stdout, rec: l.received}, &tapWriter{w: ch.stdin, rec: l.sent}, opts)
	t.Cleanup(func() {
		l.conn.Close()
		ch.stdin.Close()
		if !ch.waitExit(testTimeout) {
			ch.cmd.Process.Kill()
		}
		waitOrFail(t, "the Conn's goroutines", testTimeout, func() { l.conn.Wait() })
	})
	l.conn.Start()
	return l
}

// stderrJSON returns the next line of the child's stderr that is a JSON
// object with the member key.
func (l *mcpLink) stderrJSON(t *testing.T, key string) map[string]any {
	t.Helper()
	for {
		line := linetest.Within(t, l.stderrLn, "a stderr line with "+key)
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			if _, ok := m[key]; ok {
				return m
			}
		}
	}
}

// responsesTo returns the responses among frames whose id is id.
func responsesTo(frames []frame, id json.RawMessage) []string {
	var out []string
	for _, f := range frames {
		if f.method == nil && jsonEq(f.id, id) {
			out = append(out, f.line)
		}
	}
	return out
}

// The real MCP SDK Client drives an MCP server written with rpc: the
// client's AbortSignal cancels the tool's handler (its context ends with
// the client's reason), the cancelled request gets no response, and the
// client, which would report a late one, reports nothing and calls on.
func TestMCPClientCancelsGoTool(t *testing.T) {
	started, stopped := make(chan json.RawMessage, 1), make(chan error, 1)
	reg := rpc.NewRegistry()
	rpc.Handle(reg, mcpInitialize, func(ctx context.Context, p mcpInitializeParams) (mcpInitializeResult, error) {
		return mcpInitializeResult{
			ProtocolVersion: p.ProtocolVersion,
			Capabilities:    map[string]any{"tools": map[string]any{}},
			ServerInfo:      mcpImplementation{Name: "linerpc-interop-server", Version: "0.0.0"},
		}, nil
	})
	// The cancellable tool: all it takes is a handler that honours its
	// context, and MCPCancellation in the Options below.
	rpc.Handle(reg, mcpCallTool, func(ctx context.Context, p mcpToolCall) (mcpToolResult, error) {
		if p.Name == "echo" {
			text, _ := p.Arguments["text"].(string)
			return mcpToolResult{Content: []mcpText{{Type: "text", Text: text}}}, nil
		}
		started <- rpc.RequestFromContext(ctx).ID
		mcpProgressed.Notify(ctx, rpc.ConnFromContext(ctx), mcpProgress{ProgressToken: p.Meta.ProgressToken})
		<-ctx.Done() // a long search
		stopped <- context.Cause(ctx)
		return mcpToolResult{}, ctx.Err()
	})
	// One handler at a time: the echo runs only after the slow call's
	// handler has returned and anything it answered has been queued.
	l := startMCP(t, "js/mcp_client.mjs", &rpc.Options{Handler: reg, Cancellation: rpc.MCPCancellation(), MaxConcurrentRequests: 1})

	id := linetest.Within(t, started, "the slow tool to start")
	cause := linetest.Within(t, stopped, "the slow tool's context to end")
	if !errors.Is(cause, rpc.ErrPeerCancelled) || !strings.Contains(cause.Error(), "the user pressed stop") {
		t.Fatalf("the tool's context ended with %v, want the client's cancellation", cause)
	}
	report := l.stderrJSON(t, "slow")
	l.mustExit(testTimeout, 0)
	if slow, _ := report["slow"].(string); !strings.HasPrefix(slow, "rejected") || !strings.Contains(slow, "the user pressed stop") {
		t.Errorf("the aborted call: %v", report["slow"])
	}
	if report["echo"] != "after" {
		t.Errorf("the call after it: %v", report["echo"])
	}
	if errs, _ := report["errors"].([]any); len(errs) > 0 {
		t.Errorf("the client reported errors (a late response?): %v", errs)
	}
	if got, _ := report["server"].(map[string]any); got["name"] != "linerpc-interop-server" {
		t.Errorf("server info %v", report["server"])
	}
	l.conn.Shutdown(context.Background())

	received := frames(t, l.received, "MCP client")
	var cancels []string
	for _, f := range received {
		if f.method != nil && *f.method == "notifications/cancelled" {
			cancels = append(cancels, f.line)
		}
	}
	if len(cancels) != 1 || !strings.Contains(cancels[0], `"requestId":`+string(id)) || !strings.Contains(cancels[0], `"reason":"the user pressed stop"`) {
		t.Errorf("cancel notifications from the client: %q", cancels)
	}
	if got := responsesTo(frames(t, l.sent, "Go rpc.Conn"), id); len(got) != 0 {
		t.Errorf("the cancelled request %s was answered: %q", id, got)
	}
}

// A call of Go's rpc, as an MCP client, whose context ends reaches the
// real MCP SDK Server as notifications/cancelled: the tool's AbortSignal
// fires with the Go cause as its reason, and the server, which sends no
// response for a cancelled request, calls on.
func TestGoClientCancelsMCPTool(t *testing.T) {
	l := startMCP(t, "js/mcp_server.mjs", &rpc.Options{Cancellation: rpc.MCPCancellation()})
	ctx := context.Background()

	init, err := mcpInitialize.Call(ctx, l.conn, mcpInitializeParams{
		ProtocolVersion: "2025-06-18",
		Capabilities:    map[string]any{},
		ClientInfo:      mcpImplementation{Name: "linerpc-interop", Version: "0.0.0"},
	})
	if err != nil || init.ServerInfo.Name != "ts-interop-server" {
		t.Fatalf("initialize: %+v, %v", init, err)
	}
	if err := mcpInitialized.Notify(ctx, l.conn, rpc.NoParams{}); err != nil {
		t.Fatal(err)
	}

	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := make(chan error, 1)
	go func() {
		_, err := mcpCallTool.Call(callCtx, l.conn, mcpToolCall{Name: "slow", Arguments: map[string]any{}})
		done <- err
	}()
	started := l.stderrJSON(t, "started")
	cancel(errors.New("stop pressed"))
	if err := linetest.Within(t, done, "the cancelled call"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call returned %v", err)
	}
	aborted := l.stderrJSON(t, "aborted")
	if aborted["aborted"] != started["started"] || aborted["reason"] != "stop pressed" {
		t.Fatalf("the TS tool saw %v (started as %v)", aborted, started)
	}

	res, err := mcpCallTool.Call(ctx, l.conn, mcpToolCall{Name: "echo", Arguments: map[string]any{"text": "after"}})
	if err != nil || len(res.Content) != 1 || res.Content[0].Text != "after" {
		t.Fatalf("echo after the cancellation: %+v, %v", res, err)
	}
	l.conn.Close()
	l.stdin.Close()
	l.mustExit(testTimeout, 0)
	waitOrFail(t, "the Conn's goroutines", testTimeout, func() { l.conn.Wait() })

	id, _ := json.Marshal(started["started"])
	var cancels []string
	for _, f := range frames(t, l.sent, "Go rpc.Conn") {
		if f.method != nil && *f.method == "notifications/cancelled" {
			cancels = append(cancels, f.line)
		}
	}
	if want := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + string(id) + `,"reason":"stop pressed"}}`; len(cancels) != 1 || cancels[0] != want {
		t.Errorf("cancel notifications sent: %q, want one: %s", cancels, want)
	}
	if got := responsesTo(frames(t, l.received, "MCP server"), id); len(got) != 0 {
		t.Errorf("the cancelled request %s was answered: %q", id, got)
	}
	for {
		select {
		case d := <-l.drops:
			if d.Reason == rpc.DropUnmatchedResponse {
				t.Errorf("a late response was dropped (%d bytes)", d.Size)
			}
			continue
		default:
		}
		break
	}
	if s := l.Stderr(); strings.Contains(s, `"error"`) {
		t.Errorf("the TS server reported errors:\n%s", s)
	}
}
