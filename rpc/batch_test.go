package rpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// byID sorts the responses of a batch's array by id, as text, so that
// their order (which is the order they were ready in) does not matter.
func byID(t *testing.T, array string) []string {
	t.Helper()
	var elems []json.RawMessage
	if err := json.Unmarshal([]byte(array), &elems); err != nil {
		t.Fatalf("not an array: %s", array)
	}
	var out []string
	for _, e := range elems {
		out = append(out, string(e))
	}
	sort.Slice(out, func(i, j int) bool {
		var a, b struct{ ID json.RawMessage }
		json.Unmarshal([]byte(out[i]), &a)
		json.Unmarshal([]byte(out[j]), &b)
		return string(a.ID) < string(b.ID)
	})
	return out
}

func TestBatchIsAnsweredInOneArray(t *testing.T) {
	noted := make(chan string, 1)
	reg := stringEcho()
	rpc.HandleNotification(reg, rpc.NewNotification[string]("note"), func(_ context.Context, s string) { noted <- s })
	d := newDrops()
	p := newPeer(t, &rpc.Options{Handler: reg, Batches: true, OnDrop: d.on})
	p.Send(`[{"jsonrpc":"2.0","id":1,"method":"echo","params":"a"}, ` +
		`{"jsonrpc":"2.0","method":"note","params":"n"},{"jsonrpc":"2.0","id":2,"method":"nope"},` +
		`{"foo":1},[{"jsonrpc":"2.0","id":5,"method":"echo","params":"nested"}],` +
		`{"jsonrpc":"2.0","id":3,"method":"echo","params":7},{"jsonrpc":"2.0","id":"4","method":"echo","params":"b"}]`)
	got := byID(t, p.Next())
	want := []string{
		`{"jsonrpc":"2.0","id":"4","result":"b"}`,
		`{"jsonrpc":"2.0","id":1,"result":"a"}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found: nope"}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params: expected a string, got a number"}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("batch answered\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
	if n := linetest.Within(t, noted, "the notification of the batch"); n != "n" {
		t.Errorf("notification %q", n)
	}
	var reasons []rpc.DropReason
	for len(reasons) < 3 {
		reasons = append(reasons, linetest.Within(t, d.ch, "the drops of the batch's bad elements").Reason)
	}
	if fmt.Sprint(reasons) != fmt.Sprint([]rpc.DropReason{rpc.DropUnclassified, rpc.DropNotObject, rpc.DropInvalidParams}) {
		t.Errorf("drops %v", reasons)
	}
}

func TestBatchEdgeCases(t *testing.T) {
	reg := stringEcho()
	rpc.HandleNotification(reg, rpc.NewNotification[string]("note"), func(context.Context, string) {})
	p := newPeer(t, &rpc.Options{Handler: reg, Batches: true})
	// Notifications only: no answer at all; the next frame answers the
	// lone request after it.
	p.Send(`[{"jsonrpc":"2.0","method":"note","params":"n"},{"jsonrpc":"2.0","method":"note","params":"m"}]`)
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":"lone"}`)
	p.Expect(`{"jsonrpc":"2.0","id":1,"result":"lone"}`)
	// Empty: answered as the specification says.
	p.Send(` [ ] `)
	p.Expect(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: empty batch"}}`)
	// Only bad elements: nothing to answer.
	p.Send(`[1,"x",{}]`)
	p.Send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":"after"}`)
	p.Expect(`{"jsonrpc":"2.0","id":2,"result":"after"}`)
	// A batch of one.
	p.Send(`[{"jsonrpc":"2.0","id":3,"method":"echo","params":"one"}]`)
	p.Expect(`[{"jsonrpc":"2.0","id":3,"result":"one"}]`)
}

func TestBatchesOffDropsArrays(t *testing.T) {
	d := newDrops()
	p := newPeer(t, &rpc.Options{Handler: stringEcho(), OnDrop: d.on})
	p.Send(`[{"jsonrpc":"2.0","id":1,"method":"echo","params":"a"}]`)
	if got := linetest.Within(t, d.ch, "the drop of the array"); got.Reason != rpc.DropNotObject {
		t.Errorf("dropped %v", got.Reason)
	}
}

func TestBatchElementsAreOverloadedAsLoneRequests(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echoString, func(_ context.Context, s string) (string, error) {
		started <- struct{}{}
		<-release
		return s, nil
	})
	// The notification, read after the requests, has no handler: its drop
	// says when the reader has dispatched them all, whatever runs. Then
	// the first may return.
	dispatched := make(chan struct{}, 1)
	p := newPeer(t, &rpc.Options{Handler: reg, Batches: true, MaxConcurrentRequests: 1, MaxWaiting: -1,
		OnDrop: func(d rpc.Drop) { dispatched <- struct{}{} }})
	p.Send(`[{"jsonrpc":"2.0","id":1,"method":"echo","params":"a"},{"jsonrpc":"2.0","id":2,"method":"echo","params":"b"},` +
		`{"jsonrpc":"2.0","id":3,"method":"echo","params":"c"},{"jsonrpc":"2.0","method":"after"}]`)
	linetest.Within(t, started, "the first request to start")
	linetest.Within(t, dispatched, "the batch's notification, read after its requests")
	close(release)
	got := byID(t, p.Next())
	over := `"error":{"code":-32050,"message":"server overloaded: too many requests in progress"}}`
	want := []string{`{"jsonrpc":"2.0","id":1,"result":"a"}`, `{"jsonrpc":"2.0","id":2,` + over, `{"jsonrpc":"2.0","id":3,` + over}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("batch answered\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

func TestBatchResponsesAreBounded(t *testing.T) {
	long := strings.Repeat("x", 200)
	reg := rpc.NewRegistry()
	rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, string]("long"), func(context.Context, rpc.NoParams) (string, error) { return long, nil })
	p := newPeer(t, &rpc.Options{Handler: reg, Batches: true, MaxFrameSize: 620})
	var reqs []string
	for i := range 4 {
		reqs = append(reqs, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"long"}`, i))
	}
	p.Send("[" + strings.Join(reqs, ",") + "]")
	array := p.Next()
	if len(array) > 620 {
		t.Errorf("an array of %d bytes, longer than the frame limit", len(array))
	}
	got := byID(t, array)
	results, tooLarge := 0, 0
	for _, r := range got {
		switch {
		case strings.Contains(r, `"result":"`+long+`"`):
			results++
		case strings.Contains(r, `"code":-32603`) && strings.Contains(r, "larger than the maximum frame size"):
			tooLarge++
		default:
			t.Errorf("unexpected response %s", r)
		}
	}
	// 620 bytes hold '[', two responses of 236 bytes and one error of
	// 137, each with its comma: the fourth is left out.
	if results != 2 || tooLarge != 1 {
		t.Errorf("%d results and %d too large, want 2 and 1", results, tooLarge)
	}
}

// A batch none of whose answers fit the bound, not even as the short
// error that replaces one, is not answered: no array is written (it was
// "]" alone), and the omission is logged.
func TestBatchWithNoAnswerThatFitsWritesNothing(t *testing.T) {
	started := make(chan struct{}, 2)
	reg := rpc.NewRegistry()
	rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, string]("long"), func(context.Context, rpc.NoParams) (string, error) {
		started <- struct{}{}
		return strings.Repeat("x", 200), nil
	})
	logged, out := &rpctest.LockedBuffer{}, &rpctest.LockedBuffer{}
	in, send := io.Pipe()
	defer send.Close()
	c := rpc.NewConn(in, out, &rpc.Options{Handler: reg, Batches: true, MaxFrameSize: 100, Logger: slog.New(slog.NewTextHandler(logged, nil))})
	c.Start()
	go send.Write([]byte(`[{"jsonrpc":"2.0","id":1,"method":"long"},{"jsonrpc":"2.0","id":2,"method":"long"}]` + "\n"))
	linetest.Within(t, started, "the batch's first request to start")
	linetest.Within(t, started, "the batch's second request to start")
	// Shutdown waits for the batch's array to be queued, and for the
	// queue to be written.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if out.Writes() != 0 {
		t.Fatalf("the batch was answered with %q, want nothing", out.String())
	}
	if !strings.Contains(logged.String(), "omitted=2") {
		t.Errorf("the omission is not logged: %q", logged.String())
	}
}

var add = rpc.NewMethod[[2]int, int]("add")

func TestBatchSend(t *testing.T) {
	p := newPeer(t, nil)
	b := rpc.NewBatch(p.conn)
	sum := add.InBatch(b, [2]int{1, 2})
	rpc.NewNotification[string]("note").InBatch(b, "n")
	fail := add.InBatch(b, [2]int{0, 0})
	odd := add.InBatch(b, [2]int{5, 5})
	sent := make(chan error, 1)
	go func() { sent <- b.Send(context.Background()) }()
	p.Expect(`[{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]},{"jsonrpc":"2.0","method":"note","params":"n"},{"jsonrpc":"2.0","id":2,"method":"add","params":[0,0]},{"jsonrpc":"2.0","id":3,"method":"add","params":[5,5]}]`)
	// Answered in another order, and not all in one array.
	p.Send(`[{"jsonrpc":"2.0","id":3,"result":"ten"},{"jsonrpc":"2.0","id":2,"error":{"code":7,"message":"no","data":[1]}}]`)
	p.Send(`{"jsonrpc":"2.0","id":1,"result":3}`)
	if err := linetest.Within(t, sent, "Send to return"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if v, err := sum.Result(); v != 3 || err != nil {
		t.Errorf("sum: %v, %v", v, err)
	}
	var e *rpc.Error
	if _, err := fail.Result(); !errors.As(err, &e) || e.Code != 7 || string(e.Data) != "[1]" {
		t.Errorf("fail: %v", err)
	}
	if _, err := odd.Result(); !errors.Is(err, rpc.ErrInvalidResult) {
		t.Errorf("odd: %v, want ErrInvalidResult", err)
	}
}

func TestBatchSendBothEnds(t *testing.T) {
	rpctest.CheckNoLeak(t)
	reg := rpc.NewRegistry()
	rpc.Handle(reg, add, func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil })
	aIn, bOut := io.Pipe()
	bIn, aOut := io.Pipe()
	client, server := rpc.NewConn(aIn, aOut, nil), rpc.NewConn(bIn, bOut, &rpc.Options{Handler: reg, Batches: true})
	t.Cleanup(func() {
		client.Close()
		server.Close()
		for _, p := range []io.Closer{aIn, bIn, aOut, bOut} {
			p.Close()
		}
		client.Wait()
		server.Wait()
	})
	client.Start()
	server.Start()
	b := rpc.NewBatch(client)
	var sums []*rpc.Pending[int]
	for i := range 100 {
		sums = append(sums, add.InBatch(b, [2]int{i, i}))
	}
	if err := b.Send(context.Background()); err != nil {
		t.Fatalf("Send: %v", err)
	}
	for i, p := range sums {
		if v, err := p.Result(); v != 2*i || err != nil {
			t.Errorf("sum %d: %v, %v", i, v, err)
		}
	}
}

func TestBatchSendEnds(t *testing.T) {
	t.Run("context", func(t *testing.T) {
		pinged := make(chan struct{}, 1)
		reg := rpc.NewRegistry()
		rpc.HandleNotification(reg, rpc.NewNotification[rpc.NoParams]("ping"), func(context.Context, rpc.NoParams) { pinged <- struct{}{} })
		p := newPeer(t, &rpc.Options{Handler: reg, Cancellation: rpc.LSPCancellation()})
		b := rpc.NewBatch(p.conn)
		one, two := add.InBatch(b, [2]int{1, 1}), add.InBatch(b, [2]int{2, 2})
		ctx, cancel := context.WithCancel(context.Background())
		sent := make(chan error, 1)
		go func() { sent <- b.Send(ctx) }()
		p.Next()
		p.Send(`{"jsonrpc":"2.0","id":1,"result":2}`)
		p.Send(`{"jsonrpc":"2.0","method":"ping"}`)
		linetest.Within(t, pinged, "the notification read after the first response")
		cancel()
		if err := linetest.Within(t, sent, "Send to return"); !errors.Is(err, context.Canceled) {
			t.Errorf("Send: %v", err)
		}
		p.Expect(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":2}}`)
		if v, err := one.Result(); v != 2 || err != nil {
			t.Errorf("one: %v, %v", v, err)
		}
		if _, err := two.Result(); !errors.Is(err, context.Canceled) {
			t.Errorf("two: %v, want context.Canceled", err)
		}
	})
	t.Run("refusals", func(t *testing.T) {
		p := newPeer(t, &rpc.Options{MaxFrameSize: 100})
		if err := rpc.NewBatch(p.conn).Send(context.Background()); err == nil || !strings.Contains(err.Error(), "empty batch") {
			t.Errorf("empty: %v", err)
		}
		b := rpc.NewBatch(p.conn)
		add.InBatch(b, [2]int{1, 2})
		bad := rpc.NewMethod[func(), int]("bad").InBatch(b, func() {})
		if err := b.Send(context.Background()); err == nil || !strings.Contains(err.Error(), `encoding params of "bad"`) {
			t.Errorf("unencodable: %v", err)
		}
		if _, err := bad.Result(); err == nil {
			t.Error("the unencodable call has no error")
		}
		b = rpc.NewBatch(p.conn)
		long := add.InBatch(b, [2]int{1, 2})
		add.InBatch(b, [2]int{1, 2})
		add.InBatch(b, [2]int{1, 2})
		if err := b.Send(context.Background()); !errors.Is(err, rpc.ErrFrameTooLarge) {
			t.Errorf("oversize: %v", err)
		}
		if _, err := long.Result(); !errors.Is(err, rpc.ErrFrameTooLarge) {
			t.Errorf("a call of the oversize batch: %v", err)
		}
		unstarted := rpc.NewConn(strings.NewReader(""), io.Discard, nil)
		b = rpc.NewBatch(unstarted)
		add.InBatch(b, [2]int{1, 2})
		if err := b.Send(context.Background()); !errors.Is(err, rpc.ErrNotStarted) {
			t.Errorf("unstarted: %v", err)
		}
	})
}

// A Conn shut down while it reads a batch writes the batch's array before
// it closes.
func TestShutdownWritesTheBatchBeingRead(t *testing.T) {
	inDrop, release := make(chan struct{}), make(chan struct{})
	served := make(chan struct{}, 1)
	reg := rpc.NewRegistry()
	rpc.Handle(reg, echoString, func(_ context.Context, s string) (string, error) {
		served <- struct{}{}
		return s, nil
	})
	p := newPeer(t, &rpc.Options{Handler: reg, Batches: true, OnDrop: func(rpc.Drop) {
		close(inDrop)
		<-release
	}})
	p.Send(`[{"jsonrpc":"2.0","id":1,"method":"echo","params":"a"},5]`)
	linetest.Within(t, served, "the batch's request to be served")
	linetest.Within(t, inDrop, "the read loop to drop the batch's second element")
	shut := make(chan error, 1)
	go func() { shut <- p.conn.Shutdown(context.Background()) }()
	close(release)
	p.Expect(`[{"jsonrpc":"2.0","id":1,"result":"a"}]`)
	if err := linetest.Within(t, shut, "Shutdown to return"); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}
