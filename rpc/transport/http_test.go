package transport_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/floods"
	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/rpc/transport"
)

var (
	note    = rpc.NewNotification[linetest.EchoParams]("note")
	whoIs   = rpc.NewMethod[rpc.NoParams, string]("whois")
	callMe  = rpc.NewMethod[string, string]("callme")
	userKey = struct{ name string }{"user"}
)

// httpRegistry is EchoRegistry with a notification, note, whose texts
// go to heard, and the method callme, whose handler calls, notifies or
// batches its peer, as its params say, and answers the error it got.
func httpRegistry(heard chan<- string) *rpc.Registry {
	reg := linetest.EchoRegistry()
	rpc.HandleNotification(reg, note, func(_ context.Context, p linetest.EchoParams) {
		if heard != nil {
			heard <- p.Text
		}
	})
	rpc.Handle(reg, whoIs, func(ctx context.Context, _ rpc.NoParams) (string, error) {
		who, _ := ctx.Value(userKey).(string)
		return who, nil
	})
	rpc.Handle(reg, callMe, func(ctx context.Context, how string) (string, error) {
		peer := rpc.ConnFromContext(ctx)
		var err error
		switch how {
		case "call":
			_, err = linetest.Echo.Call(ctx, peer, linetest.EchoParams{Text: "back"})
		case "notify":
			err = note.Notify(ctx, peer, linetest.EchoParams{Text: "back"})
		case "batch":
			b := rpc.NewBatch(peer)
			p := linetest.Echo.InBatch(b, linetest.EchoParams{Text: "back"})
			if err = b.Send(ctx); err == nil {
				_, err = p.Result()
			}
		}
		return fmt.Sprint(err), nil
	})
	return reg
}

// bounded runs f on a goroutine of its own and returns what it returns,
// or fails t, saying what it waited for, when f has not returned within
// linetest.WaitBound. f must not end its goroutine (t.Fatal).
func bounded[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	return linetest.Within(t, ch, what)
}

// serve serves r with h, in process, within the wait bound.
func serve(t *testing.T, h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	return bounded(t, "ServeHTTP to return", func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	})
}

// postTo serves one POST of body with the Content-Type given to h, in
// process.
func postTo(t *testing.T, h http.Handler, contentType, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/rpc", strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return serve(t, h, r)
}

// expectAnswer fails t unless w is a 200 whose JSON body is want (the
// same value: members in any order).
func expectAnswer(t *testing.T, w *httptest.ResponseRecorder, want string) {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d (%q), want 200", w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if cl := w.Header().Get("Content-Length"); cl != fmt.Sprint(w.Body.Len()) {
		t.Errorf("Content-Length %q for a body of %d bytes", cl, w.Body.Len())
	}
	if !sameJSON(t, w.Body.Bytes(), []byte(want)) {
		t.Fatalf("body %s\nwant %s", w.Body, want)
	}
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%q is not JSON: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%q is not JSON: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// expectArray fails t unless w is a 200 whose body is an array of the
// responses want, in any order.
func expectArray(t *testing.T, w *httptest.ResponseRecorder, want ...string) {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d (%q), want 200", w.Code, w.Body)
	}
	var got []json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("body %s is not an array: %v", w.Body, err)
	}
	norm := func(all []string) []string {
		sort.Strings(all)
		return all
	}
	var gotS, wantS []string
	for _, g := range got {
		var v any
		json.Unmarshal(g, &v)
		b, _ := json.Marshal(v)
		gotS = append(gotS, string(b))
	}
	for _, w := range want {
		var v any
		if err := json.Unmarshal([]byte(w), &v); err != nil {
			t.Fatalf("want %q: %v", w, err)
		}
		b, _ := json.Marshal(v)
		wantS = append(wantS, string(b))
	}
	if g, w := strings.Join(norm(gotS), "\n"), strings.Join(norm(wantS), "\n"); g != w {
		t.Fatalf("answers\n%s\nwant\n%s", g, w)
	}
}

// expectNoContent fails t unless w is a 204 without a body.
func expectNoContent(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	if w.Code != http.StatusNoContent || w.Body.Len() != 0 {
		t.Fatalf("status %d, body %q; want 204 and none", w.Code, w.Body)
	}
}

