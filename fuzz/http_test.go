package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/transport"
)

// The bounds of FuzzHTTPHandler's handlers: a large one, within which
// every answer of a fuzzed body fits, and a small one, which most bodies
// pass (413) and whose answers often do not fit.
const (
	httpLargeMax = 1 << 20
	httpSmallMax = 64
)

// callbackMethod is served by httpFuzzRegistry: its handler calls its
// peer, which over HTTP it cannot, and answers with the error it got.
var callbackMethod = rpc.NewMethod[json.RawMessage, string]("callback")

// httpFuzzRegistry is serverRegistry with callbackMethod.
func httpFuzzRegistry() *rpc.Registry {
	reg := serverRegistry(false)
	rpc.Handle(reg, callbackMethod, func(ctx context.Context, p json.RawMessage) (string, error) {
		_, err := echoMethod.Call(ctx, rpc.ConnFromContext(ctx), echoParams{Text: "back"})
		return fmt.Sprint(err), nil
	})
	return reg
}

// FuzzHTTPHandler posts any body, with any Content-Type, whole (with its
// Content-Length) or cut into reads of the fuzzer's choice (chunked, of
// unknown length), to an HTTPHandler serving httpFuzzRegistry. Whatever
// comes, ServeHTTP returns within the wait bound, without a panic, with a
// status of 200, 204, 413 or 415, as HTTPHandler's documentation says:
//   - 415 exactly when the Content-Type is not application/json in UTF-8;
//   - else 413, with a CodeInvalidRequest error with a null id, exactly
//     when the body is longer than MaxFrameSize;
//   - else the answers Options.AnswerInvalid and Options.Batches promise
//     (see answerInvalidOracle), which the wire rules give independently
//     of the handler: 204 and an empty body when there are none, else 200
//     with one response object (a lone frame's answer, or the error of a
//     body that is not JSON, blank, too deep, or an empty array) or an
//     array of them (a batch's), each with jsonrpc "2.0", an id and
//     exactly one of result or error, whose ids are those expected. Where
//     a batch's answers may pass MaxFrameSize (a bound the Conn keeps by
//     leaving some out) the ids answered need only be among those
//     expected, maybe none (204).
func FuzzHTTPHandler(f *testing.F) {
	const jsonType = "application/json"
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"a","l":[1,"b",null]}}`,
		"{\n  \"jsonrpc\": \"2.0\",\n  \"id\": \"s\",\n  \"method\": \"fail\",\n  \"params\": [1, 2]\n}\n",
		`{"jsonrpc":"2.0","method":"note","params":{"text":"n"}}`,
		`[{"jsonrpc":"2.0","method":"note","params":{"text":"n"}},{"jsonrpc":"2.0","method":"anynote"}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}},{"jsonrpc":"2.0","method":"note"},1,{"foo":"boo"},{"jsonrpc":"2.0","id":"2","method":"nosuch"},[]]`,
		`[]`, `[[]]`, `[1,2,3]`, `"text"`, `null`, ``, " \n\t", "\ufeff",
		`{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{\"text\":\"a\nb\"}}",
		`{"jsonrpc":"2.0","id":1,"method":"echo"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"echo"}`,
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"cut`,
		`{"jsonrpc":"2.0","id":1,"result":1}`,
		`[{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}]`,
		`{"jsonrpc":"2.0","id":null,"method":"echo","params":{"text":"n"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"callback"}`,
		`{"jsonrpc":"2.0","id":4,"method":"panic","params":{"a":1}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"echo\"}",
		`{"jsonrpc":"2.0","id":5,"method":"echo","params":{"text":"` + strings.Repeat("long ", 20) + `"}}`,
		strings.Repeat("[", rpc.MaxDepth+1) + strings.Repeat("]", rpc.MaxDepth+1),
	} {
		f.Add([]byte(s), []byte(nil), jsonType, false)
		f.Add([]byte(s), []byte{3, 0, 7}, jsonType+"; charset=utf-8", false)
		f.Add([]byte(s), []byte(nil), jsonType, true)
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"echo"}`), []byte(nil), "text/plain", false)
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"echo"}`), []byte(nil), "", false)
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"echo"}`), []byte(nil), "application/json; charset=latin1", false)
	f.Add(bytes.Repeat([]byte(" "), httpSmallMax+1), []byte{1}, jsonType, true)

	reg := httpFuzzRegistry()
	f.Fuzz(func(t *testing.T, body, cuts []byte, contentType string, small bool) {
		max := httpLargeMax
		if small {
			max = httpSmallMax
		}
		h := transport.NewHTTPHandler(&rpc.Options{Handler: reg, MaxFrameSize: max, MaxConcurrentRequests: 2})
		var in io.Reader = bytes.NewReader(body)
		if len(cuts) > 0 {
			in = cutReader(body, cuts, cuts[0]%2 == 1)
		}
		r := httptest.NewRequest(http.MethodPost, "/rpc", in)
		if len(cuts) > 0 {
			r.ContentLength = -1 // only reading tells how long it is
		}
		r.Header.Set("Content-Type", contentType)
		w := httptest.NewRecorder()
		served := make(chan struct{})
		go func() {
			defer close(served)
			h.ServeHTTP(w, r)
		}()
		select {
		case <-served:
		case <-time.After(waitBound):
			t.Fatalf("ServeHTTP did not return within %v", waitBound)
		}

		got := w.Body.Bytes()
		switch {
		case !jsonMediaType(contentType):
			if w.Code != http.StatusUnsupportedMediaType {
				t.Fatalf("Content-Type %q: status %d, want 415", contentType, w.Code)
			}
			return
		case len(body) > max:
			if w.Code != http.StatusRequestEntityTooLarge {
				t.Fatalf("a body of %d bytes for %d: status %d, want 413", len(body), max, w.Code)
			}
			checkLoneAnswer(t, got, "null", rpc.CodeInvalidRequest)
			return
		}
		want := httpOracle(body)
		// A batch's answers fit the bound when each of its elements' does:
		// no answer is much longer than its element, but an error's
		// message is, and an element can be two bytes. Past that, the Conn
		// leaves out what does not fit, maybe all.
		lenient := want.batch && len(body)*64+4096 > max
		switch {
		case len(want.ids) == 0 || lenient && w.Code == http.StatusNoContent:
			if w.Code != http.StatusNoContent || len(got) != 0 {
				t.Fatalf("status %d, body %q; want 204 and none", w.Code, got)
			}
			return
		case w.Code != http.StatusOK:
			t.Fatalf("status %d (body %q), want 200 with the answers %q", w.Code, got, want.ids)
		case w.Header().Get("Content-Type") != "application/json":
			t.Fatalf("Content-Type %q", w.Header().Get("Content-Type"))
		case !want.batch:
			checkLoneAnswer(t, got, want.ids[0], want.code)
			return
		}
		var s wire.Scanner
		if top, _, err := s.Scan(got, nil); err != nil || top != wire.Array {
			t.Fatalf("the answer to a batch is not an array: %q", got)
		}
		var ids []string
		wire.Elements(got, func(elem []byte) bool {
			id, _, problem := checkResponseFrame(append(append([]byte(nil), elem...), '\n'))
			if problem != "" {
				t.Fatalf("answer %q in %q: %s", elem, got, problem)
			}
			ids = append(ids, string(id))
			return true
		})
		if len(ids) == 0 {
			t.Fatalf("an empty array answered: %q", got)
		}
		if lenient {
			amongIDs(t, ids, want.ids, got)
		} else {
			sameIDs(t, ids, want.ids, got)
		}
	})
}

