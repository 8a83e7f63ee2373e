package fuzz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"pgregory.net/rapid"
)

// smCall is the model of one call: its request id and how to end it.
type smCall struct {
	id     int64
	cancel context.CancelFunc
	ended  chan smEnd
}

type smEnd struct {
	err    error
	result int64
}

// connMachine drives a Conn through calls, context cancellations,
// responses (matching, duplicate, unknown id, error), notifications, the
// end of the input and Close, and checks it after every step against a
// model: every call ends exactly once with the outcome the model expects,
// no call is left pending, and no goroutine of the Conn survives the end.
type connMachine struct {
	t       *rapid.T
	c       *rpc.Conn
	in      *io.PipeWriter
	reqs    chan int64 // ids of the requests the Conn wrote
	drops   chan rpc.DropReason
	notes   chan int64
	pending map[int64]*smCall // model: calls awaiting their outcome
	used    []int64           // ids of calls already ended
	endErr  error             // model: why the connection ended, nil while it lives
	seq     int64
}

const smWait = waitBound

func wait[T any](t *rapid.T, ch <-chan T, what string) T {
	select {
	case v := <-ch:
		return v
	case <-time.After(smWait):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func newConnMachine(t *rapid.T) *connMachine {
	m := &connMachine{t: t, reqs: make(chan int64, 16), drops: make(chan rpc.DropReason, 16),
		notes: make(chan int64, 16), pending: map[int64]*smCall{}}
	pr, pw := io.Pipe()
	m.in = pw
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, rpc.NewNotification[int64]("tick"), func(_ context.Context, n int64) { m.notes <- n })
	w := &recorder{onF: func(b []byte) {
		var fr struct {
			ID     int64
			Method string
		}
		if json.Unmarshal(b, &fr) == nil && fr.Method == "work" {
			m.reqs <- fr.ID
		}
	}}
	m.c = rpc.NewConn(pr, w, &rpc.Options{Handler: reg, OnDrop: func(d rpc.Drop) { m.drops <- d.Reason }})
	m.c.Start()
	return m
}

func (m *connMachine) send(line string) {
	if _, err := io.WriteString(m.in, line+"\n"); err != nil {
		m.t.Fatalf("send: %v", err)
	}
}

func (m *connMachine) pick(label string) *smCall {
	ids := make([]int64, 0, len(m.pending))
	for id := range m.pending {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return m.pending[rapid.SampledFrom(ids).Draw(m.t, label)]
}

// Call starts a call; while the connection lives it must be sent and stay
// pending, afterwards it must fail at once with the reason of the end.
func (m *connMachine) Call(t *rapid.T) {
	ctx, cancel := context.WithCancel(context.Background())
	call := &smCall{cancel: cancel, ended: make(chan smEnd, 2)}
	go func() {
		var res int64
		err := m.c.Call(ctx, "work", nil, &res)
		call.ended <- smEnd{err, res}
	}()
	if m.endErr != nil {
		e := wait(t, call.ended, "a call on an ended connection")
		if !errors.Is(e.err, m.endErr) {
			t.Fatalf("call after the end: %v, want %v", e.err, m.endErr)
		}
		cancel()
		return
	}
	call.id = wait(t, m.reqs, "the request of a call")
	m.pending[call.id] = call
}

// Cancel cancels a pending call's context: it ends with context.Canceled.
func (m *connMachine) Cancel(t *rapid.T) {
	if len(m.pending) == 0 {
		t.Skip("no pending call")
	}
	call := m.pick("cancel")
	call.cancel()
	m.finish(call, context.Canceled, 0)
}

// Respond answers a pending call with a result, in one of the spellings
// of its id that denote the same number.
func (m *connMachine) Respond(t *rapid.T) {
	if m.endErr != nil || len(m.pending) == 0 {
		t.Skip("nothing to answer")
	}
	call := m.pick("respond")
	id := rapid.SampledFrom([]string{"%d", "%d.0", "%de0", "%d.00E+0"}).Draw(t, "spelling")
	m.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":`+id+`,"result":%d}`, call.id, call.id*10))
	m.finish(call, nil, call.id*10)
}

// RespondError answers a pending call with an error object.
func (m *connMachine) RespondError(t *rapid.T) {
	if m.endErr != nil || len(m.pending) == 0 {
		t.Skip("nothing to answer")
	}
	call := m.pick("respondError")
	m.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-1,"message":"no %d"}}`, call.id, call.id))
	m.finish(call, &rpc.Error{Code: -1, Message: fmt.Sprintf("no %d", call.id)}, 0)
}

// Duplicate answers a call that already ended: nothing settles, the line
// is dropped as unmatched.
func (m *connMachine) Duplicate(t *rapid.T) {
	if m.endErr != nil || len(m.used) == 0 {
		t.Skip("no ended call")
	}
	id := rapid.SampledFrom(m.used).Draw(t, "duplicate")
	m.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":-1}`, id))
	m.expectDrop(rpc.DropUnmatchedResponse)
}

