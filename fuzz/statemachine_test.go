package fuzz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"pgregory.net/rapid"
)

// smCall is the model of one call: its number in the model (its params),
// its request id once its frame was seen, and how to end it.
type smCall struct {
	n      int64
	id     int64
	cancel context.CancelFunc
	ended  chan smEnd
	sent   bool // its request frame was seen written
}

// smRequest is a request frame the Conn wrote: its id and params.
type smRequest struct{ id, n int64 }

type smEnd struct {
	err    error
	result int64
}

// connMachine drives a Conn through calls, context cancellations,
// responses (matching, duplicate, unknown id, error), notifications (run
// by the notification runner, in order), the peer's requests to handlers
// that hold their slots until released (up to the overload bound), some of
// them exclusive (a barrier: it waits for those before it and holds those
// after it), the peer's cancellations of them (LSP's, preempted: a
// request running, waiting or held is answered RequestCancelled), output
// that stalls and resumes (calls withdrawn from the write queue, Close
// while a Write is stuck), the end of the input and Close, and checks it
// after every step against a model: every call ends exactly once with the
// outcome the model expects, every request of the peer is answered once (a
// result, RequestCancelled, or CodeOverloaded beyond the slots and the
// waiting room) and starts only when the model lets it (an exclusive one
// alone), a call cancelled after its frame was written is cancelled on the
// wire by its id, no withdrawn call's frame is written after it, no call
// is left pending, and no goroutine of the Conn survives the end.
type connMachine struct {
	t       *rapid.T
	c       *rpc.Conn
	in      *io.PipeWriter
	out     *gatedWriter
	reqs    chan smRequest // the requests the Conn wrote
	replies chan smReply
	drops   chan rpc.DropReason
	notes   chan int64
	release chan struct{}     // lets one blocked handler return
	pending map[int64]*smCall // model: calls awaiting their outcome, by number
	used    []int64           // ids of calls already ended
	endErr  error             // model: why the connection ended, nil while it lives
	seq     int64
	calls   int64 // model: numbers the calls
	// withdrawn are the numbers of calls cancelled before their frame was
	// seen: a frame the stuck Write had already taken is still written.
	withdrawn map[int64]bool
	// The peer's requests to the blocking handler: running holds the ids
	// of those in a slot, waiting those waiting for one, in order; barrier
	// is the exclusive request waiting for those before it or running
	// (barrierRuns), held the requests read after it, in order.
	running, waiting []string
	barrier          string
	barrierRuns      bool
	held             []smHeld
	started          chan string // the ids of the requests whose handler started
	reqSeq           int
	closed           bool
	// cancels are the ids named by the cancel notifications the Conn
	// wrote; cancelled the ids of the calls whose context ended.
	cancels   chan int64
	cancelled map[int64]bool
}

// smHeld is a request held behind an exclusive one.
type smHeld struct {
	id   string
	solo bool
}

// The slots of the machine's Conn: the peer's requests beyond
// smSlots+smRoom at once are answered CodeOverloaded.
const smSlots, smRoom = 2, 2

type smReply struct {
	id   string
	code int // 0 for a result
}

// gatedWriter passes frames to w, except while stalled: then every Write
// waits until the output resumes, as with a peer that stopped reading.
type gatedWriter struct {
	w       io.Writer
	mu      sync.Mutex
	stalled chan struct{}
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.mu.Lock()
	ch := g.stalled
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
	return g.w.Write(p)
}

func (g *gatedWriter) stall() {
	g.mu.Lock()
	g.stalled = make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedWriter) resume() {
	g.mu.Lock()
	if g.stalled != nil {
		close(g.stalled)
		g.stalled = nil
	}
	g.mu.Unlock()
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
	m := &connMachine{t: t, reqs: make(chan smRequest, 64), replies: make(chan smReply, 64),
		drops: make(chan rpc.DropReason, 16), notes: make(chan int64, 16), release: make(chan struct{}),
		pending: map[int64]*smCall{}, withdrawn: map[int64]bool{}, started: make(chan string, 64),
		cancels: make(chan int64, 64), cancelled: map[int64]bool{}}
	pr, pw := io.Pipe()
	m.in = pw
	reg := rpc.NewRegistry()
	rpc.HandleNotification(reg, rpc.NewNotification[int64]("tick"), func(_ context.Context, n int64) { m.notes <- n })
	hold := func(ctx context.Context, _ rpc.NoParams) (int64, error) {
		var id string
		json.Unmarshal(rpc.RequestFromContext(ctx).ID, &id)
		m.started <- id
		select {
		case <-m.release:
			return 1, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, int64]("hold"), hold)
	rpc.Handle(reg, rpc.NewMethod[rpc.NoParams, int64]("solo"), hold, rpc.Exclusive)
	w := &rpctest.Recorder{OnFrame: func(b []byte) {
		var fr struct {
			ID     json.RawMessage
			Method string
			Params json.RawMessage
			Error  *struct{ Code int }
		}
		if json.Unmarshal(b, &fr) != nil {
			return
		}
		switch {
		case fr.Method == "work":
			var id, n int64
			json.Unmarshal(fr.ID, &id)
			json.Unmarshal(fr.Params, &n)
			m.reqs <- smRequest{id, n}
		case fr.Method == "$/cancelRequest":
			var c struct{ ID int64 }
			json.Unmarshal(fr.Params, &c)
			m.cancels <- c.ID
		case fr.Method == "":
			var id string
			json.Unmarshal(fr.ID, &id)
			r := smReply{id: id}
			if fr.Error != nil {
				r.code = fr.Error.Code
			}
			m.replies <- r
		}
	}}
	m.out = &gatedWriter{w: w}
	m.c = rpc.NewConn(pr, m.out, &rpc.Options{Handler: reg, OnDrop: func(d rpc.Drop) { m.drops <- d.Reason },
		MaxConcurrentRequests: smSlots, MaxWaiting: smRoom, Cancellation: rpc.LSPCancellation()})
	m.c.Start()
	return m
}