// expectError fails t unless w has the status and a body that is an error
// with a null id and the code.
func expectError(t *testing.T, w *httptest.ResponseRecorder, status int, code rpc.Code) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d (%q), want %d", w.Code, w.Body, status)
	}
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *rpc.Error      `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.Error == nil {
		t.Fatalf("body %q is not an error response: %v", w.Body, err)
	}
	if resp.JSONRPC != "2.0" || string(resp.ID) != "null" || resp.Error.Code != code {
		t.Fatalf("body %s, want an error %d with a null id", w.Body, code)
	}
}

const jsonType = "application/json"

// A request is answered with its response, an error of the handler's as
// its error, a panic as CodeInternalError.
func TestHTTPHandlerRequest(t *testing.T) {
	rpctest.CheckNoLeak(t)
	h := transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(nil)})
	expectAnswer(t, postTo(t, h, jsonType, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"hi"}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"echo":"hi"}}`)
	expectAnswer(t, postTo(t, h, jsonType+"; charset=UTF-8", `{"jsonrpc":"2.0","id":"s","method":"echo","params":{"text":"coded"}}`),
		`{"jsonrpc":"2.0","id":"s","error":{"code":42,"message":"coded","data":{"k":"v"}}}`)
	expectAnswer(t, postTo(t, h, "Application/JSON", `{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"fail"}}`),
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"it failed"}}`)
	w := postTo(t, h, jsonType, `{"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":"panic"}}`)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"code":-32603`) {
		t.Errorf("a panic: %d %s", w.Code, w.Body)
	}
	expectAnswer(t, postTo(t, h, jsonType, `{"jsonrpc":"2.0","id":4,"method":"nosuch"}`),
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"method not found: nosuch"}}`)
	// A request whose id is null is served, as JSON-RPC 2.0 has it.
	expectAnswer(t, postTo(t, h, jsonType, `{"jsonrpc":"2.0","id":null,"method":"echo","params":{"text":"n"}}`),
		`{"jsonrpc":"2.0","id":null,"result":{"echo":"n"}}`)
}

// A body pretty-printed over many lines is one frame, served as compact
// JSON is.
func TestHTTPHandlerPrettyBody(t *testing.T) {
	h := transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(nil)})
	expectAnswer(t, postTo(t, h, jsonType, "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\r\n  \"method\": \"echo\",\n  \"params\": {\"text\": \"a\\nb\"}\n}\n\n"),
		`{"jsonrpc":"2.0","id":1,"result":{"echo":"a\nb"}}`)
	expectArray(t, postTo(t, h, jsonType, "[\n {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{\"text\":\"x\"}},\n {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":{\"text\":\"y\"}}\n]"),
		`{"jsonrpc":"2.0","id":1,"result":{"echo":"x"}}`, `{"jsonrpc":"2.0","id":2,"result":{"echo":"y"}}`)
}

// A batch is answered with the array of its requests' responses, in any
// order: its notifications have none, its invalid elements and unknown
// methods an error each.
func TestHTTPHandlerBatch(t *testing.T) {
	heard := make(chan string, 1)
	h := transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(heard)})
	w := postTo(t, h, jsonType, `[
		{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"one"}},
		{"jsonrpc":"2.0","method":"note","params":{"text":"heard"}},
		1,
		{"jsonrpc":"2.0","id":"two","method":"nosuch"},
		{"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":"fail"}},
		{"foo":"bar"}
	]`)
	expectArray(t, w,
		`{"jsonrpc":"2.0","id":1,"result":{"echo":"one"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not an object"}}`,
		`{"jsonrpc":"2.0","id":"two","error":{"code":-32601,"message":"method not found: nosuch"}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"it failed"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: neither a method nor a result or an error"}}`)
	if got := linetest.Within(t, heard, "the batch's notification"); got != "heard" {
		t.Errorf("notification %q", got)
	}
}