// Unknown answers an id that was never used, or a string id (this side
// uses numbers): dropped as unmatched.
func (m *connMachine) Unknown(t *rapid.T) {
	if m.endErr != nil {
		t.Skip("ended")
	}
	id := rapid.SampledFrom([]string{"0", "-1", "1000000", `"1"`, "1.5", "1e400"}).Draw(t, "unknown")
	m.send(`{"jsonrpc":"2.0","id":` + id + `,"result":-1}`)
	m.expectDrop(rpc.DropUnmatchedResponse)
}

// Notify sends a notification; its handler gets it, in order.
func (m *connMachine) Notify(t *rapid.T) {
	if m.endErr != nil {
		t.Skip("ended")
	}
	m.seq++
	m.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"tick","params":%d}`, m.seq))
	if n := wait(t, m.notes, "a notification"); n != m.seq {
		t.Fatalf("notification %d, want %d", n, m.seq)
	}
}

// EndInput closes the input: every pending call ends with ErrInputEnded.
func (m *connMachine) EndInput(t *rapid.T) {
	if m.endErr != nil {
		t.Skip("ended")
	}
	m.in.Close()
	m.endErr = rpc.ErrInputEnded
	wait(t, m.c.Done(), "the end of the connection")
	m.failAll()
}

// Close closes the Conn: pending calls end with ErrClosed (unless the
// input had ended already).
func (m *connMachine) Close(t *rapid.T) {
	m.c.Close()
	if m.endErr == nil {
		m.endErr = rpc.ErrClosed
	}
	m.failAll()
}

func (m *connMachine) failAll() {
	for _, call := range m.pending {
		m.finish(call, m.endErr, 0)
	}
}

func (m *connMachine) finish(call *smCall, want error, result int64) {
	e := wait(m.t, call.ended, fmt.Sprintf("call %d to end", call.id))
	var re, wantRE *rpc.Error
	switch {
	case errors.As(want, &wantRE):
		if !errors.As(e.err, &re) || re.Code != wantRE.Code || re.Message != wantRE.Message {
			m.t.Fatalf("call %d ended with %v, want %v", call.id, e.err, want)
		}
	case !errors.Is(e.err, want) || (want == nil && e.result != result):
		m.t.Fatalf("call %d ended with %v (result %d), want %v (result %d)", call.id, e.err, e.result, want, result)
	}
	delete(m.pending, call.id)
	m.used = append(m.used, call.id)
	call.cancel()
}

func (m *connMachine) expectDrop(want rpc.DropReason) {
	if got := wait(m.t, m.drops, "a drop"); got != want {
		m.t.Fatalf("drop %v, want %v", got, want)
	}
}

// Check is the invariant after every step: no call ended that the model
// does not expect to, nothing unexpected dropped.
func (m *connMachine) Check(t *rapid.T) {
	for id, call := range m.pending {
		select {
		case e := <-call.ended:
			t.Fatalf("call %d ended unexpectedly with %v", id, e.err)
		default:
		}
	}
	select {
	case d := <-m.drops:
		t.Fatalf("unexpected drop: %v", d)
	default:
	}
	if (m.endErr != nil) != (m.c.Err() != nil) {
		t.Fatalf("connection error %v, model %v", m.c.Err(), m.endErr)
	}
}

// TestStateMachineConn runs connMachine; at the end the Conn is closed and
// its input too, every call has ended, and no goroutine of it is left.
func TestStateMachineConn(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newConnMachine(rt)
		rt.Repeat(map[string]func(*rapid.T){
			"call":         m.Call,
			"cancel":       m.Cancel,
			"respond":      m.Respond,
			"respondError": m.RespondError,
			"duplicate":    m.Duplicate,
			"unknown":      m.Unknown,
			"notify":       m.Notify,
			"endInput":     m.EndInput,
			"close":        m.Close,
			"":             m.Check,
		})
		m.Close(rt)
		m.in.Close()
		done := make(chan error, 1)
		go func() { done <- m.c.Wait() }()
		wait(rt, done, "Wait")
		if len(m.pending) != 0 {
			rt.Fatalf("%d calls left pending", len(m.pending))
		}
		deadline := time.Now().Add(smWait)
		for connGoroutines(m.c) != "" {
			if time.Now().After(deadline) {
				rt.Fatalf("goroutines of the Conn outlived it:\n%s", connGoroutines(m.c))
			}
			runtime.Gosched()
			time.Sleep(time.Millisecond)
		}
	})
}

// connGoroutines returns the stacks of goroutines running code of package
// rpc on behalf of a Conn. Tests in this package run their Conns one at a
// time, so any such goroutine belongs to the Conn under test.
func connGoroutines(*rpc.Conn) string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "linerpc/rpc.(*Conn).work") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
