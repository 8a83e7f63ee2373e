package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The specification of the line (line.go), as a table: each case is the
// frames a peer writes and what the handlers do, step by step, and after
// each step, once every goroutine of the test has gone as far as it can
// (testing/synctest) and the bound on a lent reading role has passed (two
// periods of the watchdog, lend), which handlers have started, which
// requests were answered, and which calls of the handlers returned. The peer writes its
// frames in one write, as the cases in the issue were found.
//
// Frames are words: "r:a" a request with id "a" (its label) whose handler
// is an ordinary one; "x:a" an exclusive request; "ar:a" a request
// registered Async; "n:a" a notification (labelled a); "an:a" a
// notification registered Async; "cancel:a" the LSP cancellation of the
// request a; "resp:a" the peer's answer to the call the handler a made;
// "end" the end of the input. Commands are words too: "return:a",
// "yield:a" (rpc.Yield), "call:a" (a call of the peer with the handler's
// context), "callbg:a" (a call with another context, which the Conn cannot
// see: it gives up after an hour of the bubble's time), "spawn:a" (a
// goroutine, left behind as the handler returns, calls the peer with its
// context), "user:a" (a goroutine of the program calls the peer,
// labelled a). Results: "start" the handlers started since the step
// before; "answers" the requests answered ("a", or "a=-32800" for an
// error); "returned" the calls that returned ("a", or "a=err" for an
// error).
type lineCase struct {
	name  string
	opts  Options
	steps []lineStep
}

type lineStep struct {
	send, do                 string
	start, answers, returned string
}

func TestLineRule(t *testing.T) {
	for _, tc := range lineCases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { runLineCase(t, tc) })
		})
	}
}