// A body that needs no answer — a notification, a batch of them,
// responses — gets 204 and no body, once the notifications were handled.
func TestHTTPHandlerNothingToAnswer(t *testing.T) {
	heard := make(chan string, 2)
	h := transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(heard)})
	expectNoContent(t, postTo(t, h, jsonType, `{"jsonrpc":"2.0","method":"note","params":{"text":"a"}}`))
	select { // ServeHTTP returns once the handler has returned
	case got := <-heard:
		if got != "a" {
			t.Errorf("heard %q", got)
		}
	default:
		t.Error("204 came before the notification was handled")
	}
	expectNoContent(t, postTo(t, h, jsonType, `[{"jsonrpc":"2.0","method":"note","params":{"text":"b"}},{"jsonrpc":"2.0","method":"note","params":{"text":"c"}}]`))
	if len(heard) != 2 {
		t.Errorf("%d notifications of the batch handled, want 2", len(heard))
	}
	expectNoContent(t, postTo(t, h, jsonType, `{"jsonrpc":"2.0","method":"nosuch"}`))
	expectNoContent(t, postTo(t, h, jsonType, `{"jsonrpc":"2.0","id":1,"result":"a response"}`))
	expectNoContent(t, postTo(t, h, jsonType, `[{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}]`))
}

// A body that is not JSON, or is empty, or two values, is answered
// CodeParseError with a null id, as JSON-RPC 2.0's examples show.
func TestHTTPHandlerParseError(t *testing.T) {
	h := transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(nil)})
	for _, body := range []string{
		`{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]`,
		`[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method"]`,
		``,
		" \r\n\t ",
		"\ufeff\u00a0\u2028", // white space as the Conn trims it
		`{"jsonrpc":"2.0","id":1,"method":"echo"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"echo"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{\"text\":\"a\nb\"}}",   // an LF in a string
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{\"text\":\"a\\\nb\"}}", // an escaped LF
		"\xe2\x80", // a character cut short: invalid UTF-8, not white space
		`[1 2]`,
		"[1\n2]", // an LF, read as a space, does not join values
	} {
		t.Run("", func(t *testing.T) {
			expectError(t, postTo(t, h, jsonType, body), http.StatusOK, rpc.CodeParseError)
		})
	}
}

// A body that is JSON but not a valid request is answered
// CodeInvalidRequest with a null id; an empty batch too.
func TestHTTPHandlerInvalidRequest(t *testing.T) {
	h := transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(nil)})
	for _, body := range []string{
		`{"jsonrpc": "2.0", "method": 1, "params": "bar"}`,
		`[]`,
		`"a string"`,
		`{"jsonrpc":"2.0","id":true,"method":"echo"}`,
		strings.Repeat("[", rpc.MaxDepth+1) + strings.Repeat("]", rpc.MaxDepth+1),
	} {
		t.Run("", func(t *testing.T) {
			expectError(t, postTo(t, h, jsonType, body), http.StatusOK, rpc.CodeInvalidRequest)
		})
	}
	expectArray(t, postTo(t, h, jsonType, `[1]`), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: not an object"}}`)
}

// countingReader counts the bytes read from it; it never ends.
type countingReader struct{ n atomic.Int64 }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	r.n.Add(int64(len(p)))
	return len(p), nil
}

// A body longer than MaxFrameSize gets 413 and a CodeInvalidRequest: by
// its Content-Length, unread; without one, read no further than the
// bound.
func TestHTTPHandlerTooLarge(t *testing.T) {
	const max = 1 << 10
	h := transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(nil), MaxFrameSize: max})
	body := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"` + strings.Repeat("x", max) + `"}}`
	expectError(t, postTo(t, h, jsonType, body), http.StatusRequestEntityTooLarge, rpc.CodeInvalidRequest)

	var endless countingReader
	r := httptest.NewRequest(http.MethodPost, "/rpc", &endless)
	r.ContentLength = -1 // chunked: only reading tells
	r.Header.Set("Content-Type", jsonType)
	expectError(t, serve(t, h, r), http.StatusRequestEntityTooLarge, rpc.CodeInvalidRequest)
	if n := endless.n.Load(); n > 64<<10 {
		t.Errorf("%d bytes of the body read, for a bound of %d", n, max)
	}

	// A body of exactly MaxFrameSize is served.
	pad := max - len(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}}`)
	exact := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"x"}}` + strings.Repeat(" ", pad)
	expectAnswer(t, postTo(t, h, jsonType, exact), `{"jsonrpc":"2.0","id":1,"result":{"echo":"x"}}`)
}

// Any method but POST gets 405 with Allow: POST, GET included.
func TestHTTPHandlerMethodNotAllowed(t *testing.T) {
	h := transport.NewHTTPHandler(nil)
	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodOptions, http.MethodDelete} {
		r := httptest.NewRequest(method, "/rpc", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"echo"}`))
		r.Header.Set("Content-Type", jsonType)
		w := serve(t, h, r)
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != http.MethodPost {
			t.Errorf("%s: status %d, Allow %q", method, w.Code, w.Header().Get("Allow"))
		}
	}
}

