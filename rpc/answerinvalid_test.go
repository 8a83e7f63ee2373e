package rpc_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
)

// The edges of Options.AnswerInvalid that the specification's examples
// leave out: each frame, its answer under the option (empty: none), and
// under the defaults (never one), with the drop reported either way.
func TestAnswerInvalidEdges(t *testing.T) {
	cases := []struct {
		name, send string
		want       string // under AnswerInvalid
		// reason is the drop reported without the option and with it
		// (0: none, the frame was served).
		reason [2]rpc.DropReason
	}{
		{"a null id makes a request", `{"jsonrpc":"2.0","id":null,"method":"sum","params":[1,2]}`,
			`{"jsonrpc":"2.0","id":null,"result":3}`, reasons(rpc.DropUnhandledNotification, 0)},
		{"an id that is a boolean", `{"jsonrpc":"2.0","id":true,"method":"sum","params":[1]}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id is not a string, a number or null"}}`, reasons(rpc.DropUnhandledNotification, rpc.DropUnclassified)},
		{"an id that is an object", `{"jsonrpc":"2.0","id":{},"method":"update","params":[1]}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id is not a string, a number or null"}}`, reasons(0, rpc.DropUnclassified)},
		{"an object without a method", `{"jsonrpc":"2.0","id":null}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: neither a method nor a result or an error"}}`, reasons(rpc.DropUnclassified, rpc.DropUnclassified)},
		{"a value that is not an object", `"subtract"`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not an object"}}`, reasons(rpc.DropNotObject, rpc.DropNotObject)},
		{"a request nested too deep", `{"jsonrpc":"2.0","id":1,"method":"sum","params":` + strings.Repeat("[", rpc.MaxDepth) + strings.Repeat("]", rpc.MaxDepth) + `}`,
			fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: nested deeper than %d levels"}}`, rpc.MaxDepth), reasons(rpc.DropTooDeep, rpc.DropTooDeep)},
		{"malformed params", `{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"{{string}}"}}`, reasons(rpc.DropMalformed, rpc.DropMalformed)},
		// Responses are never answered, so that two ends under the
		// option never answer each other's answers.
		{"an error response with a null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`,
			"", reasons(rpc.DropUnclassified, rpc.DropUnmatchedResponse)},
		{"a result with a null id", `{"jsonrpc":"2.0","id":null,"result":1}`, "", reasons(rpc.DropUnclassified, rpc.DropUnmatchedResponse)},
		{"a response to no call", `{"jsonrpc":"2.0","id":41,"result":1}`, "", reasons(rpc.DropUnmatchedResponse, rpc.DropUnmatchedResponse)},
		{"an id alone", `{"jsonrpc":"2.0","id":1}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: neither a method nor a result or an error"}}`, reasons(rpc.DropUnmatchedResponse, rpc.DropUnclassified)},
		{"an id and a method that is not a string", `{"jsonrpc":"2.0","id":1,"method":1}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: method is not a string"}}`, reasons(rpc.DropUnmatchedResponse, rpc.DropUnclassified)},
		{"a result with a method that is not a string", `{"jsonrpc":"2.0","id":1,"result":1,"method":{}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: method is not a string"}}`, reasons(rpc.DropUnmatchedResponse, rpc.DropUnclassified)},
		{"an id and params nested too deep", `{"jsonrpc":"2.0","id":1,"params":` + strings.Repeat("[", rpc.MaxDepth) + strings.Repeat("]", rpc.MaxDepth) + `}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: neither a method nor a result or an error"}}`, reasons(rpc.DropTooDeep, rpc.DropUnclassified)},
		{"an array of error responses with null ids", `[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}]`,
			"", reasons(rpc.DropNotObject, rpc.DropUnmatchedResponse)},
		{"a response nested too deep", `{"jsonrpc":"2.0","id":41,"result":` + strings.Repeat("[", rpc.MaxDepth) + strings.Repeat("]", rpc.MaxDepth) + `}`,
			"", reasons(rpc.DropTooDeep, rpc.DropTooDeep)},
	}
	for i, answer := range []bool{false, true} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/AnswerInvalid=%v", c.name, answer), func(t *testing.T) {
				d := newDrops()
				p := newPeer(t, &rpc.Options{Handler: specRegistry(&specNotes{}), AnswerInvalid: answer, OnDrop: d.on})
				got := specExchange(t, p, c.send)
				want := ""
				if answer {
					want = c.want
				}
				checkSpecAnswer(t, want, got)
				if c.reason[i] == 0 {
					select {
					case drop := <-d.ch:
						t.Errorf("served, and dropped %v", drop)
					default:
					}
					return
				}
				drop := linetest.Within(t, d.ch, "the drop of the frame")
				if drop.Reason != c.reason[i] {
					t.Errorf("dropped for %v, want %v", drop.Reason, c.reason[i])
				}
				if answered := drop.Reply != nil; answered != (want != "") {
					t.Errorf("Drop.Reply is %v, and the frame was answered %q", drop.Reply, got)
				}
			})
		}
	}
}

