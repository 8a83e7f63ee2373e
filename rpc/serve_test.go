package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

func TestHandlerResultAndErrors(t *testing.T) {
	p := newPeer(t, &rpc.Options{Handler: echoRegistry()})
	p.Send(`{"jsonrpc":"2.0","id":"a","method":"echo","params":{"text":"hi"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":"a","result":{"echo":"hi"}}`)
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"fail"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"it failed"}}`)
	p.Send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"coded"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":2,"error":{"code":42,"message":"coded","data":{"k":"v"}}}`)
	p.Send(`{"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":"panic"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"{{string}}"}}`)
	// The connection lives on after the panic.
	p.Send(`{"jsonrpc":"2.0","id":4,"method":"echo"}`)
	p.Expect(`{"jsonrpc":"2.0","id":4,"result":{"echo":""}}`)
}

func TestIDsAreEchoedByteForByte(t *testing.T) {
	p := newPeer(t, &rpc.Options{Handler: echoRegistry()})
	for _, id := range []string{`1.0`, `-0`, `1e2`, `9007199254740993`, `"\u00e9"`, `""`, `0`} {
		p.Send(`{"jsonrpc":"2.0","id":` + id + `,"method":"echo","params":{"text":"x"}}`)
		got := p.Next()
		want := `{"jsonrpc":"2.0","id":` + id + `,"result":{"echo":"x"}}`
		if got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
}

func TestParamsThatDoNotDecode(t *testing.T) {
	p := newPeer(t, &rpc.Options{Handler: echoRegistry()})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":5}}`)
	p.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"{{string}}"}}`)
	p.Send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":[1]}`)
	p.Expect(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"{{string}}"}}`)
	// Absent and null params are an empty params object.
	p.Send(`{"jsonrpc":"2.0","id":3,"method":"echo","params":null}`)
	p.Expect(`{"jsonrpc":"2.0","id":3,"result":{"echo":""}}`)
}

func TestMethodNotFound(t *testing.T) {
	p := newPeer(t, &rpc.Options{Handler: echoRegistry()})
	p.Send(`{"jsonrpc":"2.0","id":7,"method":"nope\u0021"}`)
	p.Expect(`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found: nope!"}}`)
	// A request naming a notification is not a request method either.
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, tick, func(context.Context, rpc.NoParams) {})
	q := newPeer(t, &rpc.Options{Handler: reg})
	q.Send(`{"jsonrpc":"2.0","id":8,"method":"tick"}`)
	q.Expect(`{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"method not found: tick"}}`)
}

func TestNotificationsAreDeliveredInOrder(t *testing.T) {
	const n = 2000
	var got []string
	done := make(chan struct{})
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, note, func(ctx context.Context, p echoParams) {
		got = append(got, p.Text)
		if len(got) == n {
			close(done)
		}
	})
	p := newPeer(t, &rpc.Options{Handler: reg})
	go func() {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"note","params":{"text":"%d"}}`+"\n", i)
		}
		p.TrySend(strings.TrimSuffix(b.String(), "\n"))
	}()
	<-done
	for i, s := range got {
		if s != fmt.Sprint(i) {
			t.Fatalf("notification %d is %q", i, s)
		}
	}
}

func TestConcurrentRequestsAreBounded(t *testing.T) {
	const limit, total = 3, 12
	var running, peak atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{}, total)
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echo, func(ctx context.Context, p echoParams) (echoResult, error) {
		n := running.Add(1)
		for {
			old := peak.Load()
			if n <= old || peak.CompareAndSwap(old, n) {
				break
			}
		}
		started <- struct{}{}
		<-release
		running.Add(-1)
		return echoResult{Echo: p.Text}, nil
	})
	p := newPeer(t, &rpc.Options{Handler: reg, MaxConcurrentRequests: limit})
	for i := range total {
		p.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"text":"%d"}}`, i, i))
	}
	for range limit {
		<-started
	}
	select {
	case <-started:
		t.Fatal("a handler started beyond the bound")
	default:
	}
	close(release)
	seen := map[string]bool{}
	for range total {
		var f struct{ ID json.RawMessage }
		json.Unmarshal([]byte(p.Next()), &f)
		seen[string(f.ID)] = true
	}
	if len(seen) != total || peak.Load() != limit {
		t.Fatalf("answered %d distinct ids, peak concurrency %d", len(seen), peak.Load())
	}
}