// A Content-Type other than application/json (in UTF-8) gets 415.
func TestHTTPHandlerUnsupportedMediaType(t *testing.T) {
	h := transport.NewHTTPHandler(nil)
	for _, ct := range []string{"", "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin1", "application/jsonx", "application/json; =bad"} {
		if w := postTo(t, h, ct, `{"jsonrpc":"2.0","id":1,"method":"echo"}`); w.Code != http.StatusUnsupportedMediaType {
			t.Errorf("Content-Type %q: status %d", ct, w.Code)
		}
	}
}

// The values of the request's context reach the handlers.
func TestHTTPHandlerContextValues(t *testing.T) {
	h := transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(nil)})
	auth := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey, r.Header.Get("X-User"))))
	})
	r := httptest.NewRequest(http.MethodPost, "/rpc", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"whois"}`))
	r.Header.Set("Content-Type", jsonType)
	r.Header.Set("X-User", "ada")
	expectAnswer(t, serve(t, auth, r), `{"jsonrpc":"2.0","id":1,"result":"ada"}`)
}

// served wraps h, and tells on the channel it returns each time ServeHTTP
// has returned.
func served(h http.Handler) (http.Handler, <-chan struct{}) {
	done := make(chan struct{}, 16)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { done <- struct{}{} }()
		h.ServeHTTP(w, r)
	}), done
}

// newHTTPServer starts an httptest.Server of h, closed at the test's end
// (before CheckNoLeak counts), and returns it with a client of its own,
// whose idle connections are closed then too.
func newHTTPServer(t *testing.T, h http.Handler) (*httptest.Server, *http.Client) {
	t.Helper()
	srv := httptest.NewServer(h)
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		closeServer(t, srv)
	})
	return srv, client
}

// closeServer closes srv, which waits for the requests it serves, within
// the wait bound: a handler that never returns fails the test rather than
// hang it.
func closeServer(t *testing.T, srv *httptest.Server) {
	t.Helper()
	bounded(t, "the test server to close", func() struct{} { srv.Close(); return struct{}{} })
}

// A client that goes away ends the handlers' contexts, and ServeHTTP
// returns.
func TestHTTPHandlerClientGone(t *testing.T) {
	rpctest.CheckNoLeak(t)
	b := linetest.NewBlocker()
	h, returned := served(transport.NewHTTPHandler(&rpc.Options{Handler: b.Reg}))
	srv, client := newHTTPServer(t, h)

	ctx, cancel := context.WithCancel(t.Context())
	posted := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"text":"x"}}`))
		req.Header.Set("Content-Type", jsonType)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		posted <- err
	}()
	linetest.Within(t, b.Started, "the handler to start")
	cancel()
	if cause := linetest.Within(t, b.Ended, "the handler's context to end"); !errors.Is(cause, rpc.ErrClosed) {
		t.Errorf("the handler's context ended with %v, want rpc.ErrClosed", cause)
	}
	linetest.Within(t, returned, "ServeHTTP to return")
	if err := linetest.Within(t, posted, "the POST to end"); !errors.Is(err, context.Canceled) {
		t.Errorf("POST: %v", err)
	}
}