// reasons is the drop reported without AnswerInvalid and with it.
func reasons(without, with rpc.DropReason) [2]rpc.DropReason {
	return [2]rpc.DropReason{without, with}
}

// A frame longer than MaxFrameSize is skipped unread; under AnswerInvalid
// it is answered when its first bytes show a method, and only then: what
// they do not show may be a response.
func TestAnswerInvalidOversize(t *testing.T) {
	long := strings.Repeat("x", 100)
	cases := []struct{ send, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"sum","params":["` + long + `"]}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the frame is longer than the maximum frame size"}}`},
		{`{"jsonrpc":"2.0","method":"update","params":["` + long + `"]}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the frame is longer than the maximum frame size"}}`},
		{`{"jsonrpc":"2.0","params":["` + long + `"],"method":"sum","id":1}`, ""}, // the method past the first KiB... or not: see below
		{`{"jsonrpc":"2.0","id":41,"result":"` + long + `"}`, ""},
		{`{"jsonrpc":"2.0","result":"` + long + `","id":41}`, ""},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"` + long + `"}}`, ""},
	}
	for _, c := range cases {
		d := newDrops()
		// MaxFrameSize 100 keeps the frame's first 100 bytes or so: the
		// third case's method comes after them.
		p := newPeer(t, &rpc.Options{Handler: specRegistry(&specNotes{}), AnswerInvalid: true, OnDrop: d.on, MaxFrameSize: 100})
		got := specExchange(t, p, c.send)
		checkSpecAnswer(t, c.want, got)
		if drop := linetest.Within(t, d.ch, "the drop"); drop.Reason != rpc.DropOversize || (drop.Reply != nil) != (c.want != "") {
			t.Errorf("%.60s: reported %v", c.send, drop)
		}
	}
}

// Whatever a Conn under AnswerInvalid answers, the answer given back to
// it is not answered: two such ends never answer each other for ever.
// MaxFrameSize is small enough that some answers are oversize for the
// Conn itself.
func TestAnswerInvalidNeverAnswersAnAnswer(t *testing.T) {
	inputs := []string{
		`not json`,
		`[1,2,3]`,
		`[]`,
		`{"jsonrpc":"2.0","method":1}`,
		`{"jsonrpc":"2.0","id":true,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"sum","params":["` + strings.Repeat("x", 200) + `"]}`,
		`{"jsonrpc":"2.0","id":null,"method":"nothing"}`,
		`{"jsonrpc":"2.0","id":null,"method":"sum","params":{"a":1}}`,
	}
	for _, batches := range []bool{false, true} {
		p := newPeer(t, &rpc.Options{Handler: specRegistry(&specNotes{}), AnswerInvalid: true, Batches: batches, MaxFrameSize: 100})
		for _, in := range inputs {
			answers := specExchange(t, p, in)
			if len(answers) != 1 {
				t.Fatalf("%s: answered %q, want one answer", in, answers)
			}
			if again := specExchange(t, p, answers[0]); len(again) != 0 {
				t.Errorf("Batches %v: the answer %s to %.60s was answered: %q", batches, answers[0], in, again)
			}
			if batches && !strings.HasPrefix(answers[0], "[") {
				if again := specExchange(t, p, "["+answers[0]+"]"); len(again) != 0 {
					t.Errorf("the answer %s in a batch was answered: %q", answers[0], again)
				}
			}
		}
	}
}

// A malformed Content-Length header block is answered CodeParseError under
// AnswerInvalid, and reading resumes at the next header.
func TestAnswerInvalidBadHeader(t *testing.T) {
	p := newWirePeer(t, &rpc.Options{Framing: rpc.ContentLengthFraming, Handler: stringEcho(), AnswerInvalid: true})
	p.send("Content-Length: 3x\r\n\r\n{}" + clFrame(`{"jsonrpc":"2.0","id":1,"method":"echo","params":"a"}`))
	if got := p.nextContentLength(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: `) {
		t.Fatalf("answered %s, want a parse error", got)
	}
	if got := p.nextContentLength(); got != `{"jsonrpc":"2.0","id":1,"result":"a"}` {
		t.Fatalf("then %s", got)
	}
}

