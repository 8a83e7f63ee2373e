package sdkproto_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/demo"
)

// srvPeer is a client connection to a Server running Serve over pipes.
type srvPeer struct {
	conn   *rpc.Conn
	in     *io.PipeWriter // what the server reads
	served chan error     // Serve's result
	// read holds what the server has read of the client's frames: each
	// Write of the client reaches it once the server took it from the pipe.
	read *rpctest.Recorder

	mu      sync.Mutex
	notes   []srvNote
	changed chan struct{} // closed and replaced when a notification arrives
}

type srvNote struct {
	Method string
	Params json.RawMessage
}

func servePeer(t *testing.T, srv *sdkproto.Server) *srvPeer {
	t.Helper()
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	p := &srvPeer{in: cw, served: make(chan error, 1), changed: make(chan struct{}), read: &rpctest.Recorder{}}
	go func() {
		err := srv.Serve(context.Background(), cr, sw)
		sw.Close()
		p.served <- err
	}()
	reg := rpc.NewRegistry()
	reg.HandleUnknownNotification(func(ctx context.Context, method string, params json.RawMessage) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.notes = append(p.notes, srvNote{method, append(json.RawMessage(nil), params...)})
		close(p.changed)
		p.changed = make(chan struct{})
	})
	p.conn = rpc.NewConn(sr, io.MultiWriter(cw, p.read), &rpc.Options{Handler: reg})
	p.conn.Start()
	t.Cleanup(func() {
		cw.Close() // ends a Serve still reading
		p.conn.Close()
	})
	return p
}

// wait waits until done holds for the notifications received, checking
// again at each new one; what never comes leaves the test to its -timeout.
func (p *srvPeer) wait(t *testing.T, done func([]srvNote) bool) []srvNote {
	t.Helper()
	for {
		p.mu.Lock()
		notes := append([]srvNote(nil), p.notes...)
		changed := p.changed
		p.mu.Unlock()
		if done(notes) {
			return notes
		}
		<-changed
	}
}

func initParams(model string) sdkproto.InitializeParams {
	return sdkproto.InitializeParams{Cwd: "/srv/project", Provider: "deepseek-official", Model: model}
}

func promptParams(session, text string) sdkproto.SessionPromptParams {
	return sdkproto.SessionPromptParams{SessionID: session, ContentBlocks: []sdkproto.ContentBlock{sdkproto.TextBlock(text)}}
}

// wantRPCError checks that err is the -32603 answer msg.
func wantRPCError(t *testing.T, err error, msg string) {
	t.Helper()
	var e *rpc.Error
	if !errors.As(err, &e) || e.Code != rpc.CodeInternalError || e.Message != msg {
		t.Fatalf("error %v, want -32603 %q", err, msg)
	}
}

// routeRuntime records the route of each prompt; provider "bad" fails.
type routeRuntime struct {
	mu        sync.Mutex
	routes    []sdkproto.Route
	shutdowns int
	release   chan struct{} // when set, Shutdown waits for it
	entered   chan struct{} // when set, closed by the first Shutdown
	enterOnce sync.Once
	fail      error
}

func (r *routeRuntime) Initialize(ctx context.Context, req sdkproto.InitializeRequest) error {
	if req.Route.Provider == "bad" {
		return errors.New(`no adapter registered for provider "bad"`)
	}
	return nil
}

func (r *routeRuntime) Prompt(ctx context.Context, req sdkproto.PromptRequest) (sdkproto.SessionPromptResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.routes = append(r.routes, req.Route)
	return sdkproto.SessionPromptResult{MessageID: fmt.Sprint(len(r.routes))}, nil
}

func (r *routeRuntime) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.shutdowns++
	r.mu.Unlock()
	if r.entered != nil {
		r.enterOnce.Do(func() { close(r.entered) })
	}
	if r.release != nil {
		<-r.release
	}
	return r.fail
}

func (r *routeRuntime) lastModel() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.routes[len(r.routes)-1].Model
}

