package fuzz

import (
	"testing"

	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/rpc"
)

// FuzzAnswerInvalid is FuzzDispatch under Options.AnswerInvalid: every
// line gets exactly the answers the option promises (its own id for a
// request, a null id for a request whose id is null and for anything that
// is not valid JSON-RPC), each a well-formed response; a notification and
// a response get none; and the good request that follows is still
// answered.
func FuzzAnswerInvalid(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]`,
		`{"jsonrpc": "2.0", "method": 1, "params": "bar"}`,
		`[1,2,3]`,
		`[]`,
		`[{"jsonrpc":"2.0","id":1,"result":1}]`,
		`{"jsonrpc":"2.0","id":null,"method":"echo","params":{"text":"n"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":true,"method":"note"}`,
		`{"jsonrpc":"2.0","method":"note","params":{"text":"a"},"params":[1,]}`,
		`"just a string"` + "\n" + `{"id":{},"result":2}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, unknown bool) {
		complete, tail := splitLines(data)
		complete = append(complete, tail)
		var want []string
		for _, l := range complete {
			if id, ok := answerInvalidOracle(l); ok {
				want = append(want, id)
			}
		}
		want = append(want, `"probe-7f3a"`)

		checkAnswers(t, data, &rpc.Options{Handler: serverRegistry(unknown), MaxConcurrentRequests: 2, AnswerInvalid: true}, want)
	})
}

// answerInvalidOracle returns the id of the one answer the line l gets
// under Options.AnswerInvalid (Batches off), as the option's documentation
// states it, or ok false when it gets none.
func answerInvalidOracle(l []byte) (id string, ok bool) {
	c := classify(l)
	switch c.class {
	case classBlank:
		return "", false
	case classMalformed:
		return "null", true
	case classNotObject:
		if responsesOnly(c.line) {
			return "", false // they settle calls (none here): never answered
		}
		return "null", true
	case classTooDeep:
		if specResponse(&c.env) {
			return "", false
		}
		return "null", true
	}
	env := &c.env
	switch {
	case env.Method.Kind == wire.String && env.ID.Kind == wire.Absent:
		return "", false // a notification
	case env.Method.Kind == wire.String && (env.ID.Kind == wire.String || env.ID.Kind == wire.Number):
		return string(env.ID.Raw), true // a request, answered by its handler or -32601
	case specResponse(env):
		return "", false
	}
	return "null", true // a request with a null id, or an invalid object
}

// specResponse says whether the object env is a response as the option
// reads JSON-RPC 2.0: no method, and a result or an error.
func specResponse(env *wire.Envelope) bool {
	return env.Method.Kind == wire.Absent && (env.Result.Kind != wire.Absent || env.Error.Kind != wire.Absent)
}

// responsesOnly says whether line is an array, not nested deeper than
// MaxDepth, of one or more responses.
func responsesOnly(line []byte) bool {
	var s wire.Scanner
	top, depth, err := s.Scan(line, nil)
	if err != nil || top != wire.Array || depth > rpc.MaxDepth {
		return false
	}
	n, all := 0, true
	wire.Elements(line, func(elem []byte) bool {
		n++
		c := classify(elem)
		all = (c.class != classMalformed && c.class != classNotObject && c.class != classBlank) && specResponse(&c.env)
		return all
	})
	return n > 0 && all
}