// rawPost writes a POST's headers and the part of a body given to a raw
// connection to srv, announcing length bytes of body.
func rawPost(t *testing.T, srv *httptest.Server, length int, part string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	fmt.Fprintf(nc, "POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", length, part)
	return nc
}

// readResponse reads the response on nc, failing t when none comes
// within the wait bound.
func readResponse(t *testing.T, nc net.Conn) *httptest.ResponseRecorder {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(linetest.WaitBound)) // a failure bound, not a pace
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the response's body: %v", err)
	}
	w := httptest.NewRecorder()
	w.Code = resp.StatusCode
	w.Body.Write(body)
	return w
}

// A body that does not arrive within ReadTimeout is answered 408, its
// handler never run.
func TestHTTPHandlerSlowBody(t *testing.T) {
	rpctest.CheckNoLeak(t)
	b := linetest.NewBlocker()
	h := transport.NewHTTPHandler(&rpc.Options{Handler: b.Reg})
	h.ReadTimeout = 50 * time.Millisecond // the pace of nothing here: the test waits for the answer
	srv, _ := newHTTPServer(t, h)

	body := `{"jsonrpc":"2.0","id":1,"method":"block","params":{"text":"x"}}`
	nc := rawPost(t, srv, len(body), body[:10]) // and the rest never
	expectError(t, readResponse(t, nc), http.StatusRequestTimeout, rpc.CodeParseError)
	if len(b.Started) != 0 {
		t.Error("the handler of a body that never came whole ran")
	}
}

// A body cut short (the client hung up) is answered 400, its handler
// never run: however it was cut, what was read is never served.
func TestHTTPHandlerCutBody(t *testing.T) {
	rpctest.CheckNoLeak(t)
	b := linetest.NewBlocker()
	h, returned := served(transport.NewHTTPHandler(&rpc.Options{Handler: b.Reg}))
	srv, _ := newHTTPServer(t, h)

	// The part sent is a whole request: only its length says it is cut.
	body := `{"jsonrpc":"2.0","id":1,"method":"block","params":{"text":"x"}}`
	nc := rawPost(t, srv, len(body)+10, body)
	nc.(*net.TCPConn).CloseWrite()
	expectError(t, readResponse(t, nc), http.StatusBadRequest, rpc.CodeParseError)
	linetest.Within(t, returned, "ServeHTTP to return")
	if len(b.Started) != 0 {
		t.Error("the handler of a cut body ran")
	}
}

// ReadTimeout bounds the body only: a handler that runs longer keeps its
// context (net/http clears the deadline once the body is read).
func TestHTTPHandlerReadTimeoutSparesHandlers(t *testing.T) {
	rpctest.CheckNoLeak(t)
	const readTimeout = 20 * time.Millisecond
	reg := rpc.NewRegistry()
	rpc.Handle(reg, linetest.Echo, func(ctx context.Context, p linetest.EchoParams) (linetest.EchoResult, error) {
		// Outlive ReadTimeout: a timer of the handler's own, which a
		// loaded machine can only make longer (the test then passes for
		// nothing, never fails for nothing).
		select {
		case <-ctx.Done():
			return linetest.EchoResult{}, context.Cause(ctx)
		case <-time.After(10 * readTimeout):
			return linetest.EchoResult{Echo: p.Text}, nil
		}
	})
	h := transport.NewHTTPHandler(&rpc.Options{Handler: reg})
	h.ReadTimeout = readTimeout
	srv, client := newHTTPServer(t, h)
	got := bounded(t, "the answer", func() string {
		resp, err := client.Post(srv.URL, jsonType, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"slow"}}`))
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(body)
	})
	if want := `200 OK {"jsonrpc":"2.0","id":1,"result":{"echo":"slow"}}`; got != want {
		t.Fatalf("%s, want %s", got, want)
	}
}

// A handler cannot reach its client: a call or a notification fails with
// ErrHTTPCallback, a Batch's calls with ErrInputEnded, and nothing of them
// is written; the request is answered.
func TestHTTPHandlerCallback(t *testing.T) {
	rpctest.CheckNoLeak(t)
	var intercepted atomic.Int32
	h := transport.NewHTTPHandler(&rpc.Options{
		Handler: httpRegistry(nil),
		InterceptCall: func(next rpc.CallFunc) rpc.CallFunc {
			return func(ctx context.Context, call *rpc.Call) error {
				intercepted.Add(1)
				return next(ctx, call)
			}
		},
	})
	for how, want := range map[string]error{"call": transport.ErrHTTPCallback, "notify": transport.ErrHTTPCallback, "batch": rpc.ErrInputEnded} {
		expectAnswer(t, postTo(t, h, jsonType, `{"jsonrpc":"2.0","id":1,"method":"callme","params":"`+how+`"}`),
			`{"jsonrpc":"2.0","id":1,"result":`+string(mustJSON(t, want.Error()))+`}`)
	}
	if n := intercepted.Load(); n != 2 {
		t.Errorf("the Options' InterceptCall saw %d calls, want 2 (the call and the notification)", n)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The Options given are copied: changing them afterwards changes nothing.
func TestHTTPHandlerCopiesOptions(t *testing.T) {
	opts := &rpc.Options{Handler: httpRegistry(nil)}
	h := transport.NewHTTPHandler(opts)
	opts.Handler = nil
	opts.MaxFrameSize = 1
	expectAnswer(t, postTo(t, h, jsonType, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"a"}}`),
		`{"jsonrpc":"2.0","id":1,"result":{"echo":"a"}}`)
	if opts.Batches || opts.AnswerInvalid || opts.InterceptCall != nil {
		t.Error("NewHTTPHandler changed the Options it was given")
	}
}

