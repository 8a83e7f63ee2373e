package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/rpc/transport"
)

// dialHTTP returns a Conn of DialHTTP's to srv's URL with client, closed
// and waited for at the test's end.
func dialHTTP(t *testing.T, url string, client *http.Client, opts *transport.HTTPClientOptions) *rpc.Conn {
	t.Helper()
	if opts == nil {
		opts = &transport.HTTPClientOptions{}
	}
	if opts.Client == nil {
		opts.Client = client
	}
	c, err := transport.DialHTTP(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		bounded(t, "the Conn to end", c.Wait)
	})
	return c
}

// call calls Echo with text on c, within the wait bound.
func call(t *testing.T, c *rpc.Conn, text string) linetest.CallResult {
	t.Helper()
	return linetest.Within(t, linetest.Call(t.Context(), c, text), "the call's outcome")
}

// expectRPCError fails t unless err is an *rpc.Error with code and msg.
func expectRPCError(t *testing.T, err error, code rpc.Code, msg string) *rpc.Error {
	t.Helper()
	var e *rpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want an *rpc.Error", err, err)
	}
	if e.Code != code || (msg != "" && e.Message != msg) {
		t.Fatalf("error %d %q, want %d %q", e.Code, e.Message, code, msg)
	}
	return e
}

// A typed call over HTTP, to an HTTPHandler: its result, a handler's
// error as the peer's *rpc.Error, a notification handled.
func TestDialHTTPCall(t *testing.T) {
	rpctest.CheckNoLeak(t)
	heard := make(chan string, 1)
	srv, client := newHTTPServer(t, transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(heard)}))
	c := dialHTTP(t, srv.URL, client, nil)

	if res := call(t, c, "over http"); res.Err != nil || res.Result.Echo != "over http" {
		t.Fatalf("call: %+v", res)
	}
	if e := expectRPCError(t, call(t, c, "coded").Err, 42, "coded"); string(e.Data) != `{"k":"v"}` {
		t.Errorf("data %s", e.Data)
	}
	if err := note.Notify(t.Context(), c, linetest.EchoParams{Text: "noted"}); err != nil {
		t.Fatal(err)
	}
	if got := linetest.Within(t, heard, "the notification to be handled"); got != "noted" {
		t.Errorf("heard %q", got)
	}
	var untyped linetest.EchoResult
	if err := bounded(t, "Conn.Call", func() error {
		return c.Call(t.Context(), "echo", map[string]string{"text": "untyped"}, &untyped)
	}); err != nil || untyped.Echo != "untyped" {
		t.Errorf("Conn.Call: %+v, %v", untyped, err)
	}
}

// Header is sent with every POST.
func TestDialHTTPHeader(t *testing.T) {
	rpctest.CheckNoLeak(t)
	h := transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(nil)})
	srv, client := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey, r.Header.Get("Authorization"))))
	}))
	c := dialHTTP(t, srv.URL, client, &transport.HTTPClientOptions{Header: http.Header{"Authorization": {"Bearer t0ken"}}})
	who := bounded(t, "whois", func() string {
		who, err := whoIs.Call(t.Context(), c, rpc.NoParams{})
		return fmt.Sprint(who, err)
	})
	if who != "Bearer t0ken<nil>" {
		t.Fatalf("whois: %s", who)
	}
}

// Many calls at once each get their own answer.
func TestDialHTTPConcurrentCalls(t *testing.T) {
	rpctest.CheckNoLeak(t)
	srv, client := newHTTPServer(t, transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(nil)}))
	c := dialHTTP(t, srv.URL, client, &transport.HTTPClientOptions{MaxInFlight: 8})
	const n = 200
	errs := make(chan error, n)
	for i := range n {
		go func() {
			text := fmt.Sprint("call ", i)
			res, err := linetest.Echo.Call(t.Context(), c, linetest.EchoParams{Text: text})
			if err == nil && res.Echo != text {
				err = fmt.Errorf("call %d answered %q", i, res.Echo)
			}
			errs <- err
		}()
	}
	for range n {
		if err := linetest.Within(t, errs, "a call's outcome"); err != nil {
			t.Error(err)
		}
	}
}