// A side whose handler slots are all busy still reads the responses to its
// own calls: here the only slot's handler waits for a call to the peer,
// and lends its slot meanwhile to the request that waits for one.
func TestResponsesAreNotQueuedBehindRequests(t *testing.T) {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echo, func(ctx context.Context, p echoParams) (echoResult, error) {
		c := rpc.ConnFromContext(ctx)
		r, err := echo.Call(ctx, c, echoParams{Text: "inner " + p.Text})
		return echoResult{Echo: "outer " + r.Echo}, err
	})
	p := newPeer(t, &rpc.Options{Handler: reg, MaxConcurrentRequests: 1})
	p.Send(`{"jsonrpc":"2.0","id":"o1","method":"echo","params":{"text":"a"}}`)
	p.Send(`{"jsonrpc":"2.0","id":"o2","method":"echo","params":{"text":"b"}}`) // waits for the slot
	// The inner calls are answered as they come; the replies follow.
	got := map[string]bool{}
	for len(got) < 2 {
		line := p.Next()
		var f struct {
			ID     json.RawMessage
			Method string
			Params echoParams
		}
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatal(err)
		}
		if f.Method == "" {
			got[line] = true
			continue
		}
		text := strings.ToUpper(strings.TrimPrefix(f.Params.Text, "inner "))
		p.Send(`{"jsonrpc":"2.0","id":` + string(f.ID) + `,"result":{"echo":"` + text + `"}}`)
	}
	want := map[string]bool{
		`{"jsonrpc":"2.0","id":"o1","result":{"echo":"outer A"}}`: true,
		`{"jsonrpc":"2.0","id":"o2","result":{"echo":"outer B"}}`: true,
	}
	if !maps.Equal(got, want) {
		t.Fatalf("replies %v, want %v", got, want)
	}
}

// A handler that lent its slot for a call, and found none free when the
// call returned, runs on lent; its next call must leave the counts as they
// are. It once counted itself stuck, so that a request arriving then was
// answered CodeOverloaded while the slot's holder ran, and the counts broke.
func TestSecondCallOfAHandlerThatRunsLent(t *testing.T) {
	slowStarted := make(chan struct{})
	release := make(chan struct{})
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echo, func(ctx context.Context, p echoParams) (echoResult, error) {
		switch p.Text {
		case "outer":
			c := rpc.ConnFromContext(ctx)
			for _, text := range []string{"ping1", "ping2"} {
				if _, err := echo.Call(ctx, c, echoParams{Text: text}); err != nil {
					return echoResult{}, err
				}
			}
		case "slow":
			close(slowStarted)
			<-release
		}
		return echoResult{Echo: p.Text}, nil
	})
	p := newPeer(t, &rpc.Options{Handler: reg, MaxConcurrentRequests: 1})
	p.Send(`{"jsonrpc":"2.0","id":"o","method":"echo","params":{"text":"outer"}}`)
	ping1 := p.NextCall() // outer lends its only slot while it waits
	p.Send(`{"jsonrpc":"2.0","id":"s","method":"echo","params":{"text":"slow"}}`)
	linetest.Within(t, slowStarted, "the slow request to start on the lent slot")
	p.Answer(ping1, `{"echo":"PING1"}`) // outer runs on, lent: the slot is slow's
	ping2 := p.NextCall()
	p.Send(`{"jsonrpc":"2.0","id":"f","method":"echo","params":{"text":"fast"}}`) // waits for the slot
	close(release)
	p.Expect(`{"jsonrpc":"2.0","id":"s","result":{"echo":"slow"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":"f","result":{"echo":"fast"}}`)
	p.Answer(ping2, `{"echo":"PING2"}`)
	p.Expect(`{"jsonrpc":"2.0","id":"o","result":{"echo":"outer"}}`)
}