// When the request's context ends while a handler runs (a middleware's
// deadline; the client still waits), the handler's context ends and the
// client is answered 503, not a 204 for the answer that Close dropped.
func TestHTTPHandlerRequestContextEnds(t *testing.T) {
	rpctest.CheckNoLeak(t)
	b := linetest.NewBlocker()
	h := transport.NewHTTPHandler(&rpc.Options{Handler: b.Reg})
	ctx, cancel := context.WithCancel(t.Context())
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/rpc", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"text":"x"}}`))
	r.Header.Set("Content-Type", jsonType)
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, r)
	}()
	linetest.Within(t, b.Started, "the handler to start")
	cancel()
	if cause := linetest.Within(t, b.Ended, "the handler's context to end"); !errors.Is(cause, rpc.ErrClosed) {
		t.Errorf("the handler's context ended with %v, want rpc.ErrClosed", cause)
	}
	linetest.Within(t, done, "ServeHTTP to return")
	expectError(t, w, http.StatusServiceUnavailable, rpc.CodeInternalError)
}

// benchWriter is a ResponseWriter that keeps nothing, reused from one
// request to the next, so that a benchmark counts the handler's
// allocations alone.
type benchWriter struct {
	header http.Header
	code   int
}

func (w *benchWriter) Header() http.Header         { return w.header }
func (w *benchWriter) WriteHeader(code int)        { w.code = code }
func (w *benchWriter) Write(p []byte) (int, error) { return len(p), nil }

// rewound is a request body read again from its start for each request.
type rewound struct{ bytes.Reader }

func (*rewound) Close() error { return nil }

// BenchmarkHTTPHandler serves one request per POST: in process, to a
// ResponseWriter that keeps nothing (the handler's own cost: a Conn per
// POST), and through a loopback httptest.Server, one client after
// another and many at once.
func BenchmarkHTTPHandler(b *testing.B) {
	const req = `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"hello"}}`
	h := transport.NewHTTPHandler(&rpc.Options{Handler: linetest.EchoRegistry()})

	b.Run("in-process", func(b *testing.B) {
		b.ReportAllocs()
		body := &rewound{}
		r := httptest.NewRequest(http.MethodPost, "/rpc", body)
		r.Header.Set("Content-Type", jsonType)
		r.ContentLength = int64(len(req))
		w := &benchWriter{header: http.Header{}}
		for b.Loop() {
			body.Reset([]byte(req))
			clear(w.header)
			h.ServeHTTP(w, r)
			if w.code != http.StatusOK {
				b.Fatalf("status %d", w.code)
			}
		}
	})

	srv := httptest.NewServer(h)
	defer srv.Close()
	transport := &http.Transport{MaxIdleConnsPerHost: 64}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	post := func(b *testing.B) {
		resp, err := client.Post(srv.URL, jsonType, strings.NewReader(req))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	b.Run("loopback", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			post(b)
		}
	})
	b.Run("loopback-parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				post(b)
			}
		})
	})
}

