package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/rpc"
)

// CodeHTTPError is the code of the *rpc.Error that ends a call made over
// DialHTTP's Conn when its POST brought no answer to it: the POST failed
// (its message is "http: " and the error of http.Client.Do), or its
// response held none: a status without a JSON-RPC body ("http: 503
// Service Unavailable"), or a body without an answer to the call, a body
// that is not JSON-RPC, one longer than MaxFrameSize ("http: 200 OK: "
// and why). When a response came, the error's Data is {"status": N},
// its status code. It is in the range JSON-RPC 2.0 leaves to
// implementations, clear of CodeOverloaded and of the codes MCP and LSP
// use.
const CodeHTTPError rpc.Code = -32060

// DefaultHTTPMaxInFlight is how many POSTs a Conn of DialHTTP's has in
// flight at once when HTTPClientOptions.MaxInFlight is zero.
const DefaultHTTPMaxInFlight = 64

// HTTPClientOptions configure DialHTTP. A nil *HTTPClientOptions means
// all defaults.
type HTTPClientOptions struct {
	// Options configure the Conn; nil means all defaults. Over HTTP some
	// have no use, and are replaced: Framing (each POST is one frame),
	// AnswerInvalid (a client answers nothing), Cancellation (a call
	// whose context ends cancels its POST instead: see DialHTTP), and
	// Handler is never called (the server cannot call the client).
	// MaxFrameSize bounds the frames sent and the bodies of the
	// responses read.
	Options *rpc.Options

	// Client sends the POSTs; nil means http.DefaultClient. Its Timeout,
	// if any, bounds each POST; its Transport is where headers that
	// change go (a token that is refreshed). A busy Conn keeps up to
	// MaxInFlight POSTs in flight: a Transport that keeps fewer idle
	// connections to a host (http.DefaultTransport keeps 2) opens and
	// closes the others.
	Client *http.Client

	// Header is added to the headers of every POST (Authorization, say).
	// A Content-Type or Accept in it replaces application/json. It must
	// not be changed once DialHTTP has been called.
	Header http.Header

	// MaxInFlight bounds the POSTs in flight at once; zero means
	// DefaultHTTPMaxInFlight. At the bound the Conn's writing waits for
	// one to end, and its calls and notifications queue up behind it, as
	// they do behind a stream that is slow to take them (see
	// rpc.Options.MaxWriteQueue).
	MaxInFlight int
}

// DialHTTP returns a started Conn whose calls and notifications are each
// POSTed to endpoint, an http or https URL, as one frame (a
// Batch as one array), with Content-Type application/json; the answers
// in the bodies of the responses settle the calls, whatever their order,
// so a typed call is a typed call over HTTP too:
//
//	conn, err := transport.DialHTTP("https://example.com/rpc", nil)
//	…
//	res, err := Add.Call(ctx, conn, AddParams{A: 2, B: 3})
//	conn.Close()
//
// Nothing is connected until the first call: DialHTTP only checks
// endpoint.
// The POSTs run concurrently, each on a goroutine of its own, at most
// MaxInFlight at once. A response's body may be one response object or
// an array of them (pretty-printed or not); what answers none of the
// POST's calls is ignored. A call that its POST leaves unanswered — the
// POST failed, or its response holds no answer to it — ends at once with
// an *rpc.Error of CodeHTTPError that says why, or with the error of the
// body's one error object with a null id (the server could not read the
// request: NewHTTPHandler's 413, say). A notification's POST has nobody
// to tell of a failure: it is logged to Options.Logger, at error level.
//
// A call whose context ends before its answer cancels its POST (the
// server sees the request's context end: on an HTTPHandler, the handler's
// context ends too). Close and Shutdown, once the Conn has ended, cancel
// every POST in flight, and a POST's goroutine exits once its
// http.Client call has returned; the Conn's Wait waits for these
// goroutines too while its reader is waiting for answers, as it is
// whenever it has none to read. One goroutine waits for the Conn to end,
// besides the Conn's own and the POSTs'; it exits once it has cancelled
// them.
//
// Shutdown does not wait for the POSTs in flight: for the Conn, a frame
// is written once its POST has started, and its end is the same whether
// Close or Shutdown brought it. A notification whose POST is still in
// flight then is cancelled, with nothing logged: a caller that must know
// that it was delivered watches the POSTs in the Client's Transport (as
// cmd/rpcurl does) before Shutdown.
func DialHTTP(endpoint string, opts *HTTPClientOptions) (*rpc.Conn, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("transport: DialHTTP: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("transport: DialHTTP: %q is not an http or https URL", u.Redacted())
	}
	if opts == nil {
		opts = &HTTPClientOptions{}
	}
	var o rpc.Options
	if opts.Options != nil {
		o = *opts.Options
	}
	o.Framing = rpc.NewlineFraming
	o.AnswerInvalid = false
	o.Cancellation = &httpCancellation
	o.Handler = nil

	h := &httpClient{
		url:      u.String(),
		client:   opts.Client,
		header:   opts.Header,
		max:      o.MaxFrameSize,
		log:      o.Logger,
		feed:     make(chan []byte),
		inFlight: make(map[wire.IDKey]*post),
	}
	if h.client == nil {
		h.client = http.DefaultClient
	}
	if h.max <= 0 {
		h.max = rpc.DefaultMaxFrameSize
	}
	n := opts.MaxInFlight
	if n <= 0 {
		n = DefaultHTTPMaxInFlight
	}
	h.slots = make(chan struct{}, n)
	h.ctx, h.cancel = context.WithCancelCause(context.Background())

	c := rpc.NewConn(h, h, &o)
	c.Start()
	go h.cancelWhenEnded(c)
	return c, nil
}