func TestNotificationDrops(t *testing.T) {
	drops := make(chan rpc.Drop, 8)
	reg := rpc.NewRegistry()
	got := make(chan string, 8)
	rpc.HandleNotification(reg, note, func(ctx context.Context, p echoParams) {
		if p.Text == "panic" {
			panic("boom")
		}
		got <- p.Text
	})
	p := newPeer(t, &rpc.Options{Handler: reg, OnDrop: func(d rpc.Drop) { drops <- d }})
	p.Send(`{"jsonrpc":"2.0","method":"note","params":{"text":1}}`)
	if d := <-drops; d.Reason != rpc.DropInvalidParams || d.Method != "note" || d.Err == nil {
		t.Fatalf("drop = %+v", d)
	}
	p.Send(`{"jsonrpc":"2.0","method":"other"}`)
	if d := <-drops; d.Reason != rpc.DropUnhandledNotification || d.Method != "other" {
		t.Fatalf("drop = %+v", d)
	}
	p.Send(`{"jsonrpc":"2.0","method":"note","params":{"text":"panic"}}`)
	p.Send(`{"jsonrpc":"2.0","method":"note","params":{"text":"after"}}`)
	if s := <-got; s != "after" {
		t.Fatalf("got %q", s)
	}
}

func TestDropReasons(t *testing.T) {
	drops := make(chan rpc.Drop, 16)
	p := newPeer(t, &rpc.Options{MaxFrameSize: 64, OnDrop: func(d rpc.Drop) { drops <- d }})
	cases := []struct {
		line string
		want rpc.DropReason
	}{
		{`{"id":1,`, rpc.DropMalformed},
		{`[{"jsonrpc":"2.0","id":1,"method":"m"}]`, rpc.DropNotObject},
		{`{"jsonrpc":"2.0"}`, rpc.DropUnclassified},
		{`{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("x", 100) + `"}`, rpc.DropOversize},
		{strings.Repeat("[", rpc.MaxDepth+1) + strings.Repeat("]", rpc.MaxDepth+1), rpc.DropOversize},
		{`{"id":5,"result":1}`, rpc.DropUnmatchedResponse},
	}
	for _, c := range cases {
		p.Send(c.line)
		if d := <-drops; d.Reason != c.want {
			t.Fatalf("%.40s: dropped as %v, want %v", c.line, d.Reason, c.want)
		}
	}
	if s := rpc.DropTooDeep.String(); s == "" || s == rpc.DropReason(200).String() {
		t.Fatalf("DropTooDeep.String() = %q", s)
	}
}

func TestTooDeepFrameIsDropped(t *testing.T) {
	drops := make(chan rpc.Drop, 4)
	p := newPeer(t, &rpc.Options{Handler: echoRegistry(), OnDrop: func(d rpc.Drop) { drops <- d }})
	deep := strings.Repeat("[", rpc.MaxDepth) + strings.Repeat("]", rpc.MaxDepth)
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"x":` + deep + `}}`)
	if d := <-drops; d.Reason != rpc.DropTooDeep {
		t.Fatalf("dropped as %v", d.Reason)
	}
	p.Send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"ok"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":2,"result":{"echo":"ok"}}`)
}

func TestOversizeLineDoesNotStall(t *testing.T) {
	drops := make(chan rpc.Drop, 4)
	p := newPeer(t, &rpc.Options{Handler: echoRegistry(), MaxFrameSize: 1 << 10, OnDrop: func(d rpc.Drop) { drops <- d }})
	big := strings.Repeat("x", 1<<20) // far beyond the limit and the read buffer
	// Written from another goroutine: the pipe gives way only as the Conn
	// reads, and the test waits for the drop meanwhile.
	go p.TrySend(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"` + big + `"}}`)
	d := <-drops
	if d.Reason != rpc.DropOversize || d.Size < 1<<20 {
		t.Fatalf("drop = %v size %d", d.Reason, d.Size)
	}
	p.Send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"after"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":2,"result":{"echo":"after"}}`)
}

