package interop_test

// Scenario 1: Go rpc.Conn ⇄ the real TypeScript JsonRpcLineTransport
// (js/peer.mjs), in both roles on the same stdio link: Go calls and
// notifies the TS transport, and the TS transport calls and notifies Go.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// Typed descriptors shared by the Go side of the tests.
type textParams struct {
	Text  string         `json:"text"`
	N     int            `json:"n"`
	List  []any          `json:"list"`
	Inner map[string]any `json:"inner"`
}

type tick struct {
	Seq int `json:"seq"`
}

var (
	echoMethod  = rpc.NewMethod[textParams, textParams]("echo")
	noteNotify  = rpc.NewNotification[textParams]("note")
	seqNotify   = rpc.NewNotification[tick]("seq")
	statsMethod = rpc.NewMethod[rpc.NoParams, peerStats]("stats")
)

// goSide is the Go registry the TS transport calls into, with what its
// notification handlers saw.
type goSide struct {
	reg *rpc.Registry

	mu    sync.Mutex
	notes []rpc.Drop // reused as (method, params): Method and Line
	ticks []int
	uni   chan string

	idx indexedRun
}

// indexedRun answers the n concurrent "indexed" requests of one run in
// reverse order of i, once all n are in, so the responses leave out of
// order for certain.
type indexedRun struct {
	mu      sync.Mutex
	n       int
	arrived int
	release []chan struct{}
}

func (r *indexedRun) wait(ctx context.Context, i, n int) error {
	r.mu.Lock()
	if r.release == nil {
		r.n = n
		r.release = make([]chan struct{}, n+1)
		for k := range r.release {
			r.release[k] = make(chan struct{})
		}
	}
	r.arrived++
	if r.arrived == r.n {
		close(r.release[r.n]) // all are in: the highest i goes first
	}
	gate, next := r.release[i+1], r.release[i]
	r.mu.Unlock()
	select {
	case <-gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	close(next)
	return nil
}

func newGoSide() *goSide {
	g := &goSide{reg: rpc.NewRegistry(), uni: make(chan string, 4)}
	rpc.Handle(g.reg, rpc.NewMethod[json.RawMessage, json.RawMessage]("echoRaw"),
		func(_ context.Context, p json.RawMessage) (json.RawMessage, error) {
			if p == nil {
				return json.RawMessage(`"<absent>"`), nil
			}
			return p, nil
		})
	rpc.Handle(g.reg, echoMethod, func(_ context.Context, p textParams) (textParams, error) { return p, nil })
	rpc.Handle(g.reg, rpc.NewMethod[rpc.NoParams, any]("fail"), func(context.Context, rpc.NoParams) (any, error) {
		return nil, &rpc.Error{Code: 4242, Message: "boom: ünïcödé ✓", Data: json.RawMessage(`{"k":[1,"x",null,true],"n":1.5}`)}
	})
	rpc.Handle(g.reg, rpc.NewMethod[rpc.NoParams, any]("failNullData"), func(context.Context, rpc.NoParams) (any, error) {
		return nil, &rpc.Error{Code: -32000, Message: "null data", Data: json.RawMessage(`null`)}
	})
	rpc.Handle(g.reg, rpc.NewMethod[rpc.NoParams, any]("failPlain"), func(context.Context, rpc.NoParams) (any, error) {
		return nil, errors.New("plain failure")
	})
	// hang waits for its context, a wait the Conn cannot see: it is Async,
	// so that what the peer writes after it is not held behind it.
	rpc.Handle(g.reg, rpc.NewMethod[rpc.NoParams, any]("hang"), func(ctx context.Context, _ rpc.NoParams) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}, rpc.Async)
	type idx struct{ I, N int }
	rpc.Handle(g.reg, rpc.NewMethod[idx, map[string]int]("indexed"), func(ctx context.Context, p idx) (map[string]int, error) {
		if err := g.idx.wait(ctx, p.I, p.N); err != nil {
			return nil, err
		}
		return map[string]int{"i": p.I}, nil
	})
	rpc.HandleNotification(g.reg, seqNotify, func(_ context.Context, p tick) {
		g.mu.Lock()
		g.ticks = append(g.ticks, p.Seq)
		g.mu.Unlock()
	})
	rpc.HandleNotification(g.reg, rpc.NewNotification[struct{ S string }]("uni"), func(_ context.Context, p struct{ S string }) {
		g.uni <- p.S
	})
	g.reg.HandleUnknownNotification(func(_ context.Context, method string, params json.RawMessage) {
		g.mu.Lock()
		g.notes = append(g.notes, rpc.Drop{Method: method, Line: slices.Clone(params)})
		g.mu.Unlock()
	})
	return g
}