// A request answered CodeInvalidParams is reported as answered, not as
// dropped, in Drop.String and Drop.Reply.
func TestDropOfAnAnsweredRequestSaysSo(t *testing.T) {
	d := newDrops()
	p := newPeer(t, &rpc.Options{Handler: specRegistry(&specNotes{}), OnDrop: d.on})
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"sum","params":{"a":1}}`)
	p.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: expected an array, got an object"}}`)
	drop := linetest.Within(t, d.ch, "the drop")
	if drop.Reply == nil || drop.Reply.Code != rpc.CodeInvalidParams {
		t.Fatalf("Drop.Reply is %v", drop.Reply)
	}
	if s := drop.String(); !strings.HasPrefix(s, "rpc: answered a frame with error -32602 (params do not decode) of method sum") {
		t.Fatalf("Drop.String() = %q", s)
	}
	p.Send(`{"jsonrpc":"2.0","method":"update","params":{"a":1}}`)
	drop = linetest.Within(t, d.ch, "the drop")
	if s := drop.String(); drop.Reply != nil || !strings.HasPrefix(s, "rpc: dropped a frame (params do not decode) of method update") {
		t.Fatalf("a notification's drop: Reply %v, String %q", drop.Reply, s)
	}
}

func TestUnmarshalParams(t *testing.T) {
	cases := []struct{ params, want, err string }{
		{`[42, 23]`, "19", ""},
		{`{"minuend": 42, "subtrahend": 23}`, "19", ""},
		{` [42] `, "42", ""},
		{`[]`, "0", ""},
		{`null`, "0", ""},
		{`[42, 23, 1]`, "", "invalid params: 3 params given by position, at most 2 expected"},
		{`[42, "23"]`, "", "invalid params: position 1: expected an integer, got a string"},
		{`{"minuend": "42"}`, "", `invalid params: member "minuend": expected an integer, got a string`},
	}
	p := newPeer(t, &rpc.Options{Handler: specRegistry(&specNotes{})})
	for i, c := range cases {
		p.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subtract","params":%s}`, i, c.params))
		if c.err == "" {
			p.Expect(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%s}`, i, c.want))
		} else {
			p.Expect(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":%q}}`, i, c.err))
		}
	}
	var pe *rpc.PositionError
	var sp subtractParams
	if err := sp.UnmarshalJSON([]byte(`[1, true]`)); !errors.As(err, &pe) || pe.Position != 1 {
		t.Fatalf("UnmarshalJSON of [1, true]: %v", err)
	}
}

func TestEmptyMethodNamesAreRefused(t *testing.T) {
	for _, f := range []func(){
		func() { rpc.NewMethod[int, int]("") },
		func() { rpc.NewNotification[int]("") },
	} {
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "the method name is empty") {
					t.Errorf("recovered %v, want a panic naming the empty name", v)
				}
			}()
			f()
		}()
	}
	p := newPeer(t, nil)
	ctx := context.Background()
	var zero rpc.Method[int, int]
	if _, err := zero.Call(ctx, p.conn, 1); err == nil || !strings.Contains(err.Error(), "the method name is empty") {
		t.Errorf("a zero Method's Call: %v", err)
	}
	if err := p.conn.Call(ctx, "", nil, nil); err == nil {
		t.Error(`Call(ctx, "") sent`)
	}
	if err := p.conn.Notify(ctx, "", nil); err == nil {
		t.Error(`Notify(ctx, "") sent`)
	}
	p.Send(`{"jsonrpc":"2.0","id":1,"method":"nothing"}`)
	p.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"method not found: nothing"}}`) // nothing else was written before
}

// Drop.Reply is the hook's own copy: changing it changes no answer.
func TestDropReplyIsTheHooksOwn(t *testing.T) {
	p := newPeer(t, &rpc.Options{AnswerInvalid: true, OnDrop: func(d rpc.Drop) {
		if d.Reply != nil {
			d.Reply.Message = "changed by the hook"
		}
	}})
	for range 2 {
		p.Send(`"not an object"`)
		p.Expect(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not an object"}}`)
	}
}