func TestRegisteringTwicePanics(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Fatalf("%s did not panic", name)
			}
		}()
		f()
	}
	reg := echoRegistry()
	mustPanic("Handle twice", func() {
		rpc.Handle(reg, echo, func(context.Context, echoParams) (echoResult, error) { return echoResult{}, nil })
	})
	mustPanic("a notification with a method's name", func() {
		rpc.HandleNotification(reg, rpc.NewNotification[echoParams]("echo"), func(context.Context, echoParams) {})
	})
	mustPanic("nil handler", func() { rpc.Handle[echoParams, echoResult](reg, rpc.NewMethod[echoParams, echoResult]("x"), nil) })
	unknown := func(context.Context, string, json.RawMessage) (any, error) { return nil, nil }
	reg.HandleUnknown(unknown)
	mustPanic("HandleUnknown twice", func() { reg.HandleUnknown(unknown) })
}

// Frames written by many goroutines at once reach the stream whole: each
// Write holds one or more complete frames (frames that queue up behind a
// Write go out together), never part of one, never two mixed.
func TestConcurrentWritersNeverInterleave(t *testing.T) {
	rpctest.CheckNoLeak(t)
	var w rpctest.Recorder
	c := rpc.NewConn(strings.NewReader(""), &w, nil)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				text := strings.Repeat(string(rune('a'+g)), 1000+i)
				if err := note.Notify(context.Background(), c, echoParams{Text: text}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	c.Shutdown(context.Background()) // writes what is queued
	frames := 0
	perSender := map[byte]int{}
	for _, b := range w.Frames(t) { // fails if a Write split a frame
		line := strings.TrimSuffix(string(b), "\n")
		var f struct {
			Method string
			Params echoParams
		}
		if json.Unmarshal([]byte(line), &f) != nil || f.Method != "note" {
			t.Fatalf("not a frame: %.80q", line)
		}
		text := f.Params.Text
		if strings.Trim(text, text[:1]) != "" {
			t.Fatalf("frame payload mixed: %.80q", text)
		}
		// Frames of one goroutine keep their order.
		if len(text) != 1000+perSender[text[0]] {
			t.Fatalf("sender %c: frame of length %d out of order", text[0], len(text))
		}
		perSender[text[0]]++
		frames++
	}
	if frames != 16*50 {
		t.Fatalf("%d frames written, want %d", frames, 16*50)
	}
}

// Params are validated by the decoder of a typed handler as it decodes them
// (the read loop only delimits them): params that are not valid JSON make
// the whole line malformed, dropped unanswered, however the line would
// otherwise be handled; params that are valid JSON of the wrong shape are
// invalid params.
func TestMalformedParamsDropTheLine(t *testing.T) {
	drops := make(chan rpc.Drop, 16)
	reg := echoRegistry()
	rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, echoResult]("bare"), func(context.Context, rpc.NoParams) (echoResult, error) {
		return echoResult{Echo: "bare"}, nil
	})
	rpc.HandleNotification(reg, note, func(context.Context, echoParams) {})
	p := newPeer(t, &rpc.Options{Handler: reg, OnDrop: func(d rpc.Drop) { drops <- d }})
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":01}}`,           // typed request
		`{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"a","x":[1,]}}`, // in a member the decoder skips
		`{"jsonrpc":"2.0","id":3,"method":"bare","params":{"x":tru}}`,             // NoParams: not decoded at all
		`{"jsonrpc":"2.0","id":4,"method":"nosuch","params":[1 2]}`,               // no handler: no "method not found"
		`{"jsonrpc":"2.0","method":"note","params":{"text":"\q"}}`,                // typed notification
		`{"jsonrpc":"2.0","method":"other","params":{"a":}}`,                      // unhandled notification
		`{"jsonrpc":"2.0","id":5,"result":1,"params":[,]}`,                        // a response
		`{"jsonrpc":"2.0","id":6,"method":"echo","params":[1],"params":{]}`,       // a duplicate, replaced
		`{"jsonrpc":"2.0","id":7,"method":"echo","params":}`,                      // no value at all
	} {
		p.Send(line)
		if d := <-drops; d.Reason != rpc.DropMalformed || d.Err == nil {
			t.Fatalf("%s: drop %+v, want DropMalformed", line, d)
		}
	}
	p.Send(`{"jsonrpc":"2.0","id":8,"method":"echo","params":{"text":1}}`)
	p.Expect(`{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"{{any}}"}}`)
	p.Send(`{"jsonrpc":"2.0","id":9,"method":"bare","params":{"x":true}}`)
	p.Expect(`{"jsonrpc":"2.0","id":9,"result":{"echo":"bare"}}`)
	p.Send(`{"jsonrpc":"2.0","method":"note","params":{"text":1}}`)
	if d := <-drops; d.Reason != rpc.DropInvalidParams {
		t.Fatalf("drop %+v, want DropInvalidParams", d)
	}
}