// httpCancellation is the cancellation of DialHTTP's Conns: a call whose
// context ends has its Conn write a notification of cancelMethod, which
// its httpClient takes to cancel the call's POST and never sends.
var httpCancellation = rpc.CancelPolicy{
	Method: cancelMethod,
	ParseParams: func(json.RawMessage) (json.RawMessage, string, error) {
		return nil, "", errors.New("transport: a cancellation from an HTTP server") // never fed: see answers
	},
	Params: func(id json.RawMessage, _ error) any { return id },
}

// cancelMethod is the method of httpCancellation's notification, whose
// params are the id of the call abandoned.
const cancelMethod = "linerpc/http/cancel"

// httpClient is the stream of a Conn of DialHTTP's: the frames the Conn
// writes are POSTed, and the answers in the responses are read back, each
// an LF-terminated line.
//
// Invariants: every POST goroutine is counted in posts, and is started,
// under mu, only while ctx lives, so that Read's wait for posts, which
// comes after ctx's end, waits for them all; a post is in inFlight, by
// the id of each of its calls, from before its goroutine starts until it
// ends, and holds a token of slots as long.
type httpClient struct {
	url    string
	client *http.Client
	header http.Header
	max    int
	log    *slog.Logger

	// ctx is the parent of every POST's context; cancelWhenEnded cancels
	// it, under mu, once the Conn has ended.
	ctx    context.Context
	cancel context.CancelCauseFunc
	slots  chan struct{} // a token per POST in flight
	posts  sync.WaitGroup
	// feed hands an answer, an LF-terminated line, from a POST's
	// goroutine to Read, which holds it in line until it has been read.
	feed chan []byte
	line []byte

	// scanner reads the frames to send: Write's alone (the Conn writes
	// from one goroutine at a time).
	scanner wire.Scanner

	mu       sync.Mutex
	inFlight map[wire.IDKey]*post
}

// post is one frame on its way: the frame, the ids of its calls (raw, as
// the frame has them), and how to cancel its POST.
type post struct {
	frame  []byte
	ids    []wire.Value
	cancel context.CancelFunc
}

// cancelWhenEnded waits for the Conn to end, then cancels every POST and
// ends Read and Write.
func (h *httpClient) cancelWhenEnded(c *rpc.Conn) {
	<-c.Done()
	h.mu.Lock()
	h.cancel(rpc.ErrClosed)
	h.mu.Unlock()
}

// Read returns the answers the POSTs brought, line after line. Once the
// Conn has ended, it waits for the POSTs' goroutines and returns io.EOF:
// Wait, which waits for a Read in progress, then waits for them too.
func (h *httpClient) Read(p []byte) (int, error) {
	for len(h.line) == 0 {
		select {
		case h.line = <-h.feed:
		case <-h.ctx.Done():
			h.posts.Wait()
			return 0, io.EOF
		}
	}
	n := copy(p, h.line)
	h.line = h.line[n:]
	return n, nil
}

