package rpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/linerpc/linerpc/internal/vectortest"
	"github.com/linerpc/linerpc/rpc"
)

// The examples of the JSON-RPC 2.0 specification (§7), verbatim, each
// sent on one line, with the outcome each policy promises: the defaults,
// Options.Batches, Options.AnswerInvalid, and both. Responses compare as
// JSON values, an error's message aside (the specification's texts are
// examples: "Method not found" is written "method not found: foobar"), and
// a batch's array as a set. An empty want means nothing is answered.

// subtractParams takes its params by name or by position, through
// rpc.UnmarshalParams.
type subtractParams struct {
	Minuend    int `json:"minuend"`
	Subtrahend int `json:"subtrahend"`
}

func (p *subtractParams) UnmarshalJSON(data []byte) error {
	type byName subtractParams
	return rpc.UnmarshalParams(data, (*byName)(p), &p.Minuend, &p.Subtrahend)
}

var (
	specSubtract = rpc.NewMethod[subtractParams, int]("subtract")
	specSum      = rpc.NewMethod[[]int, int]("sum")
	specGetData  = rpc.NewMethod[rpc.NoParams, []any]("get_data")
	specUpdate   = rpc.NewNotification[[]int]("update")
	specHello    = rpc.NewNotification[[]int]("notify_hello")
	specNotified = rpc.NewNotification[[]int]("notify_sum")
	// specDone is the test's own: exclusive, it runs once everything
	// before it has finished, so its answer comes after theirs.
	specDone = rpc.NewMethod[rpc.NoParams, string]("test/done")
)

// specRegistry serves the methods of the specification's examples; the
// notifications it receives go to notes.
func specRegistry(notes *specNotes) *rpc.Registry {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, specSubtract, func(_ context.Context, p subtractParams) (int, error) {
		return p.Minuend - p.Subtrahend, nil
	})
	rpc.Handle(reg, specSum, func(_ context.Context, p []int) (int, error) {
		sum := 0
		for _, n := range p {
			sum += n
		}
		return sum, nil
	})
	rpc.Handle(reg, specGetData, func(context.Context, rpc.NoParams) ([]any, error) {
		return []any{"hello", 5, "xyz"}, nil
	})
	for _, n := range []rpc.Notification[[]int]{specUpdate, specHello, specNotified} {
		rpc.HandleNotification(reg, n, func(_ context.Context, p []int) { notes.add(n.Name(), p) })
	}
	rpc.Handle(reg, specDone, func(context.Context, rpc.NoParams) (string, error) { return "done", nil }, rpc.Exclusive)
	return reg
}

type specNotes struct {
	mu   sync.Mutex
	seen []string
}

func (n *specNotes) add(method string, p []int) {
	n.mu.Lock()
	n.seen = append(n.seen, fmt.Sprintf("%s %v", method, p))
	n.mu.Unlock()
}

func (n *specNotes) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.seen, ", ")
}

// The policies the examples run under.
var specPolicies = []struct {
	name string
	opts rpc.Options
}{
	{"defaults", rpc.Options{}},
	{"Batches", rpc.Options{Batches: true}},
	{"AnswerInvalid", rpc.Options{AnswerInvalid: true}},
	{"both", rpc.Options{Batches: true, AnswerInvalid: true}},
}

const (
	parseError     = `{"jsonrpc":"2.0","error":{"code":-32700,"message":"{{string}}"},"id":null}`
	invalidRequest = `{"jsonrpc":"2.0","error":{"code":-32600,"message":"{{string}}"},"id":null}`
)