// TestMembersAfterParams: params are taken to end the frame, and decoded
// from there, only when they do; members after them still decide what the
// frame is, and which params count.
func TestMembersAfterParams(t *testing.T) {
	drops := make(chan rpc.Drop, 16)
	notes := make(chan string, 4)
	reg := echoRegistry()
	rpc.HandleNotification(reg, note, func(ctx context.Context, p echoParams) { notes <- p.Text })
	p := newPeer(t, &rpc.Options{Handler: reg, OnDrop: func(d rpc.Drop) { drops <- d }})

	// An id after params makes a request of what began as a notification
	// (and "note" names no request method).
	p.Send(`{"jsonrpc":"2.0","method":"note","params":{"text":"a"},"id":1}`)
	p.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: note"}}`)
	// The last method and the last params win.
	p.Send(`{"jsonrpc":"2.0","id":2,"method":"note","params":{"text":"b"},"method":"echo"}`)
	p.Expect(`{"jsonrpc":"2.0","id":2,"result":{"echo":"b"}}`)
	p.Send(`{"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":"c"},"params":{"text":"d"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":3,"result":{"echo":"d"}}`)
	// Params that do not decode are answered once, wherever they are.
	// (The decoder's error goes to OnDrop, not to the peer.)
	p.Send(`{"jsonrpc":"2.0","id":4,"method":"echo","params":{"text":4}}`)
	p.Expect(`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"invalid params: member \"text\": expected a string, got a number"}}`)
	if d := <-drops; d.Reason != rpc.DropInvalidParams || d.Err == nil {
		t.Fatalf("drop %+v, want DropInvalidParams", d)
	}
	p.Send(`{"jsonrpc":"2.0","id":5,"method":"echo","params":{"text":5},"x":null}`)
	p.Expect(`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"invalid params: member \"text\": expected a string, got a number"}}`)
	if d := <-drops; d.Reason != rpc.DropInvalidParams || d.Err == nil {
		t.Fatalf("drop %+v, want DropInvalidParams", d)
	}
	// A fault after params makes the frame malformed, even though params
	// alone would decode.
	p.Send(`{"jsonrpc":"2.0","id":6,"method":"echo","params":{"text":"e"},}`)
	if d := <-drops; d.Reason != rpc.DropMalformed {
		t.Fatalf("drop %+v, want DropMalformed", d)
	}
	// A notification whose params end it, and one with a member after them.
	p.Send(`{"jsonrpc":"2.0","method":"note","params":{"text":"f"}}`)
	p.Send(`{"jsonrpc":"2.0","method":"note","params":{"text":"g"},"jsonrpc":"2.0"}`)
	p.Send(`{"jsonrpc":"2.0","id":7,"method":"echo","params":{"text":"h"}}`)
	p.Expect(`{"jsonrpc":"2.0","id":7,"result":{"echo":"h"}}`)
	if got := <-notes + "," + <-notes; got != "f,g" {
		t.Fatalf("notifications %q, want f,g", got)
	}
	select {
	case d := <-drops:
		t.Fatalf("unexpected drop %+v", d)
	default:
	}
}