// Write POSTs each frame of p, each on a goroutine of its own; it waits
// for a free slot when MaxInFlight are in flight. A frame of
// httpCancellation cancels a POST instead.
func (h *httpClient) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		end := bytes.IndexByte(rest, '\n') + 1
		if end == 0 {
			end = len(rest)
		}
		if err := h.send(rest[:end]); err != nil {
			return len(p) - len(rest), err
		}
		rest = rest[end:]
	}
	return len(p), nil
}

// send POSTs one frame (LF-terminated, as the Conn writes it).
func (h *httpClient) send(frame []byte) error {
	frame = bytes.Clone(bytes.TrimSuffix(frame, []byte{'\n'})) // the Conn reuses p
	var env wire.Envelope
	top, _, err := h.scanner.Scan(frame, &env)
	if err != nil {
		return fmt.Errorf("transport: a frame to POST: %w", err) // the Conn writes valid JSON
	}
	pt := &post{frame: frame}
	switch top {
	case wire.Object:
		switch env.Class() {
		case wire.Request:
			pt.addID(&env)
		case wire.Notification:
			if isMethod(env.Method, cancelMethod) {
				h.cancelPost(env.Params)
				return nil
			}
		default:
			return nil // an answer, which this Conn has nothing to make (it is fed answers only)
		}
	case wire.Array:
		var s wire.Scanner
		wire.Elements(frame, func(elem []byte) bool {
			s.Scan(elem, &env)
			pt.addID(&env)
			return true
		})
	}

	select {
	case h.slots <- struct{}{}:
	case <-h.ctx.Done():
		return context.Cause(h.ctx)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	pt.cancel = cancel
	h.mu.Lock()
	if err := h.ctx.Err(); err != nil {
		h.mu.Unlock()
		cancel()
		<-h.slots
		return context.Cause(h.ctx)
	}
	for _, id := range pt.ids {
		h.inFlight[wire.KeyOfID(id)] = pt
	}
	h.posts.Add(1)
	h.mu.Unlock()
	go h.do(ctx, pt)
	return nil
}

// addID adds the id of the call env, if it is one.
func (pt *post) addID(env *wire.Envelope) {
	if env.Class() == wire.Request {
		pt.ids = append(pt.ids, env.ID)
	}
}

// isMethod reports whether the method member v is the string name.
func isMethod(v wire.Value, name string) bool {
	content, ok := wire.StringContent(v.Raw)
	return ok && string(content) == name
}

// cancelPost cancels the POST of the call whose id is the params of a
// cancel frame: its call was abandoned, and nobody waits for its answer.
// The cancel frame comes after the call's own (the Conn writes it once
// the call's frame has been taken, and Write takes frames in order), so
// its POST, if any, is in flight or over.
func (h *httpClient) cancelPost(id wire.Value) {
	h.mu.Lock()
	pt := h.inFlight[wire.KeyOfID(id)]
	h.mu.Unlock()
	if pt != nil {
		pt.cancel()
	}
}

// do POSTs pt, and hands what answers its calls to Read.
func (h *httpClient) do(ctx context.Context, pt *post) {
	defer func() {
		h.mu.Lock()
		for _, id := range pt.ids {
			if k := wire.KeyOfID(id); h.inFlight[k] == pt {
				delete(h.inFlight, k)
			}
		}
		h.mu.Unlock()
		pt.cancel()
		<-h.slots
		h.posts.Done()
	}()
	for _, line := range h.roundTrip(ctx, pt) {
		select {
		case h.feed <- line:
		case <-ctx.Done():
			return // abandoned, or the Conn ended: nobody reads
		}
	}
}

// roundTrip POSTs pt and returns the answers to its calls, one line each:
// those its response holds, and errors for the others. It returns none
// when ctx ends first (its calls were abandoned, or the Conn ended), and
// none for notifications.
func (h *httpClient) roundTrip(ctx context.Context, pt *post) [][]byte {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(pt.frame))
	if err != nil {
		return h.failed(pt, "http: "+err.Error(), 0)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range h.header {
		req.Header[k] = v
	}
	resp, err := h.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return h.failed(pt, "http: "+err.Error(), 0)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(h.max)+1))
	switch {
	case ctx.Err() != nil:
		return nil
	case err != nil:
		return h.failed(pt, "http: "+resp.Status+": reading the body: "+err.Error(), resp.StatusCode)
	case len(body) > h.max:
		return h.failed(pt, "http: "+resp.Status+": the body is longer than the maximum frame size ("+strconv.Itoa(h.max)+" bytes)", resp.StatusCode)
	}
	return h.answers(pt, resp, body)
}