// A Batch is one POST, its answers matched by id.
func TestDialHTTPBatch(t *testing.T) {
	rpctest.CheckNoLeak(t)
	heard := make(chan string, 1)
	var posts atomic.Int32
	h := transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(heard)})
	srv, client := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		h.ServeHTTP(w, r)
	}))
	c := dialHTTP(t, srv.URL, client, nil)
	b := rpc.NewBatch(c)
	one := linetest.Echo.InBatch(b, linetest.EchoParams{Text: "one"})
	two := linetest.Echo.InBatch(b, linetest.EchoParams{Text: "fail"})
	note.InBatch(b, linetest.EchoParams{Text: "in a batch"})
	if err := bounded(t, "Batch.Send", func() error { return b.Send(t.Context()) }); err != nil {
		t.Fatal(err)
	}
	if r, err := one.Result(); err != nil || r.Echo != "one" {
		t.Errorf("one: %+v, %v", r, err)
	}
	_, err := two.Result()
	expectRPCError(t, err, rpc.CodeInternalError, "it failed")
	linetest.Within(t, heard, "the batch's notification")
	if n := posts.Load(); n != 1 {
		t.Errorf("%d POSTs for one batch", n)
	}
}

// A status without a JSON-RPC body ends the call with CodeHTTPError, the
// status in its message and its data.
func TestDialHTTPStatusWithoutBody(t *testing.T) {
	rpctest.CheckNoLeak(t)
	srv, client := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	c := dialHTTP(t, srv.URL, client, nil)
	e := expectRPCError(t, call(t, c, "x").Err, transport.CodeHTTPError, "http: 503 Service Unavailable")
	if string(e.Data) != `{"status":503}` {
		t.Errorf("data %s", e.Data)
	}
	// A notification's failure has nobody to tell: Notify returned once
	// the frame was queued.
	if err := note.Notify(t.Context(), c, linetest.EchoParams{}); err != nil {
		t.Errorf("Notify: %v", err)
	}
}

// A server that is not JSON-RPC — a text body, JSON of another kind, an
// answer to another call, a 500 with text — ends the call with
// CodeHTTPError, saying so.
func TestDialHTTPNotJSONRPC(t *testing.T) {
	rpctest.CheckNoLeak(t)
	for body, want := range map[string]string{
		"hello, world":                          "http: 200 OK: the response holds no answer to the call",
		`{"foo":1}`:                             "http: 200 OK: the response holds no answer to the call",
		`[1,2,3]`:                               "http: 200 OK: the response holds no answer to the call",
		`{"jsonrpc":"2.0"`:                      "http: 200 OK: the response holds no answer to the call",
		`{"jsonrpc":"2.0","id":999,"result":1}`: "http: 200 OK: the response holds no answer to the call",
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":1}}`:        "http: 200 OK: the response holds no answer to the call",
		strings.Repeat("[", rpc.MaxDepth) + strings.Repeat("]", rpc.MaxDepth): "http: 200 OK: the response holds no answer to the call",
	} {
		t.Run("", func(t *testing.T) {
			srv, client := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(body))
			}))
			c := dialHTTP(t, srv.URL, client, nil)
			expectRPCError(t, call(t, c, "x").Err, transport.CodeHTTPError, want)
		})
	}
	srv, client := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "it broke", http.StatusInternalServerError)
	}))
	c := dialHTTP(t, srv.URL, client, nil)
	expectRPCError(t, call(t, c, "x").Err, transport.CodeHTTPError, "http: 500 Internal Server Error")
}

// An answer nested deeper than MaxDepth is one the Conn would drop: the
// call ends with CodeHTTPError rather than waiting for it.
func TestDialHTTPTooDeepAnswer(t *testing.T) {
	rpctest.CheckNoLeak(t)
	deep := strings.Repeat("[", rpc.MaxDepth) + strings.Repeat("]", rpc.MaxDepth)
	srv, client := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":%s}`, deep)
	}))
	c := dialHTTP(t, srv.URL, client, nil)
	err := bounded(t, "the call", func() error {
		var res any
		return c.Call(t.Context(), "deep", nil, &res)
	})
	expectRPCError(t, err, transport.CodeHTTPError, "http: 200 OK: the response holds no answer to the call")
}