var lineCases = []lineCase{
	// The rule.
	{name: "requests beside requests share the turn",
		steps: []lineStep{
			{send: "r:a r:b", start: "a b"},
			{do: "return:b", answers: "b"},
			{do: "return:a", answers: "a"},
		}},
	{name: "a notification runs alone: it waits for the requests before it",
		steps: []lineStep{
			{send: "r:a n:b r:c", start: "a"},
			{do: "return:a", answers: "a", start: "b"},
			{do: "return:b", start: "c"},
			{do: "return:c", answers: "c"},
		}},
	{name: "notifications run one at a time, in arrival order",
		steps: []lineStep{
			{send: "n:a n:b n:c", start: "a"},
			{do: "return:a", start: "b"},
			{do: "return:b", start: "c"},
			{do: "return:c"},
		}},
	{name: "an exclusive request runs alone, both ways",
		steps: []lineStep{
			{send: "r:a r:b x:c r:d r:e", start: "a b"},
			{do: "return:a", answers: "a"},
			{do: "return:b", answers: "b", start: "c"},
			{do: "return:c", answers: "c", start: "d e"},
			{do: "return:d return:e", answers: "d e"},
		}},
	{name: "yield lets what is behind start",
		steps: []lineStep{
			{send: "n:a n:b r:c", start: "a"},
			{do: "yield:a", start: "b"},
			{do: "yield:b", start: "c"},
			{do: "return:a return:b return:c", answers: "c"},
		}},
	{name: "Async yields as it starts, in its turn",
		steps: []lineStep{
			{send: "r:a an:b n:c ar:d n:e", start: "a"},
			{do: "return:a", answers: "a", start: "b c"},
			{do: "return:c", start: "d e"},
			{do: "return:b return:d return:e", answers: "d"},
		}},
	{name: "a call with the handler's context is a yield, and its response the handler's turn again",
		steps: []lineStep{
			{send: "n:a r:b", start: "a"},
			{do: "call:a", start: "b"},
			{send: "resp:a n:c"}, // it waits for b, which started while a waited
			{do: "return:b", answers: "b", returned: "a"},
			{do: "return:a", start: "c"}, // c waited for a, resumed
			{do: "return:c"},
		}},
	{name: "a response to a program's call waits for the notifications before it",
		steps: []lineStep{
			{do: "user:u"},
			{send: "n:a resp:u", start: "a"},
			{do: "return:a", returned: "u"},
		}},
	{name: "a response to a program's call does not wait for the requests before it",
		steps: []lineStep{
			{do: "user:u"},
			{send: "r:a resp:u", start: "a", returned: "u"},
			{do: "return:a", answers: "a"},
		}},
	{name: "the end of the input waits for the notifications before it",
		steps: []lineStep{
			{do: "user:u"},
			{send: "n:a end", start: "a"},
			{do: "return:a", returned: "u=err"},
		}},

	// The cases found with the real clients, each now as JavaScript
	// peers answer them.
	{name: "typing: a hover between two changes sees the first, not the second",
		steps: []lineStep{
			{send: "n:change1 r:hover n:change2", start: "change1"},
			{do: "return:change1", start: "hover"},
			{do: "return:hover", answers: "hover", start: "change2"},
			{do: "return:change2"},
		}},
	{name: "initialized calls the client for its configuration: didOpen and hover go on",
		steps: []lineStep{
			{send: "n:initialized n:didOpen r:hover", start: "initialized"},
			{do: "call:initialized", start: "didOpen"},
			{do: "return:didOpen", start: "hover"},
			{do: "return:hover", answers: "hover"},
			{send: "resp:initialized", returned: "initialized"},
			{do: "return:initialized"},
		}},
	{name: "hover then didChange in one write: the change waits for the hover",
		steps: []lineStep{
			{send: "r:hover n:didChange", start: "hover"},
			{do: "return:hover", answers: "hover", start: "didChange"},
			{do: "return:didChange"},
		}},
	{name: "shutdown while a long Async request runs is answered at once",
		steps: []lineStep{
			{send: "ar:wait x:shutdown", start: "wait shutdown"},
			{do: "return:shutdown", answers: "shutdown"},
			{do: "return:wait", answers: "wait"},
		}},
	{name: "an exclusive handler calls its peer, which needs a request answered first",
		steps: []lineStep{
			{send: "x:initialize r:first", start: "initialize"},
			{do: "call:initialize", start: "first"},
			{do: "return:first", answers: "first"},
			{send: "resp:initialize", returned: "initialize"},
			{do: "return:initialize", answers: "initialize"},
		}},
	{name: "a notification handler in a call while more notifications come than the line holds",
		opts: Options{MaxWaiting: 1},
		steps: []lineStep{
			{send: "n:config n:o1 n:o2 n:o3 n:o4", start: "config"},
			{do: "call:config", start: "o1"},
			{do: "return:o1", start: "o2"},
			{do: "return:o2", start: "o3"},
			{do: "return:o3", start: "o4"},
			{do: "return:o4"},
			{send: "resp:config", returned: "config"},
			{do: "return:config"},
		}},
	{name: "a goroutine a notification handler left behind calls the peer: nothing changes",
		steps: []lineStep{
			{send: "n:a r:b n:c", start: "a"},
			{do: "spawn:a", start: "b"},
			{do: "return:b", answers: "b", start: "c"},
			{do: "return:c"},
			{send: "resp:a", returned: "a"},
		}},
	{name: "a cancelled request waiting behind a notification is answered at once and never runs",
		opts: Options{Cancellation: LSPCancellation()},
		steps: []lineStep{
			{send: "n:a r:b", start: "a"},
			{send: "cancel:b", answers: "b=-32800"},
			{do: "return:a"},
		}},

	// What today's rules did otherwise, which the rule removes.
	{name: "a handler waiting for its peer holds no slot",
		opts: Options{MaxConcurrentRequests: 1},
		steps: []lineStep{
			{send: "r:a r:b r:c", start: "a"},
			{do: "call:a", start: "b"},
			{do: "call:b", answers: "c=-32050"}, // the cap: 2 alive
			{send: "resp:a resp:b", returned: "a b"},
			{do: "return:a return:b", answers: "a b"},
		}},
	{name: "a slot frees when its handler yields, not when it returns",
		opts: Options{MaxConcurrentRequests: 1},
		steps: []lineStep{
			{send: "r:a r:b", start: "a"},
			{do: "yield:a", start: "b"},
			{do: "return:b return:a", answers: "a b"},
		}},

	{name: "a handler resumed by one of its calls' responses takes the others in its turn",
		steps: []lineStep{
			{send: "r:a", start: "a"},
			{do: "calltwo:a"},
			{send: "resp:a.1 n:b resp:a.2", returned: "a.1 a.2"},
			{do: "return:a", answers: "a", start: "b"},
			{do: "return:b"},
		}},
	{name: "a solo handler's two responses, both behind a request, are both its turn",
		steps: []lineStep{
			{send: "n:a r:b", start: "a"},
			{do: "calltwo:a", start: "b"},
			{send: "resp:a.1 resp:a.2"},
			{do: "return:b", answers: "b", returned: "a.1 a.2"},
			{do: "return:a"},
		}},
	{name: "past the cap, an Async notification's yield is refused too",
		opts: Options{MaxConcurrentRequests: 1},
		steps: []lineStep{
			{send: "ar:a ar:b an:c r:d", start: "a b c"}, // c holds the line: 3 alive
			{do: "return:a return:b", answers: "a b"},
			{do: "return:c", start: "d"},
			{do: "return:d", answers: "d"},
		}},

	// The limits that remain: waits the Conn cannot see.
	{name: "a wait the Conn cannot see holds the line until the handler yields",
		steps: []lineStep{
			{send: "n:a r:b", start: "a"},
			{do: "block:a"}, // nothing starts
			{do: "yield:a", start: "b"},
			{do: "return:a return:b", answers: "b"},
		}},
	{name: "a call with another context is such a wait: its response waits for the handler",
		steps: []lineStep{
			{send: "n:a r:b", start: "a"},
			{do: "callbg:a"},
			{send: "resp:a"}, // behind a, which does not yield: the hour passes
			{do: "wake", returned: "a=err"},
			{do: "return:a", start: "b"},
			{do: "return:b", answers: "b"},
		}},
	{name: "at the cap of handlers alive, a notification's yield is refused",
		opts: Options{MaxConcurrentRequests: 1},
		steps: []lineStep{
			{send: "ar:a ar:b n:c r:d", start: "a b c"},
			{do: "yield:c"}, // refused: 3 alive, c holds the line
			{do: "return:a return:b", answers: "a b"},
			{do: "yield:c", start: "d"},
			{do: "return:c return:d", answers: "d"},
		}},
}