func TestServerHandshake(t *testing.T) {
	ctx := context.Background()
	rt := &routeRuntime{}
	srv := sdkproto.NewServer(rt, nil)
	p := servePeer(t, srv)

	_, err := sdkproto.SessionPrompt.Call(ctx, p.conn, promptParams("main", "hi"))
	wantRPCError(t, err, "SDK server is not initialized")

	bad := initParams("m")
	bad.Provider = "bad"
	_, err = sdkproto.Initialize.Call(ctx, p.conn, bad)
	wantRPCError(t, err, `no adapter registered for provider "bad"`)
	_, err = sdkproto.SessionPrompt.Call(ctx, p.conn, promptParams("main", "hi"))
	wantRPCError(t, err, "SDK server is not initialized") // a failed initialize changes nothing

	res, err := sdkproto.Initialize.Call(ctx, p.conn, initParams("model-a"))
	if err != nil || res.ServerInfo.Name != sdkproto.ServerName {
		t.Fatalf("initialize: %+v, %v", res, err)
	}
	if _, err := sdkproto.SessionPrompt.Call(ctx, p.conn, promptParams("main", "hi")); err != nil {
		t.Fatal(err)
	}
	if got := rt.lastModel(); got != "model-a" {
		t.Fatalf("route model %q, want model-a", got)
	}
	if _, err := sdkproto.Initialize.Call(ctx, p.conn, bad); err == nil {
		t.Fatal("bad initialize succeeded")
	}
	sdkproto.SessionPrompt.Call(ctx, p.conn, promptParams("main", "hi"))
	if got := rt.lastModel(); got != "model-a" {
		t.Fatalf("after a failed initialize the route model is %q, want model-a", got)
	}
	if _, err := sdkproto.Initialize.Call(ctx, p.conn, initParams("model-b")); err != nil {
		t.Fatal(err) // a second initialize is accepted
	}
	sdkproto.SessionPrompt.Call(ctx, p.conn, promptParams("main", "hi"))
	if got := rt.lastModel(); got != "model-b" {
		t.Fatalf("route model %q, want model-b", got)
	}
	if r, _ := srv.Route(); r.Cwd != "/srv/project" || r.Model != "model-b" {
		t.Fatalf("Route() = %+v", r)
	}

	_, err = rpc.NewMethod[map[string]any, any]("session/cancel").Call(ctx, p.conn, nil)
	wantRPCError(t, err, "unknown DeepSeek Harness SDK runtime method: session/cancel")
	if err := rpc.NewNotification[map[string]any]("session/cancel").Notify(ctx, p.conn, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sdkproto.Shutdown.Call(ctx, p.conn, rpc.NoParams{}); err != nil {
		t.Fatal(err)
	}
	if err := <-p.served; err != nil {
		t.Fatalf("Serve = %v", err)
	}
	<-srv.Done()
	if len(p.notes) != 0 {
		t.Fatalf("notifications %v, want none", p.notes)
	}
}

// While shutdown is in progress, prompts are refused and a concurrent
// shutdown shares the same task.
func TestServerShutdownRefusesPrompts(t *testing.T) {
	ctx := context.Background()
	rt := &routeRuntime{release: make(chan struct{}), entered: make(chan struct{})}
	srv := sdkproto.NewServer(rt, nil)
	// The Server on a Conn of the test's own, whose drops tell the test
	// what its read loop has read.
	reg := rpc.NewRegistry()
	srv.Register(reg)
	read := make(chan string, 8)
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	server := rpc.NewConn(cr, sw, &rpc.Options{Handler: reg, OnDrop: func(d rpc.Drop) { read <- d.Method }})
	client := rpc.NewConn(sr, cw, nil)
	server.Start()
	client.Start()
	t.Cleanup(func() {
		client.Close()
		server.Close()
		cw.Close()
		sw.Close()
		client.Wait()
		server.Wait()
	})
	if _, err := sdkproto.Initialize.Call(ctx, client, initParams("m")); err != nil {
		t.Fatal(err)
	}
	shut := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := sdkproto.Shutdown.Call(ctx, client, rpc.NoParams{})
			shut <- err
		}()
	}
	<-rt.entered // the Server marks itself shutting down before it calls the Runtime
	if !srv.ShuttingDown() {
		t.Fatal("the runtime is shutting down, the Server does not say so")
	}
	if err := srv.Emitter().Status(context.Background(), "late", sdkproto.StatusIdle); !errors.Is(err, sdkproto.ErrShuttingDown) {
		t.Fatalf("emit during shutdown: %v", err)
	}
	// shutdown is exclusive: a prompt written while it runs waits for it,
	// and is then refused.
	late := make(chan error, 1)
	go func() {
		_, err := sdkproto.SessionPrompt.Call(ctx, client, promptParams("late", "hi"))
		late <- err
	}()
	// Frames are read in order: once the marker is read, so were the
	// frames the client wrote before it (usually the prompt's; if not,
	// the prompt is answered as below all the same).
	client.Notify(ctx, "marker", nil)
	if m := <-read; m != "marker" {
		t.Fatalf("dropped %q, want the marker", m)
	}
	select {
	case err := <-late:
		t.Fatalf("the prompt was answered (%v) while shutdown ran", err)
	default:
	}
	close(rt.release)
	for range 2 {
		if err := <-shut; err != nil {
			t.Fatal(err)
		}
	}
	wantRPCError(t, <-late, "SDK server is shutting down")
	if rt.shutdowns != 1 {
		t.Fatalf("runtime shut down %d times, want 1", rt.shutdowns)
	}
}