// Answers may come in any order, in an array of a pretty-printing server;
// a duplicate and an answer to a call of another POST are ignored.
func TestDialHTTPAnswersInAnyOrder(t *testing.T) {
	rpctest.CheckNoLeak(t)
	srv, client := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var reqs []struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.NewDecoder(r.Body).Decode(&reqs); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var out []any
		for i := len(reqs) - 1; i >= 0; i-- {
			out = append(out, map[string]any{"jsonrpc": "2.0", "id": reqs[i].ID, "result": map[string]any{"echo": string(reqs[i].ID)}})
		}
		out = append(out, map[string]any{"jsonrpc": "2.0", "id": reqs[0].ID, "result": map[string]any{"echo": "duplicate"}})
		out = append(out, map[string]any{"jsonrpc": "2.0", "id": 12345, "result": map[string]any{"echo": "another's"}})
		b, _ := json.MarshalIndent(out, "", "  ")
		w.Write(b)
	}))
	c := dialHTTP(t, srv.URL, client, nil)
	b := rpc.NewBatch(c)
	var pending []*rpc.Pending[linetest.EchoResult]
	for range 3 {
		pending = append(pending, linetest.Echo.InBatch(b, linetest.EchoParams{}))
	}
	if err := bounded(t, "Batch.Send", func() error { return b.Send(t.Context()) }); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range pending {
		r, err := p.Result()
		if err != nil || r.Echo == "duplicate" || r.Echo == "another's" || seen[r.Echo] {
			t.Errorf("answer %+v, %v", r, err)
		}
		seen[r.Echo] = true
	}
}

// An HTTPHandler's 413, whose error has a null id, answers the call that
// was too large for it.
func TestDialHTTPTooLargeForTheServer(t *testing.T) {
	rpctest.CheckNoLeak(t)
	srv, client := newHTTPServer(t, transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(nil), MaxFrameSize: 100}))
	c := dialHTTP(t, srv.URL, client, nil)
	expectRPCError(t, call(t, c, strings.Repeat("x", 200)).Err, rpc.CodeInvalidRequest, "invalid request: the body is longer than the maximum frame size (100 bytes)")
}

// A response body longer than MaxFrameSize is not read past it: the call
// ends with CodeHTTPError.
func TestDialHTTPResponseTooLarge(t *testing.T) {
	rpctest.CheckNoLeak(t)
	const max = 1000
	srv, client := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID   json.RawMessage `json:"id"`
			Size int             `json:"params"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		pad := req.Size - len(`{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":""}`)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"%s"}`, req.ID, strings.Repeat("x", pad))
	}))
	c := dialHTTP(t, srv.URL, client, &transport.HTTPClientOptions{Options: &rpc.Options{MaxFrameSize: max}})
	var res string
	sized := func(size int) error {
		return bounded(t, "the call", func() error { return c.Call(t.Context(), "sized", size, &res) })
	}
	if err := sized(max); err != nil || len(res) != max-len(`{"jsonrpc":"2.0","id":1,"result":""}`) {
		t.Fatalf("an answer of MaxFrameSize: %d bytes, %v", len(res), err)
	}
	err := sized(max + 1)
	expectRPCError(t, err, transport.CodeHTTPError, "http: 200 OK: the body is longer than the maximum frame size (1000 bytes)")
}