// lineRun is a case running: the Conn, the peer's ends of its pipes, and
// what the handlers and the peer saw.
type lineRun struct {
	t    *testing.T
	c    *Conn
	in   *io.PipeWriter // the peer writes here
	cmds map[string]chan string

	mu       sync.Mutex
	started  []string
	answers  []string
	returned []string
	calls    map[string]string // the label of a call → the id the Conn gave it
	ctxs     map[string]context.Context
}

func runLineCase(t *testing.T, tc lineCase) {
	connIn, peerOut := io.Pipe()
	peerIn, connOut := io.Pipe()
	r := &lineRun{t: t, in: peerOut, cmds: map[string]chan string{}, calls: map[string]string{}, ctxs: map[string]context.Context{}}
	reg := NewRegistry()
	handler := func(ctx context.Context, label string) {
		r.mu.Lock()
		r.started = append(r.started, label)
		r.ctxs[label] = ctx
		cmds := r.cmd(label)
		r.mu.Unlock()
		for cmd := range cmds {
			switch cmd {
			case "return":
				return
			case "yield":
				Yield(ctx)
			case "block": // a wait of its own: nothing to do
			case "call":
				r.call(ctx, label)
			case "callbg":
				bg, cancel := context.WithTimeout(context.Background(), time.Hour)
				r.call(bg, label)
				cancel()
			case "spawn":
				go r.call(ctx, label)
				return
			case "calltwo": // two calls at once with its context, each on a goroutine
				var wg sync.WaitGroup
				wg.Go(func() { r.call(ctx, label+".1") })
				wg.Go(func() { r.call(ctx, label+".2") })
				wg.Wait()
			}
		}
	}
	request := func(ctx context.Context, label string) (string, error) { handler(ctx, label); return label, nil }
	note := func(ctx context.Context, label string) { handler(ctx, label) }
	Handle(reg, NewMethod[string, string]("r"), request)
	Handle(reg, NewMethod[string, string]("x"), request, Exclusive)
	Handle(reg, NewMethod[string, string]("ar"), request, Async)
	HandleNotification(reg, NewNotification[string]("n"), note)
	HandleNotification(reg, NewNotification[string]("an"), note, Async)
	opts := tc.opts
	opts.Handler = reg
	r.c = NewConn(connIn, connOut, &opts)
	r.c.Start()
	go r.readOutput(peerIn)
	defer func() {
		r.c.Close()
		peerOut.Close()
		peerIn.Close()
		r.mu.Lock()
		for _, ch := range r.cmds {
			close(ch) // handlers still running return
		}
		r.cmds = nil
		r.mu.Unlock()
		r.c.Wait()
	}()
	settle := func() {
		// What the Conn can do within the bound on a lent reading role
		// (lend): two periods of the bubble's time.
		synctest.Wait()
		time.Sleep(2 * lendPeriod)
		synctest.Wait()
	}
	for i, st := range tc.steps {
		if st.send != "" {
			r.send(st.send)
		}
		settle()
		for _, w := range strings.Fields(st.do) {
			kind, label, _ := strings.Cut(w, ":")
			switch kind {
			case "user":
				go r.call(context.Background(), label)
			case "wake":
				time.Sleep(2 * time.Hour) // the bubble's time: every timer of the case fires
			default:
				r.mu.Lock()
				ch := r.cmd(label)
				r.mu.Unlock()
				ch <- kind
			}
			settle()
		}
		r.check(i, st)
	}
}