// jsonMediaType is the rule of HTTPHandler's 415: application/json, with
// no charset or UTF-8's.
func jsonMediaType(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8") || strings.EqualFold(cs, "utf8")
}

// httpAnswers is what the oracle expects a body to be answered with: the
// raw ids of its answers (none: 204), whether they come as a batch's
// array, and, for a lone answer with a null id to a body that is not
// JSON or blank, its code (0 when another).
type httpAnswers struct {
	ids   []string
	batch bool
	code  rpc.Code
}

// httpOracle returns the answers to a body within the bound, by the wire
// rules (classify, answerInvalidOracle) rather than the handler's code:
// the body is one frame, whatever line feeds it holds (JSON white space),
// and a blank one is answered as one that is not JSON.
func httpOracle(body []byte) httpAnswers {
	c := classify(body)
	switch c.class {
	case classBlank, classMalformed:
		return httpAnswers{ids: []string{"null"}, code: rpc.CodeParseError}
	case classTooDeep:
		if id, ok := answerInvalidOracle(body); ok {
			return httpAnswers{ids: []string{id}}
		}
		return httpAnswers{}
	}
	var s wire.Scanner
	if _, depth, _ := s.Scan(c.line, nil); c.line[0] != '[' || depth > rpc.MaxDepth {
		// A lone frame, or a batch too deep to read: one answer, alone.
		if id, ok := answerInvalidOracle(body); ok {
			return httpAnswers{ids: []string{id}}
		}
		return httpAnswers{}
	}
	n := 0
	a := httpAnswers{batch: true}
	wire.Elements(c.line, func(elem []byte) bool {
		n++
		switch id, ok := answerInvalidOracle(elem); {
		case elem[0] == '[':
			a.ids = append(a.ids, "null") // a batch in a batch is not one
		case ok:
			a.ids = append(a.ids, id)
		}
		return true
	})
	if n == 0 {
		return httpAnswers{ids: []string{"null"}} // an empty batch: one error, alone
	}
	return a
}

// checkLoneAnswer fails t unless got is one response object whose id is
// id and, when code is not 0, an error of code.
func checkLoneAnswer(t *testing.T, got []byte, id string, code rpc.Code) {
	t.Helper()
	gotID, isErr, problem := checkResponseFrame(append(append([]byte(nil), got...), '\n'))
	switch {
	case problem != "":
		t.Fatalf("answer %q: %s", got, problem)
	case string(gotID) != id:
		t.Fatalf("answer %q: id %s, want %s", got, gotID, id)
	case code != 0:
		var resp struct{ Error *rpc.Error }
		json.Unmarshal(got, &resp)
		if !isErr || resp.Error.Code != code {
			t.Fatalf("answer %q, want the error %d", got, code)
		}
	}
}

// sameIDs fails t unless got and want hold the same ids, as multisets.
func sameIDs(t *testing.T, got, want []string, body []byte) {
	t.Helper()
	g, w := sortedCopy(got), sortedCopy(want)
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Fatalf("answered ids %q, want %q (answer %q)", g, w, body)
	}
}

// amongIDs fails t unless each id of got is one of want, each used once.
func amongIDs(t *testing.T, got, want []string, body []byte) {
	t.Helper()
	left := map[string]int{}
	for _, id := range want {
		left[id]++
	}
	for _, id := range got {
		if left[id] == 0 {
			t.Fatalf("answered id %s, not among %q (answer %q)", id, want, body)
		}
		left[id]--
	}
}

func sortedCopy(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}