func TestServerTeardownFailure(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		fail error
		want string
	}{
		{errors.New("adapter dispose failed"), "adapter dispose failed"},
		{errors.Join(errors.New("a"), errors.New("b")), "SDK server teardown failed"},
	} {
		srv := sdkproto.NewServer(&routeRuntime{fail: tc.fail}, nil)
		p := servePeer(t, srv)
		_, err := sdkproto.Shutdown.Call(ctx, p.conn, rpc.NoParams{})
		wantRPCError(t, err, tc.want)
		select {
		case <-srv.Done():
			t.Fatal("Done closed after a failed shutdown")
		case err := <-p.served:
			t.Fatalf("Serve returned %v after a failed shutdown", err)
		default:
		}
		p.in.Close() // the process then ends through stdin EOF
		if err := <-p.served; err != nil {
			t.Fatalf("Serve = %v", err)
		}
	}
}

// Input EOF tears the runtime down and ends Serve cleanly.
func TestServeInputEOF(t *testing.T) {
	rt := &routeRuntime{}
	srv := sdkproto.NewServer(rt, nil)
	p := servePeer(t, srv)
	if _, err := sdkproto.Initialize.Call(context.Background(), p.conn, initParams("m")); err != nil {
		t.Fatal(err)
	}
	p.in.Close()
	if err := <-p.served; err != nil {
		t.Fatalf("Serve = %v, want nil", err)
	}
	if rt.shutdowns != 1 || !srv.ShuttingDown() {
		t.Fatalf("runtime shut down %d times", rt.shutdowns)
	}
}