// TestMembersAfterUntypedParams is TestMembersAfterParams for the handlers
// of unknown methods, which take params raw: the params a guess took to
// end the frame are validated on their own, which confirms the guess; when
// they are not one value, members after them decide what the frame is.
func TestMembersAfterUntypedParams(t *testing.T) {
	drops := make(chan rpc.Drop, 16)
	notes := make(chan string, 8)
	reg := rpc.NewRegistry()
	reg.HandleUnknown(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		return map[string]any{"method": method, "params": params}, nil
	})
	reg.HandleUnknownNotification(func(ctx context.Context, method string, params json.RawMessage) {
		notes <- method + " " + string(params)
	})
	p := newPeer(t, &rpc.Options{Handler: reg, OnDrop: func(d rpc.Drop) { drops <- d }})

	// Params that end the frame, white space before the brace included.
	p.Send(`{"jsonrpc":"2.0","method":"n1","params":{"a":[1,{"b":"}"}]}}`)
	p.Send(`{"jsonrpc":"2.0","method":"n2","params":"x" }`)
	// An id after params makes a request of it; the last params win.
	p.Send(`{"jsonrpc":"2.0","method":"r1","params":{"a":1},"id":1}`)
	p.Expect(`{"jsonrpc":"2.0","id":1,"result":{"method":"r1","params":{"a":1}}}`)
	p.Send(`{"jsonrpc":"2.0","method":"n3","params":{"a":1},"params":{"b":2}}`)
	// A fault after params, or in them, drops the frame.
	p.Send(`{"jsonrpc":"2.0","method":"n4","params":{"a":1},}`)
	if d := linetest.Within(t, drops, "the drop of a fault after params"); d.Reason != rpc.DropMalformed {
		t.Fatalf("drop %+v, want DropMalformed", d)
	}
	p.Send(`{"jsonrpc":"2.0","method":"n5","params":{"a":}}`)
	if d := linetest.Within(t, drops, "the drop of malformed params"); d.Reason != rpc.DropMalformed {
		t.Fatalf("drop %+v, want DropMalformed", d)
	}
	p.Send(`{"jsonrpc":"2.0","method":"r2","params":[true],"id":2}`)
	p.Expect(`{"jsonrpc":"2.0","id":2,"result":{"method":"r2","params":[true]}}`)

	for _, want := range []string{`n1 {"a":[1,{"b":"}"}]}`, `n2 "x"`, `n3 {"b":2}`} {
		if got := linetest.Within(t, notes, want); got != want {
			t.Fatalf("notification %q, want %q", got, want)
		}
	}
	select {
	case d := <-drops:
		t.Fatalf("unexpected drop %+v", d)
	case n := <-notes:
		t.Fatalf("unexpected notification %q", n)
	default:
	}
}