// What one POST makes an HTTPHandler hold is bounded as its documentation
// says: with many POSTs of bodies of MaxFrameSize in flight at once, each
// holds its body as its Conn read it and its decoded params; once they
// are answered, nothing of them stays.
func TestHTTPHandlerFlood(t *testing.T) {
	floods.SkipUnlessEnabled(t, "64 POSTs of 256 KiB at once, then 20,000 one after another, a few seconds")
	rpctest.CheckNoLeak(t)
	const (
		posts = 64
		max   = 256 << 10
		// The bound per POST in flight: the body as its Conn read it,
		// the params decoded from it (a string as long), and room for the
		// request's and the Conn's own.
		heldBound = 2*max + 64<<10
		// What a POST may leave behind once answered: nothing but noise.
		leftBound = 1 << 20
	)
	started := make(chan struct{}, posts)
	release := make(chan struct{})
	reg := rpc.NewRegistry()
	rpc.Handle(reg, linetest.Echo, func(ctx context.Context, p linetest.EchoParams) (linetest.EchoResult, error) {
		started <- struct{}{}
		<-release
		return linetest.EchoResult{Echo: p.Text[:1]}, nil
	})
	h := transport.NewHTTPHandler(&rpc.Options{Handler: reg, MaxFrameSize: max})
	envelope := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":""}}`
	body := envelope[:len(envelope)-3] + strings.Repeat("x", max-len(envelope)) + `"}}`

	reqs := make([]*http.Request, posts)
	ws := make([]*benchWriter, posts)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodPost, "/rpc", strings.NewReader(body))
		reqs[i].Header.Set("Content-Type", jsonType)
		ws[i] = &benchWriter{header: http.Header{}}
	}
	base := linetest.LiveHeap() // the bodies to send are counted here already
	done := make(chan struct{}, posts)
	for i := range reqs {
		go func() {
			h.ServeHTTP(ws[i], reqs[i])
			done <- struct{}{}
		}()
	}
	for range posts {
		linetest.Within(t, started, "every POST's handler to start")
	}
	held := linetest.LiveHeap() - base
	t.Logf("%d POSTs of %d KiB in flight: live heap %d KiB, %d KiB per POST (bound %d KiB)", posts, max>>10, held>>10, held/posts>>10, heldBound>>10)
	if held > posts*heldBound {
		t.Errorf("%d B per POST in flight, over the bound of %d", held/posts, heldBound)
	}
	close(release)
	for range posts {
		linetest.Within(t, done, "every POST to be answered")
	}
	for i, w := range ws {
		if w.code != http.StatusOK {
			t.Fatalf("POST %d: status %d", i, w.code)
		}
	}
	reqs, ws = nil, nil

	// One after another, many more: none leaves anything behind.
	base = linetest.LiveHeap()
	small := transport.NewHTTPHandler(&rpc.Options{Handler: linetest.EchoRegistry()})
	w := &benchWriter{header: http.Header{}}
	for i := range 20000 {
		r := httptest.NewRequest(http.MethodPost, "/rpc", strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"text":"x"}}`, i)))
		r.Header.Set("Content-Type", jsonType)
		clear(w.header)
		bounded(t, "ServeHTTP to return", func() struct{} { small.ServeHTTP(w, r); return struct{}{} })
		if w.code != http.StatusOK {
			t.Fatalf("POST %d: status %d", i, w.code)
		}
	}
	left := linetest.LiveHeap() - base
	t.Logf("20,000 POSTs answered one after another: %d KiB left (bound %d KiB)", left>>10, leftBound>>10)
	if left > leftBound {
		t.Errorf("%d B left after 20,000 POSTs, over the bound of %d", left, leftBound)
	}
}