// Concurrent appends from many goroutines: each session's events are
// written in seq order, contiguous from 0.
func TestEmitterOrdering(t *testing.T) {
	srv := sdkproto.NewServer(&routeRuntime{}, nil)
	p := servePeer(t, srv)
	if _, err := sdkproto.Initialize.Call(context.Background(), p.conn, initParams("m")); err != nil {
		t.Fatal(err) // binds the emitter to the connection
	}
	const goroutines, each = 8, 100
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				sid := fmt.Sprint("s", g%3)
				if _, err := srv.Emitter().Append(context.Background(), sid, "demo/tick", map[string]int{"g": g, "i": i}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	notes := p.wait(t, func(n []srvNote) bool { return len(n) == goroutines*each })
	next := map[string]int64{}
	lastI := map[int]int{}
	for _, n := range notes {
		var ev sdkproto.SessionEventParams
		if err := json.Unmarshal(n.Params, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Event.Seq != next[ev.SessionID] {
			t.Fatalf("%s: seq %d, want %d", ev.SessionID, ev.Event.Seq, next[ev.SessionID])
		}
		next[ev.SessionID]++
		var d struct{ G, I int }
		json.Unmarshal(ev.Event.Data, &d)
		if prev, ok := lastI[d.G]; ok && d.I != prev+1 {
			t.Fatalf("goroutine %d: event %d written after %d", d.G, d.I, prev)
		}
		lastI[d.G] = d.I
	}
}

// Two sessions' prompts, sent concurrently to the demo, all get their own
// message ids, and every session's seqs are contiguous.
func TestServerConcurrentPrompts(t *testing.T) {
	ctx := context.Background()
	srv := sdkproto.NewServer(demo.NewRuntime(nil), nil)
	p := servePeer(t, srv)
	if _, err := sdkproto.Initialize.Call(ctx, p.conn, initParams("m")); err != nil {
		t.Fatal(err)
	}
	sessions := []string{"s1", "s2"}
	const perSession = 10
	var mu sync.Mutex
	ids := map[string]bool{}
	var wg sync.WaitGroup
	for _, sid := range sessions {
		for i := range perSession {
			wg.Go(func() {
				res, err := sdkproto.SessionPrompt.Call(ctx, p.conn, promptParams(sid, fmt.Sprint("prompt ", i)))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				ids[res.MessageID] = true
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	if len(ids) != len(sessions)*perSession {
		t.Fatalf("%d distinct message ids, want %d", len(ids), len(sessions)*perSession)
	}
	notes := p.wait(t, func(n []srvNote) bool { return countTurnEnds(n) == len(sessions)*perSession })
	next := map[string]int64{}
	for _, n := range notes {
		if n.Method != "session.event" {
			continue
		}
		var ev sdkproto.SessionEventParams
		json.Unmarshal(n.Params, &ev)
		if ev.Event.Seq != next[ev.SessionID] {
			t.Fatalf("%s: seq %d, want %d", ev.SessionID, ev.Event.Seq, next[ev.SessionID])
		}
		next[ev.SessionID]++
	}
	sdkproto.Shutdown.Call(ctx, p.conn, rpc.NoParams{})
}

func countTurnEnds(notes []srvNote) int {
	n := 0
	for _, note := range notes {
		var ev sdkproto.SessionEventParams
		if note.Method == "session.event" && json.Unmarshal(note.Params, &ev) == nil && ev.Event.Type == sdkproto.EventTurnEnd {
			n++
		}
	}
	return n
}

// Shutdown in the middle of a slow turn: {} is the last frame, no idle
// follows, Serve returns, and no goroutine outlives the connection.
func TestServeShutdownMidTurnLeavesNoGoroutines(t *testing.T) {
	rpctest.CheckNoLeak(t)
	ctx := context.Background()
	srv := sdkproto.NewServer(demo.NewRuntime(&demo.Options{SlowDelay: 20 * time.Millisecond}), nil)
	p := servePeer(t, srv)
	if _, err := sdkproto.Initialize.Call(ctx, p.conn, initParams("m")); err != nil {
		t.Fatal(err)
	}
	// 1000 words 20ms apart: the turn would take 20s, so the shutdown
	// lands mid-turn however slow the machine is.
	slow := "/slow" + strings.Repeat(" word", 1000)
	if _, err := sdkproto.SessionPrompt.Call(ctx, p.conn, promptParams("main", slow)); err != nil {
		t.Fatal(err)
	}
	p.wait(t, func(n []srvNote) bool { return len(n) >= 8 }) // streaming
	if _, err := sdkproto.Shutdown.Call(ctx, p.conn, rpc.NoParams{}); err != nil {
		t.Fatal(err)
	}
	if err := <-p.served; err != nil {
		t.Fatal(err)
	}
	<-p.conn.Done() // the server's output ended
	for _, n := range p.notes {
		if n.Method == "session.status" && string(n.Params) == `{"sessionId":"main","status":"idle"}` {
			t.Fatal("idle sent after shutdown")
		}
	}
	p.in.Close()
	p.conn.Close()
	p.conn.Wait()
}