func (m *connMachine) send(line string) {
	if _, err := io.WriteString(m.in, line+"\n"); err != nil {
		m.t.Fatalf("send: %v", err)
	}
}

// pick draws a pending call; sent asks for one whose request was written.
func (m *connMachine) pick(label string, sent bool) *smCall {
	ids := make([]int64, 0, len(m.pending))
	for n, call := range m.pending {
		if call.sent || !sent {
			ids = append(ids, n)
		}
	}
	if len(ids) == 0 {
		m.t.Skip("no such call")
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return m.pending[rapid.SampledFrom(ids).Draw(m.t, label)]
}

// Call starts a call; while the connection lives it must be sent and stay
// pending, afterwards it must fail at once with the reason of the end.
func (m *connMachine) Call(t *rapid.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m.calls++
	call := &smCall{n: m.calls, cancel: cancel, ended: make(chan smEnd, 2)}
	go func() {
		var res int64
		err := m.c.Call(ctx, "work", call.n, &res)
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
	m.pending[call.n] = call
	if m.out.stalled == nil {
		m.expectRequest(call)
	}
}

// expectRequest waits for the request frame of call.
func (m *connMachine) expectRequest(call *smCall) { m.expectRequests([]*smCall{call}) }

// expectRequests waits for the request frames of calls, in any order (calls
// made while the output was stalled race for their place in the queue);
// besides them, only frames of withdrawn calls may come.
func (m *connMachine) expectRequests(calls []*smCall) {
	want := map[int64]*smCall{}
	for _, call := range calls {
		want[call.n] = call
	}
	for len(want) > 0 {
		r := wait(m.t, m.reqs, "the request of a call")
		if call := want[r.n]; call != nil {
			call.id, call.sent = r.id, true
			delete(want, r.n)
			continue
		}
		if !m.withdrawn[r.n] {
			m.t.Fatalf("request of call %d written, want one of %v", r.n, slices.Collect(maps.Keys(want)))
		}
		// The stuck Write had taken it already: its cancel notification
		// follows it.
		delete(m.withdrawn, r.n)
		m.cancelled[r.id] = true
	}
}

// withdrawnWritten takes the request frames written so far, which can
// only be those of calls cancelled while a stuck Write had taken them: the
// cancel notification of each follows it.
func (m *connMachine) withdrawnWritten() {
	for {
		select {
		case r := <-m.reqs:
			if !m.withdrawn[r.n] {
				m.t.Fatalf("request of call %d written unexpectedly", r.n)
			}
			delete(m.withdrawn, r.n)
			m.cancelled[r.id] = true
		default:
			return
		}
	}
}

// Stall makes every Write wait, as a peer that stops reading does.
func (m *connMachine) Stall(t *rapid.T) {
	if m.out.stalled != nil {
		t.Skip("stalled already")
	}
	m.out.stall()
}

// Resume lets the Writes through: the requests of the calls made while
// stalled and not cancelled are written; of the cancelled ones, only
// those the stuck Write had taken may be.
func (m *connMachine) Resume(t *rapid.T) {
	if m.out.stalled == nil {
		t.Skip("not stalled")
	}
	m.out.resume()
	if m.closed {
		return
	}
	var unsent []*smCall
	for _, call := range m.pending {
		if !call.sent {
			unsent = append(unsent, call)
		}
	}
	m.expectRequests(unsent)
}

// Cancel cancels a pending call's context: it ends with context.Canceled,
// and its frame, if no Write has taken it, is never written.
func (m *connMachine) Cancel(t *rapid.T) {
	if len(m.pending) == 0 {
		t.Skip("no pending call")
	}
	call := m.pick("cancel", false)
	call.cancel()
	if !call.sent {
		m.withdrawn[call.n] = true
	}
	sent, id := call.sent, call.id
	m.finish(call, context.Canceled, 0)
	if sent {
		m.cancelled[id] = true
		for m.out.stalled == nil && m.endErr == nil {
			got := wait(t, m.cancels, "the cancel notification")
			if got == id {
				break
			}
			if !m.cancelled[got] { // one of a call cancelled while stalled may come first
				m.withdrawnWritten()
			}
			if !m.cancelled[got] {
				t.Fatalf("cancel notification for %d, want %d", got, id)
			}
		}
	}
}

// Request sends the peer's request to the handler that holds its slot
// until released: it runs, or waits for a slot, or beyond the waiting
// room is answered CodeOverloaded at once.
func (m *connMachine) Request(t *rapid.T) { m.request(t, false) }

// Exclusive sends the peer's request to the same handler, registered as
// exclusive: it runs once nothing runs or waits before it, and holds back
// what comes after it.
func (m *connMachine) Exclusive(t *rapid.T) { m.request(t, true) }

func (m *connMachine) request(t *rapid.T, solo bool) {
	if m.endErr != nil || m.out.stalled != nil {
		t.Skip("ended or stalled")
	}
	m.reqSeq++
	id := fmt.Sprintf("r%d", m.reqSeq)
	method := "hold"
	if solo {
		method = "solo"
	}
	m.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"` + method + `"}`)
	room := len(m.waiting)+len(m.held) < smRoom
	switch {
	case m.barrier != "" && room:
		m.held = append(m.held, smHeld{id, solo})
	case m.barrier != "":
		m.expectReply(smReply{id, int(rpc.CodeOverloaded)})
	case solo:
		m.barrier = id
		m.pump()
	case len(m.running) < smSlots:
		m.run(id)
	case room:
		m.waiting = append(m.waiting, id)
	default:
		m.expectReply(smReply{id, int(rpc.CodeOverloaded)})
	}
}

// run records that the request id starts, and waits until its handler
// has, which no other may do meanwhile.
func (m *connMachine) run(id string) {
	m.running = append(m.running, id)
	m.expectStarts([]string{id})
}

// expectStarts waits until the handlers of the requests ids have started,
// in any order (requests that start together race to their handlers).
func (m *connMachine) expectStarts(ids []string) {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for len(want) > 0 {
		got := wait(m.t, m.started, fmt.Sprintf("requests %v to start", slices.Collect(maps.Keys(want))))
		if !want[got] {
			m.t.Fatalf("request %s started, want one of %v", got, slices.Collect(maps.Keys(want)))
		}
		delete(want, got)
	}
}

// pump starts what the model lets start: the barrier once nothing runs
// or waits before it, else the waiting requests while slots are free.
func (m *connMachine) pump() {
	var starts []string
	for !m.barrierRuns {
		switch {
		case m.barrier != "" && len(m.running) == 0 && len(m.waiting) == 0:
			m.barrierRuns = true
			m.running = append(m.running, m.barrier)
			starts = append(starts, m.barrier)
		case len(m.waiting) > 0 && len(m.running) < smSlots:
			id := m.waiting[0]
			m.waiting = m.waiting[1:]
			m.running = append(m.running, id)
			starts = append(starts, id)
		default:
			m.expectStarts(starts)
			return
		}
	}
	m.expectStarts(starts)
}

// ended records that the request id was answered, having run (or not):
// its slot goes to what may start; the end of a barrier lets what it held
// in, in order, up to the next exclusive request.
func (m *connMachine) ended(id string) {
	m.running = slices.DeleteFunc(m.running, func(s string) bool { return s == id })
	m.waiting = slices.DeleteFunc(m.waiting, func(s string) bool { return s == id })
	m.held = slices.DeleteFunc(m.held, func(h smHeld) bool { return h.id == id })
	if id == m.barrier {
		m.barrier, m.barrierRuns = "", false
		for len(m.held) > 0 {
			h := m.held[0]
			m.held = m.held[1:]
			if h.solo {
				m.barrier = h.id
				break
			}
			m.waiting = append(m.waiting, h.id)
		}
	}
	m.pump()
}

func (m *connMachine) expectReply(want smReply) {
	if r := wait(m.t, m.replies, "a reply"); r != want {
		m.t.Fatalf("reply %+v, want %+v", r, want)
	}
}

// Release lets one running handler return: its request is answered, and
// what the model lets start starts.
func (m *connMachine) Release(t *rapid.T) {
	if len(m.running) == 0 || m.closed || m.out.stalled != nil {
		t.Skip("nothing to release")
	}
	m.release <- struct{}{}
	r := wait(t, m.replies, "a handler's reply")
	if !slices.Contains(m.running, r.id) || r.code != 0 {
		t.Fatalf("reply %+v, want a result for one of %v", r, m.running)
	}
	m.ended(r.id)
}

// CancelRequest cancels one of the peer's requests in hand, running,
// waiting or held: it is answered RequestCancelled (LSP), at once when it
// did not run, and what may start starts.
func (m *connMachine) CancelRequest(t *rapid.T) {
	ids := slices.Clone(m.running)
	ids = append(ids, m.waiting...)
	for _, h := range m.held {
		ids = append(ids, h.id)
	}
	if m.barrier != "" && !m.barrierRuns {
		ids = append(ids, m.barrier)
	}
	if len(ids) == 0 || m.endErr != nil || m.out.stalled != nil {
		t.Skip("nothing to cancel")
	}
	id := rapid.SampledFrom(ids).Draw(t, "cancelRequest")
	m.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"` + id + `"}}`)
	m.expectReply(smReply{id, int(rpc.CodeRequestCancelled)})
	m.ended(id)
}