var specExamples = []struct {
	name string
	send string
	// want is the answer under each policy, in specPolicies' order;
	// notes, the notifications a handler received (under every policy).
	want  [4]string
	notes string
}{
	{
		name: "positional parameters",
		send: `{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}`,
		want: all4(`{"jsonrpc": "2.0", "result": 19, "id": 1}`),
	},
	{
		name: "positional parameters, swapped",
		send: `{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}`,
		want: all4(`{"jsonrpc": "2.0", "result": -19, "id": 2}`),
	},
	{
		name: "named parameters",
		send: `{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}`,
		want: all4(`{"jsonrpc": "2.0", "result": 19, "id": 3}`),
	},
	{
		name: "named parameters, reordered",
		send: `{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}`,
		want: all4(`{"jsonrpc": "2.0", "result": 19, "id": 4}`),
	},
	{
		name:  "a notification",
		send:  `{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}`,
		notes: "update [1 2 3 4 5]",
	},
	{
		name: "a notification without params",
		send: `{"jsonrpc": "2.0", "method": "foobar"}`,
	},
	{
		name: "a method that does not exist",
		send: `{"jsonrpc": "2.0", "method": "foobar", "id": "1"}`,
		want: all4(`{"jsonrpc": "2.0", "error": {"code": -32601, "message": "{{string}}"}, "id": "1"}`),
	},
	{
		name: "invalid JSON",
		send: `{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]`,
		want: [4]string{"", "", parseError, parseError},
	},
	{
		name: "an invalid request object",
		send: `{"jsonrpc": "2.0", "method": 1, "params": "bar"}`,
		want: [4]string{"", "", invalidRequest, invalidRequest},
	},
	{
		name: "a batch of invalid JSON",
		send: `[ {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}, {"jsonrpc": "2.0", "method" ]`,
		want: [4]string{"", "", parseError, parseError},
	},
	{
		name: "an empty array",
		send: `[]`,
		want: [4]string{"", invalidRequest, invalidRequest, invalidRequest},
	},
	{
		name: "an invalid batch, but not empty",
		send: `[1]`,
		want: [4]string{"", "", invalidRequest, "[" + invalidRequest + "]"},
	},
	{
		name: "an invalid batch",
		send: `[1,2,3]`,
		want: [4]string{"", "", invalidRequest, "[" + invalidRequest + "," + invalidRequest + "," + invalidRequest + "]"},
	},
	{
		name: "a batch",
		send: `[ {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}, {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}, {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"}, {"foo": "boo"}, {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"}, {"jsonrpc": "2.0", "method": "get_data", "id": "9"} ]`,
		want: [4]string{
			"",
			`[
				{"jsonrpc": "2.0", "result": 7, "id": "1"},
				{"jsonrpc": "2.0", "result": 19, "id": "2"},
				{"jsonrpc": "2.0", "error": {"code": -32601, "message": "{{string}}"}, "id": "5"},
				{"jsonrpc": "2.0", "result": ["hello", 5, "xyz"], "id": "9"}
			]`,
			invalidRequest,
			`[
				{"jsonrpc": "2.0", "result": 7, "id": "1"},
				{"jsonrpc": "2.0", "result": 19, "id": "2"},
				` + invalidRequest + `,
				{"jsonrpc": "2.0", "error": {"code": -32601, "message": "{{string}}"}, "id": "5"},
				{"jsonrpc": "2.0", "result": ["hello", 5, "xyz"], "id": "9"}
			]`,
		},
	},
	{
		name: "a batch of notifications",
		send: `[ {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]}, {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]} ]`,
		// AnswerInvalid without Batches refuses every batch, whatever it
		// holds, with one error.
		want: [4]string{"", "", invalidRequest, ""},
	},
}

func all4(s string) [4]string { return [4]string{s, s, s, s} }

func TestSpecificationExamples(t *testing.T) {
	if len(specExamples) != 15 {
		t.Fatalf("%d examples, the specification has 15", len(specExamples))
	}
	for i, pol := range specPolicies {
		t.Run(pol.name, func(t *testing.T) {
			for _, ex := range specExamples {
				t.Run(ex.name, func(t *testing.T) {
					notes := &specNotes{}
					opts := pol.opts
					opts.Handler = specRegistry(notes)
					p := newPeer(t, &opts)
					got := specExchange(t, p, ex.send)
					checkSpecAnswer(t, ex.want[i], got)
					// Under the policies that do not serve batches, the
					// notifications of a batch are not delivered either.
					wantNotes := ex.notes
					if strings.HasPrefix(ex.send, "[") && pol.opts.Batches {
						wantNotes = specBatchNotes(ex.send)
					}
					if notes.String() != wantNotes {
						t.Errorf("notifications handled: %q, want %q", notes, wantNotes)
					}
				})
			}
		})
	}
}

// specBatchNotes is what the handlers of a served batch's notifications
// receive, in the batch's order.
func specBatchNotes(batch string) string {
	switch {
	case strings.Contains(batch, `"notify_sum"`):
		return "notify_sum [1 2 4], notify_hello [7]"
	case strings.Contains(batch, `"notify_hello"`):
		return "notify_hello [7]"
	}
	return ""
}

// specExchange sends line, then an exclusive request of the test's, which
// runs once everything before it has finished, and returns the frames
// written before its answer.
func specExchange(t *testing.T, p *peer, line string) []string {
	t.Helper()
	p.Send(line)
	p.Send(`{"jsonrpc":"2.0","id":"done","method":"test/done"}`)
	var got []string
	for {
		f := p.Next()
		if strings.Contains(f, `"id":"done"`) {
			if f != `{"jsonrpc":"2.0","id":"done","result":"done"}` {
				t.Fatalf("the closing request was answered %s", f)
			}
			return got
		}
		got = append(got, f)
	}
}

// checkSpecAnswer compares the frames written with want: none, one frame,
// or one array whose elements compare as a set.
func checkSpecAnswer(t *testing.T, want string, got []string) {
	t.Helper()
	if want == "" {
		if len(got) != 0 {
			t.Fatalf("answered %q, want no answer", got)
		}
		return
	}
	if len(got) != 1 {
		t.Fatalf("answered %q, want one frame: %s", got, want)
	}
	if !strings.HasPrefix(strings.TrimSpace(want), "[") {
		if err := vectortest.Match(json.RawMessage(want), json.RawMessage(got[0])); err != nil {
			t.Fatalf("answered %s\nwant %s\n%v", got[0], want, err)
		}
		return
	}
	var wantElems, gotElems []json.RawMessage
	if err := json.Unmarshal([]byte(want), &wantElems); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(got[0]), &gotElems); err != nil {
		t.Fatalf("answered %s, want an array: %v", got[0], err)
	}
	if len(gotElems) != len(wantElems) {
		t.Fatalf("answered %d responses, want %d: %s", len(gotElems), len(wantElems), got[0])
	}
	matchUnordered(t, wantElems, gotElems)
}