func (g *goSide) takeNotes() []rpc.Drop {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.notes
	g.notes = nil
	return n
}

// tsCall asks the TS transport to call Go and returns how its call settled.
func (l *link) tsCall(method string, params any, withParams bool) outcome {
	l.t.Helper()
	p := map[string]any{"method": method}
	if withParams {
		p["params"] = params
	}
	var o outcome
	l.mustCall("call", p, &o)
	return o
}

const sample = "héllo \"wörld\" 😀 世界 <&> \u2028\u2029 \\ \t\x01 end"

func TestTransportTypedCallsAndNotifications(t *testing.T) {
	rpctest.CheckNoLeak(t)
	g := newGoSide()
	l := startLink(t, "serve", g.reg)
	ctx := context.Background()

	// Go -> TS: a typed call, its result decoded back into the same type.
	in := textParams{Text: sample, N: -7, List: []any{1.5, "x", nil, true, map[string]any{}}, Inner: map[string]any{"a": []any{}}}
	ctx1, cancel := context.WithTimeout(ctx, testTimeout)
	defer cancel()
	out, err := echoMethod.Call(ctx1, l.conn, in)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(out) != fmt.Sprint(in) {
		t.Errorf("echo: got %+v, want %+v", out, in)
	}

	// Go -> TS: typed notifications, then a call that lists them in order.
	for i := range 3 {
		if err := noteNotify.Notify(ctx, l.conn, textParams{Text: sample, N: i}); err != nil {
			t.Fatal(err)
		}
	}
	var notes struct {
		Notes []struct {
			Method string     `json:"method"`
			Params textParams `json:"params"`
		} `json:"notes"`
	}
	l.mustCall("notes", map[string]any{"clear": true}, &notes)
	if len(notes.Notes) != 3 {
		t.Fatalf("TS saw %d notifications, want 3: %+v", len(notes.Notes), notes)
	}
	for i, n := range notes.Notes {
		if n.Method != "note" || n.Params.Text != sample || n.Params.N != i {
			t.Errorf("notification %d: %+v", i, n)
		}
	}

	// TS -> Go: a typed call served by a Go handler.
	o := l.tsCall("echo", in, true)
	var back textParams
	if !o.OK || json.Unmarshal(o.Result, &back) != nil || fmt.Sprint(back) != fmt.Sprint(in) {
		t.Errorf("TS -> Go echo: %+v", o)
	}

	// TS -> Go: notifications with and without params.
	l.mustCall("notify", map[string]any{"method": "hello", "params": map[string]any{"text": sample}}, nil)
	l.mustCall("emitBare", map[string]any{"method": "bare"}, nil)
	l.mustCall("stats", nil, nil) // a round trip: both notifications were read before its reply
	got := g.takeNotes()
	if len(got) != 2 || got[0].Method != "hello" || !jsonEq(got[0].Line, []byte(`{"text":`+mustJSON(sample)+`}`)) ||
		got[1].Method != "bare" || got[1].Line != nil {
		t.Errorf("Go saw notifications %+v", got)
	}
	// The TS side wrote `{"jsonrpc":"2.0","method":"bare"}`: no params member.
	if !strings.Contains(l.received.String(), `{"jsonrpc":"2.0","method":"bare"}`+"\n") {
		t.Errorf("bare notification not written as docs/wire.md §2.5 shows")
	}
	var s peerStats
	ctx2, cancel2 := context.WithTimeout(ctx, testTimeout)
	defer cancel2()
	if s, err = statsMethod.Call(ctx2, l.conn, rpc.NoParams{}); err != nil || len(s.BadWrites) > 0 {
		t.Errorf("stats: %+v %v", s, err)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestTransportHandlerErrors(t *testing.T) {
	rpctest.CheckNoLeak(t)
	g := newGoSide()
	l := startLink(t, "serve", g.reg)

	// Go -> TS: a rejected handler is -32603 with the message, no data.
	var e *rpc.Error
	err := l.call("fail", map[string]any{"message": "nope: ✗ \"quoted\""}, nil)
	if !errors.As(err, &e) || e.Code != rpc.CodeInternalError || e.CodeMissing || e.Message != "nope: ✗ \"quoted\"" || e.Data != nil {
		t.Errorf("fail: %#v (%v)", e, err)
	}
	// A thrown non-Error is converted with String(value).
	for _, c := range []struct {
		value any
		want  string
	}{{42, "42"}, {"text", "text"}, {nil, "null"}, {[]any{1, 2}, "1,2"}, {map[string]any{}, "[object Object]"}} {
		err := l.call("throwString", map[string]any{"value": c.value}, nil)
		if !errors.As(err, &e) || e.Code != rpc.CodeInternalError || e.Message != c.want || e.Data != nil {
			t.Errorf("throw %v: %#v (%v)", c.value, e, err)
		}
	}

	// TS -> Go: code, message and data of a Go *rpc.Error reach the TS
	// JsonRpcResponseError intact.
	o := l.tsCall("fail", nil, false)
	if o.OK || !o.IsResponseError || string(o.Code) != "4242" || o.Message != "boom: ünïcödé ✓" ||
		!jsonEq(o.Data, []byte(`{"k":[1,"x",null,true],"n":1.5}`)) {
		t.Errorf("TS saw %+v", o)
	}
	o = l.tsCall("failNullData", nil, false)
	if o.OK || string(o.Code) != "-32000" || o.Message != "null data" || string(o.Data) != "null" {
		t.Errorf("TS saw %+v (null data must stay null)", o)
	}
	o = l.tsCall("failPlain", nil, false)
	if o.OK || string(o.Code) != "-32603" || o.Message != "plain failure" || string(o.Data) != `"<undefined>"` {
		t.Errorf("TS saw %+v", o)
	}
	// Params that do not decode into the Go handler's type: -32602.
	o = l.tsCall("echo", map[string]any{"text": 5}, true)
	if o.OK || string(o.Code) != "-32602" || !strings.HasPrefix(o.Message, "invalid params") {
		t.Errorf("TS saw %+v", o)
	}
	// Method not found on the Go side, as the TS transport words it.
	o = l.tsCall("no/such", map[string]any{}, true)
	if o.OK || !o.IsResponseError || string(o.Code) != "-32601" || o.Message != "method not found: no/such" || string(o.Data) != `"<undefined>"` {
		t.Errorf("TS saw %+v", o)
	}
	l.stats()
}

func TestTransportMethodNotFound(t *testing.T) {
	rpctest.CheckNoLeak(t)
	// A TS transport without a request handler (as the TS client is).
	l := startLink(t, "bare", newGoSide().reg)
	var e *rpc.Error
	err := l.call("no/such", map[string]any{"a": 1}, nil)
	if !errors.As(err, &e) || e.Code != rpc.CodeMethodNotFound || e.Message != "method not found: no/such" || e.Data != nil || e.CodeMissing {
		t.Fatalf("got %#v (%v)", e, err)
	}
	// The exact frame: code and message only (docs/wire.md §2.6).
	want := `"error":{"code":-32601,"message":"method not found: no/such"}}`
	if !strings.Contains(l.received.String(), want) {
		t.Errorf("reply bytes %q lack %s", l.received.String(), want)
	}
}

func TestTransportParamsOfEveryKind(t *testing.T) {
	rpctest.CheckNoLeak(t)
	l := startLink(t, "serve", newGoSide().reg)
	kinds := []struct {
		name   string
		params any // nil: the member is absent
		tsSees string
	}{
		{"object", map[string]any{"a": []any{1, "b", nil}}, `{"a":[1,"b",null]}`},
		{"empty object", map[string]any{}, `{}`},
		{"array", []any{1, 2, 3}, `{}`},
		{"string", "s", `{}`},
		{"number", 1.5, `{}`},
		{"true", true, `{}`},
		{"false", false, `{}`},
		{"null", json.RawMessage(`null`), `{}`}, // Go's decodeParams treats null as absent (documented)
		{"absent", nil, `{}`},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			// Go -> TS: the TS transport normalises params to an object
			// (docs/wire.md §2.3); echo returns what its handler received.
			var got json.RawMessage
			l.mustCall("echo", k.params, &got)
			if string(got) != k.tsSees {
				t.Errorf("TS handler saw %s, want %s", got, k.tsSees)
			}
			// TS -> Go: the TS transport sends what it was given; the Go
			// handler gets the raw value (absent stays absent).
			o := l.tsCall("echoRaw", k.params, k.params != nil)
			want := `"<absent>"`
			if k.params != nil && k.name != "null" {
				want = mustJSON(k.params)
			}
			if !o.OK || !jsonEq(o.Result, []byte(want)) {
				t.Errorf("Go handler saw %s, want %s", o.Result, want)
			}
		})
	}
}