// cmd returns the channel of commands to the handler label. Called with
// r.mu held.
func (r *lineRun) cmd(label string) chan string {
	ch := r.cmds[label]
	if ch == nil {
		ch = make(chan string, 4)
		r.cmds[label] = ch
	}
	return ch
}

// call calls the peer, labelled label, and records that it returned.
func (r *lineRun) call(ctx context.Context, label string) {
	err := r.c.Call(ctx, "peer", label, nil)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		label += "=err"
	}
	r.returned = append(r.returned, label)
}

// send writes the frames words say, in one write.
func (r *lineRun) send(words string) {
	var b strings.Builder
	end := false
	for _, w := range strings.Fields(words) {
		kind, label, _ := strings.Cut(w, ":")
		switch kind {
		case "r", "x", "ar":
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%q,"method":%q,"params":%q}`+"\n", label, kind, label)
		case "n", "an":
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":%q,"params":%q}`+"\n", kind, label)
		case "cancel":
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":%q}}`+"\n", label)
		case "resp":
			r.mu.Lock()
			id := r.calls[label]
			r.mu.Unlock()
			if id == "" {
				r.t.Fatalf("resp:%s: no call of %s was seen", label, label)
			}
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"result":"ok"}`+"\n", id)
		case "end":
			end = true
		default:
			r.t.Fatalf("unknown frame %q", w)
		}
	}
	go func() {
		io.WriteString(r.in, b.String())
		if end {
			r.in.Close()
		}
	}()
}

// readOutput records what the Conn writes: its answers, and the calls of
// its handlers.
func (r *lineRun) readOutput(out io.Reader) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var f struct {
			ID     json.RawMessage
			Method string
			Params string
			Error  *struct{ Code int }
		}
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			r.t.Errorf("the Conn wrote %q: %v", sc.Bytes(), err)
			continue
		}
		r.mu.Lock()
		switch id := strings.Trim(string(f.ID), `"`); {
		case f.Method == "peer":
			r.calls[f.Params] = string(f.ID)
		case f.Error != nil:
			r.answers = append(r.answers, fmt.Sprintf("%s=%d", id, f.Error.Code))
		default:
			r.answers = append(r.answers, id)
		}
		r.mu.Unlock()
	}
}

// check compares what happened since the step before with the step.
func (r *lineRun) check(i int, st lineStep) {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range []struct {
		what      string
		got, want *[]string
		want0     string
	}{
		{"started", &r.started, nil, st.start},
		{"answered", &r.answers, nil, st.answers},
		{"calls returned", &r.returned, nil, st.returned},
	} {
		got := slices.Sorted(slices.Values(*c.got))
		want := slices.Sorted(slices.Values(strings.Fields(c.want0)))
		if !slices.Equal(got, want) {
			r.t.Errorf("step %d (send %q, do %q): %s %q, want %q", i+1, st.send, st.do, c.what, got, want)
		}
		*c.got = (*c.got)[:0]
	}
	if r.t.Failed() {
		r.t.FailNow()
	}
}