// answers returns the answers to pt's calls that body holds, and, for
// the calls it does not answer, its one error with a null id, or an
// error that says what came instead.
func (h *httpClient) answers(pt *post, resp *http.Response, body []byte) [][]byte {
	if len(pt.ids) == 0 {
		if resp.StatusCode/100 != 2 && h.log != nil {
			h.log.Error("transport: the POST of a notification failed", "url", h.url, "status", resp.Status)
		}
		return nil
	}
	out := make([][]byte, 0, len(pt.ids))
	answered := make([]bool, len(pt.ids))
	var nullError []byte // the error of a response whose id is null
	take := func(v []byte, env *wire.Envelope, depth int, own bool) {
		switch {
		case depth > rpc.MaxDepth:
			return // the Conn would drop it: it answers nothing
		case env.Class() == wire.Response:
			key := wire.KeyOfID(env.ID)
			for i, id := range pt.ids {
				if !answered[i] && wire.KeyOfID(id) == key {
					answered[i] = true
					if !own {
						// A copy: the LF would go over what follows the element.
						v = append(make([]byte, 0, len(v)+1), v...)
					}
					out = append(out, append(v, '\n'))
					return
				}
			}
		case env.ID.Kind == wire.Null && env.Method.Kind == wire.Absent && env.Error.Kind != wire.Absent && nullError == nil:
			nullError = env.Error.Raw
		}
	}
	var s wire.Scanner
	var env wire.Envelope
	t := lines.TrimSpace(body)
	top, depth, err := s.Scan(t, &env)
	if err == nil {
		// Valid JSON has an LF only as white space: each answer becomes
		// one line.
		for i, c := range t {
			if c == '\n' {
				t[i] = ' '
			}
		}
		switch top {
		case wire.Object:
			take(t, &env, depth, true)
		case wire.Array:
			wire.Elements(t, func(elem []byte) bool {
				_, d, _ := s.Scan(elem, &env)
				take(elem, &env, d, false)
				return true
			})
		}
	}
	for i, id := range pt.ids {
		if answered[i] {
			continue
		}
		if nullError != nil {
			out = append(out, answerLine(id.Raw, nullError))
			continue
		}
		msg := "http: " + resp.Status
		if resp.StatusCode/100 == 2 {
			msg += ": the response holds no answer to the call"
		}
		out = append(out, errorLine(id.Raw, msg, resp.StatusCode))
	}
	return out
}

// failed returns an answer with CodeHTTPError and msg to each of pt's
// calls (Data {"status": status}, when a response came), and logs the
// failure of a POST of notifications.
func (h *httpClient) failed(pt *post, msg string, status int) [][]byte {
	if len(pt.ids) == 0 {
		if h.log != nil {
			h.log.Error("transport: the POST of a notification failed", "url", h.url, "error", msg)
		}
		return nil
	}
	out := make([][]byte, len(pt.ids))
	for i, id := range pt.ids {
		out[i] = errorLine(id.Raw, msg, status)
	}
	return out
}

// errorLine returns a response with the id and a CodeHTTPError error.
func errorLine(id []byte, msg string, status int) []byte {
	e := []byte(`{"code":`)
	e = strconv.AppendInt(e, int64(CodeHTTPError), 10)
	e = append(e, `,"message":`...)
	e = wire.AppendJSString(e, msg)
	if status != 0 {
		e = strconv.AppendInt(append(e, `,"data":{"status":`...), int64(status), 10)
		e = append(e, '}')
	}
	return answerLine(id, append(e, '}'))
}

// answerLine returns a response with the id and the error object e.
func answerLine(id, e []byte) []byte {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	b = append(append(b, `,"error":`...), e...)
	return append(b, "}\n"...)
}