// A POST that fails ends its call with CodeHTTPError and the client's
// error; DialHTTP refuses what is not an http or https URL.
func TestDialHTTPUnreachable(t *testing.T) {
	rpctest.CheckNoLeak(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nobody listens there now
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	c := dialHTTP(t, "http://"+addr+"/rpc", client, nil)
	e := expectRPCError(t, call(t, c, "x").Err, transport.CodeHTTPError, "")
	if !strings.HasPrefix(e.Message, "http: Post ") || e.Data != nil {
		t.Errorf("message %q, data %s", e.Message, e.Data)
	}

	for _, bad := range []string{"", "ftp://example.com/", "example.com/rpc", "http://", "http://%zz"} {
		if c, err := transport.DialHTTP(bad, nil); err == nil {
			c.Close()
			t.Errorf("DialHTTP(%q) succeeded", bad)
		}
	}
}

// Close cancels every POST in flight: the server's handlers see their
// context end, the calls fail with ErrClosed, and no goroutine is left.
func TestDialHTTPCloseCancelsPosts(t *testing.T) {
	rpctest.CheckNoLeak(t)
	b := linetest.NewBlocker()
	h, returned := served(transport.NewHTTPHandler(&rpc.Options{Handler: b.Reg}))
	srv, client := newHTTPServer(t, h)
	c, err := transport.DialHTTP(srv.URL, &transport.HTTPClientOptions{Client: client})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	var calls []<-chan linetest.CallResult
	for range n {
		calls = append(calls, blockCall(t.Context(), c))
	}
	for range n {
		linetest.Within(t, b.Started, "the handlers to start")
	}
	c.Close()
	for i := range n {
		if cause := linetest.Within(t, b.Ended, "the server's handlers to see the POSTs cancelled"); !errors.Is(cause, rpc.ErrClosed) {
			t.Errorf("handler %d ended with %v", i, cause)
		}
		linetest.Within(t, returned, "ServeHTTP to return")
	}
	for _, blocked := range calls {
		if res := linetest.Within(t, blocked, "the call to end"); !errors.Is(res.Err, rpc.ErrClosed) {
			t.Errorf("call: %+v, want ErrClosed", res)
		}
	}
	if err := bounded(t, "the Conn to end", c.Wait); !errors.Is(err, rpc.ErrClosed) {
		t.Errorf("Wait: %v", err)
	}
}

// blockCall calls Block on its own goroutine (see linetest.Call).
func blockCall(ctx context.Context, c *rpc.Conn) <-chan linetest.CallResult {
	ch := make(chan linetest.CallResult, 1)
	go func() {
		r, err := linetest.Block.Call(ctx, c, linetest.EchoParams{Text: "x"})
		ch <- linetest.CallResult{Result: r, Err: err}
	}()
	return ch
}

// A call whose context ends cancels its POST: the server's handler sees
// its context end; the Conn goes on.
func TestDialHTTPCallContextCancelsPost(t *testing.T) {
	rpctest.CheckNoLeak(t)
	b := linetest.NewBlocker()
	srv, client := newHTTPServer(t, transport.NewHTTPHandler(&rpc.Options{Handler: b.Reg}))
	c := dialHTTP(t, srv.URL, client, nil)
	ctx, cancel := context.WithCancel(t.Context())
	blocked := blockCall(ctx, c)
	linetest.Within(t, b.Started, "the handler to start")
	cancel()
	if res := linetest.Within(t, blocked, "the call to end"); !errors.Is(res.Err, context.Canceled) {
		t.Errorf("call: %+v", res)
	}
	if cause := linetest.Within(t, b.Ended, "the server's handler to see the POST cancelled"); !errors.Is(cause, rpc.ErrClosed) {
		t.Errorf("the handler ended with %v", cause)
	}
	if res := call(t, c, "after"); res.Err != nil || res.Result.Echo != "after" {
		t.Errorf("a call after: %+v", res)
	}
}

// letOneGo lets one handler waiting at gate go, failing t when none takes it
// within the wait bound.
func letOneGo(t *testing.T, gate chan<- struct{}) {
	t.Helper()
	timer := time.NewTimer(linetest.WaitBound)
	defer timer.Stop()
	select {
	case gate <- struct{}{}:
	case <-timer.C:
		t.Fatalf("waited %v for a handler at the gate", linetest.WaitBound)
	}
}

// At most MaxInFlight POSTs are in flight at once; the others wait.
func TestDialHTTPMaxInFlight(t *testing.T) {
	rpctest.CheckNoLeak(t)
	const bound, calls = 2, 6
	var mu sync.Mutex
	inFlight, most := 0, 0
	entered := make(chan struct{}, calls)
	gate := make(chan struct{})
	srv, client := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		entered <- struct{}{}
		<-gate
		mu.Lock()
		inFlight--
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	c := dialHTTP(t, srv.URL, client, &transport.HTTPClientOptions{MaxInFlight: bound})
	done := make(chan error, calls)
	for range calls {
		go func() {
			_, err := linetest.Echo.Call(t.Context(), c, linetest.EchoParams{})
			done <- err
		}()
	}
	for i := range calls {
		linetest.Within(t, entered, "a POST to arrive")
		if i >= bound-1 {
			letOneGo(t, gate) // let one go: another may come in
		}
	}
	for range bound - 1 {
		letOneGo(t, gate)
	}
	for range calls {
		if err := linetest.Within(t, done, "a call to end"); !errors.Is(err, &rpc.Error{Code: transport.CodeHTTPError}) {
			t.Errorf("call: %v", err) // a 204 answers no call
		}
	}
	if most != bound {
		t.Errorf("%d POSTs in flight at most, want %d", most, bound)
	}
}

// BenchmarkDialHTTPCall makes a typed call over DialHTTP's Conn to an
// HTTPHandler through a loopback httptest.Server, one after another and
// many at once.
func BenchmarkDialHTTPCall(b *testing.B) {
	srv := httptest.NewServer(transport.NewHTTPHandler(&rpc.Options{Handler: linetest.EchoRegistry()}))
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: transport.DefaultHTTPMaxInFlight}
	defer tr.CloseIdleConnections()
	c, err := transport.DialHTTP(srv.URL, &transport.HTTPClientOptions{Client: &http.Client{Transport: tr}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	call := func(b *testing.B) {
		if _, err := linetest.Echo.Call(context.Background(), c, linetest.EchoParams{Text: "hello"}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("sequential", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			call(b)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				call(b)
			}
		})
	})
}