func TestTransportUnicodeSplitAcrossWrites(t *testing.T) {
	rpctest.CheckNoLeak(t)
	g := newGoSide()
	totals := make(chan int, 4096)
	l := startLinkWith(t, "serve", g.reg, func(n int) {
		select {
		case totals <- n:
		default:
		}
	}, "INTEROP_ACK=1")
	text := "é😀世界 — ü"
	frame := []byte(`{"jsonrpc":"2.0","method":"uni","params":{"s":` + mustJSON(text) + `}}` + "\n")
	// Cut inside é (2 bytes), inside 😀 (4 bytes) and inside 世 (3 bytes).
	cuts := cutPoints(frame, []string{"é", "😀", "世"})

	// Go -> TS: each part is written only after the TS side acknowledged
	// reading the previous ones, so its reads end inside a character.
	sent := 0
	for _, part := range split(frame, cuts) {
		if err := l.out.raw(part); err != nil {
			t.Fatal(err)
		}
		sent += len(part)
		l.waitAck(sent)
	}
	var notes struct {
		Notes []struct {
			Method string
			Params struct{ S string }
		}
	}
	l.mustCall("notes", map[string]any{"clear": true}, &notes)
	if len(notes.Notes) != 1 || notes.Notes[0].Params.S != text {
		t.Errorf("TS decoded %+v, want %q", notes, text)
	}
	if s := l.stats(); s.SplitChunks < len(cuts) {
		t.Errorf("TS read %d chunks ending inside a character, want >= %d: the split was not exercised", s.SplitChunks, len(cuts))
	}

	// TS -> Go: the TS side writes the parts, each after Go read the
	// previous ones (Go says so with a "continue" notification).
	var parts []string
	for _, p := range split(frame, cuts) {
		parts = append(parts, base64.StdEncoding.EncodeToString(p))
	}
	// Everything up to the stats reply has been read: start counting there.
	read := 0
	for drained := false; !drained; {
		select {
		case read = <-totals:
		default:
			drained = true
		}
	}
	done := make(chan error, 1)
	go func() { done <- l.call("splitSend", map[string]any{"parts": parts}, nil) }()
	for k, p := range split(frame, cuts) {
		want := read + len(p)
		for read < want {
			read = linetest.Within(t, totals, "Go reading the split frame")
		}
		// The last part may share a read with splitSend's reply.
		if k < len(cuts) && read != want {
			t.Fatalf("part %d: Go read %d bytes, want exactly %d (the split was not exercised)", k, read, want)
		}
		if k < len(cuts) {
			if err := l.conn.Notify(context.Background(), "continue", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := linetest.Within(t, g.uni, "the split notification"); got != text {
		t.Errorf("Go decoded %q, want %q", got, text)
	}
	if err := linetest.Within(t, done, "splitSend"); err != nil {
		t.Fatal(err)
	}
}

// cutPoints returns, for each character, the offset one byte into its
// first occurrence in b.
func cutPoints(b []byte, chars []string) []int {
	var cuts []int
	for _, c := range chars {
		cuts = append(cuts, strings.Index(string(b), c)+1)
	}
	slices.Sort(cuts)
	return cuts
}

func split(b []byte, cuts []int) [][]byte {
	var out [][]byte
	prev := 0
	for _, c := range cuts {
		out = append(out, b[prev:c])
		prev = c
	}
	return append(out, b[prev:])
}

func TestTransportLargePayloads(t *testing.T) {
	rpctest.CheckNoLeak(t)
	l := startLink(t, "serve", newGoSide().reg)
	l.timeout = bulkTimeout
	// 8 MiB of mixed 1-, 2-, 3- and 4-byte characters and escapes.
	unit := "aé世😀\"\\\n"
	count := (8 << 20) / len(unit)
	big := strings.Repeat(unit, count)

	// Go -> TS request of 8 MiB, and its 8 MiB result back.
	var echoed struct{ S string }
	l.mustCall("echo", map[string]any{"s": big}, &echoed)
	if echoed.S != big {
		t.Errorf("Go -> TS -> Go: %d bytes came back, want %d (equal)", len(echoed.S), len(big))
	}
	// TS -> Go request of 8 MiB, echoed by Go; TS compares what came back.
	var o struct{ OK, Same bool }
	l.mustCall("callExpect", map[string]any{"method": "echoRaw", "params": map[string]any{"s": big}, "unit": unit, "count": count}, &o)
	if !o.OK || !o.Same {
		t.Errorf("TS -> Go -> TS: %+v", o)
	}
	l.stats()
}

func TestTransportPipelinedOutOfOrder(t *testing.T) {
	rpctest.CheckNoLeak(t)
	g := newGoSide()
	l := startLink(t, "serve", g.reg)
	l.timeout = bulkTimeout
	const n = 10000

	// Go -> TS: n calls in flight at once; TS answers them in reverse
	// arrival order once all are in.
	start := time.Now()
	var wg sync.WaitGroup
	orders := make([]int, n)
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r struct{ Order int }
			if err := l.call("gather", map[string]any{"group": "g", "n": n}, &r); err != nil {
				errs <- err
				return
			}
			orders[i] = r.Order
		}()
	}
	waitOrFail(t, "10,000 pipelined calls", bulkTimeout, wg.Wait)
	t.Logf("Go -> TS: %d pipelined calls in %v", n, time.Since(start).Round(time.Millisecond))
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := make([]bool, n)
	for _, o := range orders {
		if o < 0 || o >= n || seen[o] {
			t.Fatalf("order %d repeated or out of range: responses were matched to the wrong calls", o)
		}
		seen[o] = true
	}
	// The responses did leave out of order: the ids, as read, are not in
	// the order the requests were sent.
	var ids []int
	for _, f := range frames(t, l.received, "TS transport") {
		var id int
		if f.method == nil && json.Unmarshal(f.id, &id) == nil {
			ids = append(ids, id)
		}
	}
	if len(ids) != n || slices.IsSorted(ids) {
		t.Errorf("want %d responses out of order; got %d, sorted: %v", n, len(ids), slices.IsSorted(ids))
	}

	// TS -> Go: n pipelined calls from the TS transport; the Go handlers
	// answer them in reverse order.
	var r struct {
		Good       int
		OutOfOrder bool
	}
	start = time.Now()
	l.mustCall("callMany", map[string]any{"method": "indexed", "n": n}, &r)
	t.Logf("TS -> Go: %d pipelined calls in %v", n, time.Since(start).Round(time.Millisecond))
	if r.Good != n || !r.OutOfOrder {
		t.Errorf("TS -> Go: %+v, want %d good and out of order", r, n)
	}
	l.stats()
}

func TestTransportNotificationOrder(t *testing.T) {
	rpctest.CheckNoLeak(t)
	g := newGoSide()
	l := startLink(t, "serve", g.reg)
	l.timeout = bulkTimeout
	const n = 10000
	ctx := context.Background()
	for i := range n {
		if err := seqNotify.Notify(ctx, l.conn, tick{Seq: i}); err != nil {
			t.Fatal(err)
		}
	}
	var s struct {
		Count   int
		InOrder bool
	}
	l.mustCall("noteSummary", map[string]any{"method": "seq"}, &s)
	if s.Count != n || !s.InOrder {
		t.Errorf("TS saw %+v, want %d in order", s, n)
	}
	// TS -> Go: the notifications, written before the reply, are all
	// handled (in order) by the time the reply is read.
	l.mustCall("emit", map[string]any{"method": "seq", "count": n}, nil)
	g.mu.Lock()
	ticks := slices.Clone(g.ticks)
	g.mu.Unlock()
	if len(ticks) != n {
		t.Fatalf("Go saw %d notifications before the reply, want %d", len(ticks), n)
	}
	for i, s := range ticks {
		if s != i {
			t.Fatalf("notification %d has seq %d: out of order", i, s)
		}
	}
}

func TestTransportGoClosesInput(t *testing.T) {
	rpctest.CheckNoLeak(t)
	g := newGoSide()
	l := startLink(t, "serve", g.reg)
	// TS has a request pending to Go; then Go ends TS's input.
	l.mustCall("pendingUntilEnd", map[string]any{"method": "hang"}, nil)
	waitContains(t, l.received, `"method":"hang"`)
	if err := l.stdin.Close(); err != nil {
		t.Fatal(err)
	}
	// The TS transport rejects it with "JSON-RPC input closed" and reports
	// that on its still open output; then node has nothing left and exits 0.
	l.mustExit(testTimeout, 0)
	<-l.conn.Done()
	if !errors.Is(l.conn.Err(), rpc.ErrInputEnded) {
		t.Errorf("Conn ended with %v, want ErrInputEnded", l.conn.Err())
	}
	notes := g.takeNotes()
	if len(notes) != 1 || notes[0].Method != "report" {
		t.Fatalf("Go saw %+v, want one report", notes)
	}
	var o outcome
	json.Unmarshal(notes[0].Line, &o)
	if o.OK || o.Message != "JSON-RPC input closed" || o.IsResponseError {
		t.Errorf("TS pending request settled as %+v, want rejected with JSON-RPC input closed", o)
	}
}

func TestTransportTSOutputEnds(t *testing.T) {
	rpctest.CheckNoLeak(t)
	l := startLink(t, "serve", newGoSide().reg)
	hung := make(chan error, 1)
	go func() { hung <- l.call("hang", nil, nil) }()
	// exit answers, then node exits: its output ends under the pending call.
	waitContains(t, l.sent, `"method":"hang"`)
	l.mustCall("exit", map[string]any{"code": 0}, nil)
	if err := linetest.Within(t, hung, "the pending call"); !errors.Is(err, rpc.ErrInputEnded) {
		t.Errorf("pending call ended with %v, want ErrInputEnded", err)
	}
	l.mustExit(testTimeout, 0)
}

func TestTransportGoClose(t *testing.T) {
	rpctest.CheckNoLeak(t)
	l := startLink(t, "serve", newGoSide().reg)
	hung := make(chan error, 1)
	go func() { hung <- l.call("hang", nil, nil) }()
	waitContains(t, l.sent, `"method":"hang"`)
	l.conn.Close()
	if err := linetest.Within(t, hung, "the pending call"); !errors.Is(err, rpc.ErrClosed) {
		t.Errorf("pending call ended with %v, want ErrClosed", err)
	}
	before := len(l.sent.String())
	if err := l.conn.Notify(context.Background(), "late", nil); !errors.Is(err, rpc.ErrClosed) {
		t.Errorf("Notify after Close: %v", err)
	}
	if len(l.sent.String()) != before {
		t.Errorf("Go wrote after Close")
	}
	// Close leaves the streams to their owner: closing stdin ends the TS
	// side, which exits 0.
	l.stdin.Close()
	l.mustExit(testTimeout, 0)
}

func TestTransportTSClose(t *testing.T) {
	rpctest.CheckNoLeak(t)
	l := startLink(t, "serve", newGoSide().reg)
	// TS sends hang to Go, then close()s its transport: the pending request
	// rejects with "JSON-RPC transport closed"; the reply to our call is
	// still written, since close() leaves the streams open.
	var o outcome
	l.mustCall("closeWithPending", map[string]any{"method": "hang"}, &o)
	if o.OK || o.IsResponseError || o.Message != "JSON-RPC transport closed" {
		t.Errorf("TS pending request settled as %+v", o)
	}
	// Nothing is read any more: a call goes unanswered (bounded check).
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := l.conn.Call(ctx, "stats", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("call after TS close(): %v, want no answer", err)
	}
	l.stdin.Close()
	l.mustExit(testTimeout, 0)
}