// TestMethodAfterGuessedParams: the method, or the id and the method,
// after params, where params are guessed to end the frame (the peer's
// frames so far ended with them): the guess leaves the frame without a
// method, which is no verdict on it; scanned in full, it is a request or
// a notification, for typed and unknown methods alike.
func TestMethodAfterGuessedParams(t *testing.T) {
	notes := make(chan string, 4)
	reg := echoRegistry()
	reg.HandleUnknown(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		return map[string]any{"method": method, "params": params}, nil
	})
	reg.HandleUnknownNotification(func(ctx context.Context, method string, params json.RawMessage) {
		notes <- method + " " + string(params)
	})
	p := newPeer(t, &rpc.Options{Handler: reg})
	for i, c := range []struct{ send, expect, note string }{
		{`{"jsonrpc":"2.0","params":{"a":1},"id":1,"method":"r1"}`, `{"jsonrpc":"2.0","id":1,"result":{"method":"r1","params":{"a":1}}}`, ""},
		{`{"jsonrpc":"2.0","params":{"text":"b"},"id":2,"method":"echo"}`, `{"jsonrpc":"2.0","id":2,"result":{"echo":"b"}}`, ""},
		{`{"jsonrpc":"2.0","params":{"a":3},"method":"n3"}`, "", `n3 {"a":3}`},
	} {
		// A frame that ends with its params first, so that the next is
		// guessed to end with them too.
		p.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"warm%d","method":"echo","params":{"text":"w"}}`, i))
		p.Expect(fmt.Sprintf(`{"jsonrpc":"2.0","id":"warm%d","result":{"echo":"w"}}`, i))
		p.Send(c.send)
		if c.expect != "" {
			p.Expect(c.expect)
		} else if got := linetest.Within(t, notes, c.note); got != c.note {
			t.Fatalf("notification %q, want %q", got, c.note)
		}
	}
}

// countedParams counts how often go-json decodes it: its member is decoded
// as go-json walks the value, before it looks at what follows.
type countedParams struct {
	Text countedString `json:"text"`
}

type countedString string

var countedDecodes atomic.Int64

func (s *countedString) UnmarshalJSON(b []byte) error {
	countedDecodes.Add(1)
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = countedString(v)
	return nil
}

// TestPeerWritingParamsFirst: once a peer is seen to write a member after
// params, its frames are no longer guessed to end with them, so that each
// is decoded once, not twice; a frame that ends with params again brings
// the guess back.
func TestPeerWritingParamsFirst(t *testing.T) {
	got := make(chan string, 1)
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, rpc.NewNotification[countedParams]("count"), func(ctx context.Context, p countedParams) {
		got <- string(p.Text)
	})
	p := newPeer(t, &rpc.Options{Handler: reg})
	countedDecodes.Store(0)
	send := func(line, text string) {
		t.Helper()
		p.Send(line)
		if s := <-got; s != text {
			t.Fatalf("%s: handled with %q", line, s)
		}
	}
	for range 4 {
		send(`{"method":"count","params":{"text":"a"},"jsonrpc":"2.0"}`, "a")
	}
	// The first frame was guessed to end with params, and decoded in vain
	// (go-json decodes the value before it finds what follows), then
	// decoded again; the other three were decoded once.
	if n := countedDecodes.Load(); n != 4+1 {
		t.Fatalf("%d decodes for 4 frames with a member after params; want 5", n)
	}
	for range 2 {
		send(`{"jsonrpc":"2.0","method":"count","params":{"text":"b"}}`, "b")
	}
	if n := countedDecodes.Load(); n != 5+2 {
		t.Fatalf("%d decodes after 2 more frames ending with params; want 7", n)
	}
	// Guessing again: a member after params costs a decode in vain again.
	send(`{"method":"count","params":{"text":"c"},"jsonrpc":"2.0"}`, "c")
	if n := countedDecodes.Load(); n != 7+2 {
		t.Fatalf("%d decodes after a frame with a member after params; want 9", n)
	}
}

// An error whose Data is not valid JSON goes without it, and the Logger
// says so (TestInvalidErrorDataIsLogged regresses data dropped silently).
func TestInvalidErrorDataIsLogged(t *testing.T) {
	var log rpctest.LockedBuffer
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echo, func(context.Context, echoParams) (echoResult, error) {
		return echoResult{}, &rpc.Error{Code: 42, Message: "bad data", Data: []byte("{not json")}
	})
	p := newPeer(t, &rpc.Options{Handler: reg, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}`)
	p.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":42,"message":"bad data"}}`)
	if got := log.String(); !strings.Contains(got, "level=ERROR") || !strings.Contains(got, "data") || !strings.Contains(got, "method=echo") {
		t.Fatalf("logged %q, want an error naming the data and the method", got)
	}
}