// Over HTTP/2 and TLS the same: calls at once on one connection, a body
// bounded by ReadTimeout's deadline (which HTTP/2 supports too).
func TestDialHTTPOverHTTP2(t *testing.T) {
	rpctest.CheckNoLeak(t)
	h := transport.NewHTTPHandler(&rpc.Options{Handler: httpRegistry(nil)})
	impatient := transport.NewHTTPHandler(nil)
	impatient.ReadTimeout = 50 * time.Millisecond // the pace of nothing here: the test waits for the answer
	var protos sync.Map
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos.Store(r.Proto, true)
		if r.URL.Path == "/impatient" {
			impatient.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	client := srv.Client()
	t.Cleanup(func() {
		client.CloseIdleConnections()
		closeServer(t, srv)
	})
	c := dialHTTP(t, srv.URL, client, nil)
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			text := fmt.Sprint("h2 ", i)
			res, err := linetest.Echo.Call(t.Context(), c, linetest.EchoParams{Text: text})
			if err == nil && res.Echo != text {
				err = fmt.Errorf("answered %q", res.Echo)
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := linetest.Within(t, errs, "a call over HTTP/2"); err != nil {
			t.Error(err)
		}
	}
	if _, ok := protos.Load("HTTP/2.0"); !ok {
		t.Error("no request came over HTTP/2")
	}

	// A body that stalls gets its 408 while the client still sends it.
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte(`{"jsonrpc":"2.0","id":1,`)) // and the rest never
	got := bounded(t, "the answer to a stalled body", func() string {
		resp, err := client.Post(srv.URL+"/impatient", "application/json", pr)
		if err != nil {
			return err.Error()
		}
		resp.Body.Close()
		return resp.Proto + " " + resp.Status
	})
	if got != "HTTP/2.0 408 Request Timeout" {
		t.Errorf("a stalled body: %s, want HTTP/2.0 408 Request Timeout", got)
	}
}