// Respond answers a pending call with a result, in one of the spellings
// of its id that denote the same number.
func (m *connMachine) Respond(t *rapid.T) {
	if m.endErr != nil || len(m.pending) == 0 {
		t.Skip("nothing to answer")
	}
	call := m.pick("respond", true)
	id := rapid.SampledFrom([]string{"%d", "%d.0", "%de0", "%d.00E+0"}).Draw(t, "spelling")
	m.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":`+id+`,"result":%d}`, call.id, call.id*10))
	m.finish(call, nil, call.id*10)
}

// RespondError answers a pending call with an error object.
func (m *connMachine) RespondError(t *rapid.T) {
	if m.endErr != nil || len(m.pending) == 0 {
		t.Skip("nothing to answer")
	}
	call := m.pick("respondError", true)
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
// input had ended already), at once, even with a Write stuck.
func (m *connMachine) Close(t *rapid.T) {
	m.c.Close()
	m.closed = true
	m.running, m.waiting, m.held, m.barrier, m.barrierRuns = nil, nil, nil, "", false
	if m.endErr == nil {
		m.endErr = rpc.ErrClosed
	}
	m.failAll()
}

func (m *connMachine) failAll() {
	for _, call := range m.pending {
		if !call.sent {
			// Withdrawn as it fails, unless a stuck Write had taken it.
			m.withdrawn[call.n] = true
		}
		m.finish(call, m.endErr, 0)
	}
}

func (m *connMachine) finish(call *smCall, want error, result int64) {
	e := wait(m.t, call.ended, fmt.Sprintf("call %d to end", call.n))
	var re, wantRE *rpc.Error
	switch {
	case errors.As(want, &wantRE):
		if !errors.As(e.err, &re) || re.Code != wantRE.Code || re.Message != wantRE.Message {
			m.t.Fatalf("call %d ended with %v, want %v", call.n, e.err, want)
		}
	case !errors.Is(e.err, want) || (want == nil && e.result != result):
		m.t.Fatalf("call %d ended with %v (result %d), want %v (result %d)", call.n, e.err, e.result, want, result)
	}
	delete(m.pending, call.n)
	if call.sent {
		m.used = append(m.used, call.id)
	}
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
	case r := <-m.replies:
		t.Fatalf("unexpected reply: %+v", r)
	case id := <-m.started:
		t.Fatalf("request %s started unexpectedly (running %v, waiting %v, barrier %q, held %v)", id, m.running, m.waiting, m.barrier, m.held)
	case id := <-m.cancels:
		if !m.cancelled[id] {
			m.withdrawnWritten()
		}
		if !m.cancelled[id] {
			t.Fatalf("cancel notification for %d, whose call was not cancelled", id)
		}
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
			"call":          m.Call,
			"cancel":        m.Cancel,
			"respond":       m.Respond,
			"respondError":  m.RespondError,
			"duplicate":     m.Duplicate,
			"unknown":       m.Unknown,
			"notify":        m.Notify,
			"request":       m.Request,
			"exclusive":     m.Exclusive,
			"cancelRequest": m.CancelRequest,
			"release":       m.Release,
			"stall":         m.Stall,
			"resume":        m.Resume,
			"endInput":      m.EndInput,
			"close":         m.Close,
			"":              m.Check,
		})
		m.Close(rt)
		m.out.resume() // a Write stuck at Close returns now; Wait waits for it
		m.in.Close()
		done := make(chan error, 1)
		go func() { done <- m.c.Wait() }()
		wait(rt, done, "Wait")
		if len(m.pending) != 0 {
			rt.Fatalf("%d calls left pending", len(m.pending))
		}
	})
}