// A Drop logs and prints what it means: its reason, size, method, error
// and the start of its line as text, not bytes.
func TestDropPrintsWhatItMeans(t *testing.T) {
	d := rpc.Drop{Reason: rpc.DropInvalidParams, Line: []byte(`{"method":"m","params":` + strings.Repeat("x", 300) + `}`), Size: 330, Method: "m", Err: errors.New("no")}
	var out strings.Builder
	slog.New(slog.NewTextHandler(&out, nil)).Info("dropped", "drop", d)
	got := out.String()
	for _, want := range []string{`drop.reason="params do not decode"`, "drop.size=330", "drop.method=m", "drop.error=no", `drop.line="{\"method\":\"m\"`, "…"} {
		if !strings.Contains(got, want) {
			t.Errorf("logged %s\nwant it to contain %s", got, want)
		}
	}
	if s := fmt.Sprint(d); !strings.Contains(s, "params do not decode") || !strings.Contains(s, `{"method":"m"`) || strings.Contains(s, "[123 ") {
		t.Errorf("printed %s", s)
	}
}

// A request starts once the notifications read before it have been
// handled, as in a JavaScript peer: a document opened by a notification
// is open for the request about it that follows, however long the
// notification's handler takes.
func TestRequestStartsAfterTheNotificationsBeforeIt(t *testing.T) {
	var opened atomic.Bool
	release := make(chan struct{})
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, rpc.NewNotification[rpc.NoParams]("open"), func(ctx context.Context, _ rpc.NoParams) {
		rpc.NewNotification[rpc.NoParams]("opening").Notify(ctx, rpc.ConnFromContext(ctx), rpc.NoParams{})
		<-release
		opened.Store(true)
	})
	rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, bool]("hover"), func(context.Context, rpc.NoParams) (bool, error) {
		return opened.Load(), nil
	})
	p := newPeer(t, &rpc.Options{Handler: reg})
	p.Send(`{"jsonrpc":"2.0","method":"open"}`)
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"hover"}`)
	p.Expect(`{"jsonrpc":"2.0","method":"opening"}`) // first: hover has not run
	close(release)
	p.Expect(`{"jsonrpc":"2.0","id":1,"result":true}`)
}

// A notification handler that calls its peer, which calls back before it
// answers, does not deadlock: while the handler waits for its call, the
// requests read after its notification start.
func TestNotificationHandlerCallingBackDoesNotHoldRequests(t *testing.T) {
	probe := rpc.NewMethod[rpc.NoParams, bool]("probe")
	back := rpc.NewMethod[rpc.NoParams, bool]("back")
	done := make(chan error, 1)
	a := rpc.NewRegistry()
	rpc.HandleNotification(a, rpc.NewNotification[rpc.NoParams]("open"), func(ctx context.Context, _ rpc.NoParams) {
		_, err := probe.Call(ctx, rpc.ConnFromContext(ctx), rpc.NoParams{})
		done <- err
	})
	rpc.Handle(a, back, func(context.Context, rpc.NoParams) (bool, error) { return true, nil })
	b := rpc.NewRegistry()
	rpc.Handle(b, probe, func(ctx context.Context, _ rpc.NoParams) (bool, error) {
		return back.Call(ctx, rpc.ConnFromContext(ctx), rpc.NoParams{})
	})
	_, cb := rpctest.Pair(t, &rpc.Options{Handler: a}, &rpc.Options{Handler: b})
	if err := rpc.NewNotification[rpc.NoParams]("open").Notify(context.Background(), cb, rpc.NoParams{}); err != nil {
		t.Fatal(err)
	}
	if err := linetest.Within(t, done, "the notification handler's call, whose peer calls back"); err != nil {
		t.Errorf("probe: %v", err)
	}
}

// A handler that returns a nil *rpc.Error as its error (a typed nil in an
// interface, which is not nil) is answered, not a crash.
func TestHandlerReturningANilError(t *testing.T) {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, int]("m"), func(context.Context, rpc.NoParams) (int, error) {
		var e *rpc.Error
		return 0, e
	})
	_, peer := rpctest.Start(t, &rpc.Options{Handler: reg})
	peer.Send(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
	peer.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"a nil *rpc.Error was returned as an error"}}`)
}
