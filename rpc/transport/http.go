package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/rpc"
)

// DefaultHTTPReadTimeout is how long an HTTPHandler gives a request's
// body to arrive when HTTPHandler.ReadTimeout is zero: go-ethereum's
// HTTP server allows as long. At that pace a body of the default
// MaxFrameSize (64 MiB) must come at 2.2 MiB/s.
const DefaultHTTPReadTimeout = 30 * time.Second

// ErrHTTPCallback is the error of a call or notification that a handler
// served by an HTTPHandler sends to its peer: over HTTP, the response to
// the POST is the only way back to the client, and it carries answers
// only.
var ErrHTTPCallback = errors.New("transport: a handler served over HTTP cannot call or notify its peer")

// HTTPHandler serves JSON-RPC 2.0 over HTTP POST, in the manner of
// jrpc2's jhttp.Bridge and go-ethereum's HTTP server: the body of each
// POST is one frame — a request, a notification, or a batch (a JSON
// array of them) — and the body of its response is the answer:
//
//	http.Handle("/rpc", transport.NewHTTPHandler(&rpc.Options{Handler: reg}))
//
// Each POST is served by a Conn of its own (rpc.NewConn over the body and
// a buffer), with the handler's Options, so a request over HTTP is
// decoded, bounded, ordered, intercepted and answered as it is over any
// stream; the Conn has read the whole body before any handler runs, and
// ServeHTTP writes the answer once every handler has returned. Batches
// and rpc.Options.AnswerInvalid are always on, since an HTTP client waits
// for an answer to whatever it sent.
//
// The statuses of a response:
//   - 200, with Content-Type application/json: the answer. It is the
//     response object of a request, the array of a batch's responses, or
//     one error object with a null id for a body that is not JSON, or is
//     empty (rpc.CodeParseError), or is not a valid request, an empty
//     array included (rpc.CodeInvalidRequest), as JSON-RPC 2.0's examples
//     show. An error a handler returns is an answer like any other.
//   - 204, without a body: nothing to answer: the body holds a
//     notification, a batch of notifications, or responses.
//   - 413: the body is longer than MaxFrameSize, by its Content-Length or
//     as read; nothing of it was served and the rest is not read. The body
//     is a CodeInvalidRequest error with a null id.
//   - 408: the body did not arrive within ReadTimeout; 400: it was cut
//     (the client hung up, the connection failed). Nothing of it was
//     served; the body is a CodeParseError error with a null id.
//   - 503: the request's context had ended by the time the answers were
//     ready (see below): some may have been cut short. The body is a
//     CodeInternalError error with a null id.
//   - 500: the Conn's answer was not one JSON value, which ServeHTTP
//     checks rather than send; a CodeInternalError error with a null id,
//     logged to Options.Logger.
//   - 405, with Allow: POST: any method but POST. GET included: JSON-RPC
//     over HTTP has no GET here, nor does it answer CORS preflights (a
//     middleware in front does).
//   - 415: a Content-Type other than application/json, or with a charset
//     other than UTF-8 (JSON's), or none.
//
// # Contexts
//
// Each POST's Conn has the request's context as its BaseContext: its
// values (what an authentication middleware put there) reach every
// handler. When it ends — the client went away, http.Server.Close, a
// middleware's deadline — the Conn is closed: the handlers' contexts end,
// with rpc.ErrClosed as their cause, and ServeHTTP returns once they have
// returned (a handler that ignores its context holds it up).
//
// A handler cannot reach its client: its calls and notifications
// (through rpc.ConnFromContext) fail with ErrHTTPCallback, and the calls
// of an rpc.Batch, which no interceptor sees, with rpc.ErrInputEnded;
// nothing of them is sent.
//
// # Bounds
//
// A slow body is bounded by ReadTimeout; http.Server's own timeouts apply
// besides (ReadHeaderTimeout to the headers; WriteTimeout, IdleTimeout).
// One POST makes the server hold at most its body as its Conn reads it,
// MaxFrameSize (4× that while a body of invalid UTF-8 is repaired), and
// its answer, MaxFrameSize (a longer response is replaced by a
// CodeInternalError, a batch's array kept within it, as a Conn does);
// the handlers of a batch are bounded as a Conn's are
// (MaxConcurrentRequests running, twice that alive, MaxWaiting and
// MaxWaitingBytes waiting), with what each handler holds. The POSTs
// served at once are http.Server's to bound: it has no bound of its own,
// and netutil.LimitListener bounds its connections, so its HTTP/1
// requests.
//
// ReadTimeout must not be changed once ServeHTTP has been called. An
// HTTPHandler is safe for concurrent use.
type HTTPHandler struct {
	// ReadTimeout bounds the time a request's body takes to arrive, from
	// when ServeHTTP starts reading it: a client that dribbles its body
	// is answered 408 then. It is set as the connection's read deadline
	// with http.ResponseController, and so replaces, for the body, the
	// deadline of http.Server.ReadTimeout; net/http clears it once the
	// body is read. Zero means DefaultHTTPReadTimeout; a negative value
	// sets none, which leaves the body to http.Server.ReadTimeout. A
	// ResponseWriter that cannot set a deadline (httptest's
	// ResponseRecorder, a wrapper without Unwrap) is left without one.
	ReadTimeout time.Duration

	opts rpc.Options // the Options of every POST's Conn, but BaseContext (see NewHTTPHandler)
	max  int         // MaxFrameSize, resolved
	// tooLarge is the body of a 413, which names the bound.
	tooLarge []byte
}

// NewHTTPHandler returns an HTTPHandler that serves every POST with a
// Conn made with a copy of opts (nil means all defaults, and a nil
// Handler answers every request CodeMethodNotFound): changing opts
// afterwards changes nothing. In that copy Batches and AnswerInvalid are
// on, the Framing is NewlineFraming (HTTP delimits the frame), each
// Conn's BaseContext is its request's context, and the handlers' calls
// are refused with ErrHTTPCallback (opts.InterceptCall, when set, wraps
// the refusal, so it sees them). MaxFrameSize bounds the body as it does
// a frame.
func NewHTTPHandler(opts *rpc.Options) *HTTPHandler {
	h := &HTTPHandler{}
	if opts != nil {
		h.opts = *opts
	}
	h.opts.Framing = rpc.NewlineFraming
	h.opts.Batches = true
	h.opts.AnswerInvalid = true
	h.opts.BaseContext = nil // each request's own, set by ServeHTTP
	refuse := func(rpc.CallFunc) rpc.CallFunc { return refuseCallback }
	if user := h.opts.InterceptCall; user != nil {
		refuse = func(rpc.CallFunc) rpc.CallFunc { return user(refuseCallback) }
	}
	h.opts.InterceptCall = refuse
	h.max = h.opts.MaxFrameSize
	if h.max <= 0 {
		h.max = rpc.DefaultMaxFrameSize
	}
	h.tooLarge = errorBody(rpc.CodeInvalidRequest, "invalid request: the body is longer than the maximum frame size ("+strconv.Itoa(h.max)+" bytes)")
	return h
}

// refuseCallback is the innermost step of a handler's calls over HTTP: it
// sends nothing.
func refuseCallback(context.Context, *rpc.Call) error { return ErrHTTPCallback }

// The bodies of the answers ServeHTTP makes itself, all with a null id.
var (
	emptyBody    = errorBody(rpc.CodeParseError, "parse error: the body is empty")
	newlineBody  = errorBody(rpc.CodeParseError, "parse error: a line feed in a string")
	timeoutBody  = errorBody(rpc.CodeParseError, "parse error: the body did not arrive in time")
	cutBody      = errorBody(rpc.CodeParseError, "parse error: the body was cut")
	endedBody    = errorBody(rpc.CodeInternalError, "internal error: the HTTP request ended before its answer was ready")
	notOneValue  = errorBody(rpc.CodeInternalError, "internal error: the answer is not one JSON value")
	notPostText  = "405 method not allowed: JSON-RPC is served by POST"
	mediaTypeErr = "415 unsupported media type: the body must be application/json"
)

// errorBody returns a response with a null id and the error code, msg.
func errorBody(code rpc.Code, msg string) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":`)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = wire.AppendJSString(b, msg)
	return append(b, "}}"...)
}

// ServeHTTP serves the frame in r's body, and writes its answer; see
// HTTPHandler for the statuses.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, notPostText, http.StatusMethodNotAllowed)
		return
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		http.Error(w, mediaTypeErr, http.StatusUnsupportedMediaType)
		return
	}
	if r.ContentLength > int64(h.max) {
		writeBody(w, http.StatusRequestEntityTooLarge, h.tooLarge)
		return
	}
	if t := h.readTimeout(); t > 0 && r.ContentLength != 0 {
		// An error (http.ErrNotSupported) leaves the body to http.Server's
		// timeouts. An empty body has been read: net/http reads on, to see
		// the client hang up, and a deadline would end that read.
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(t))
	}
	body := &httpBody{r: http.MaxBytesReader(w, r.Body, int64(h.max)), blank: true}
	var out answers
	ctx := r.Context()
	opts := h.opts
	opts.BaseContext = ctx
	c := rpc.NewConn(body, &out, &opts)
	stop := context.AfterFunc(ctx, func() { c.Close() })
	c.Start()
	c.Wait() // reading the body ends by its deadline; the handlers' contexts, with ctx
	stop()

	// Wait has returned: the Conn's goroutines, which wrote body and out,
	// have exited.
	var maxBytes *http.MaxBytesError
	switch err := body.err; {
	case errors.As(err, &maxBytes):
		writeBody(w, http.StatusRequestEntityTooLarge, h.tooLarge)
	case err == errNewlineInString:
		writeBody(w, http.StatusOK, newlineBody)
	case errors.Is(err, os.ErrDeadlineExceeded):
		writeBody(w, http.StatusRequestTimeout, timeoutBody)
	case err != nil:
		writeBody(w, http.StatusBadRequest, cutBody)
	case ctx.Err() != nil:
		// Close cut the handlers short, and dropped the answers not yet
		// written: what out holds may not be all.
		writeBody(w, http.StatusServiceUnavailable, endedBody)
	case body.isBlank():
		writeBody(w, http.StatusOK, emptyBody) // the Conn skips a blank line; JSON-RPC answers it
	case out.frames > 1 || out.corrupt:
		// One frame in, one answer out: a lone frame has one answer, and
		// a batch one array. Should the Conn break that, the client gets
		// an error rather than a body that is not one JSON value.
		if log := h.opts.Logger; log != nil {
			log.Error("transport: the answer to a POST is not one JSON value", "frames", out.frames, "corrupt", out.corrupt)
		}
		writeBody(w, http.StatusInternalServerError, notOneValue)
	case len(out.b) == 0:
		w.WriteHeader(http.StatusNoContent)
	default:
		writeBody(w, http.StatusOK, out.b[:len(out.b)-1])
	}
}

func (h *HTTPHandler) readTimeout() time.Duration {
	if h.ReadTimeout == 0 {
		return DefaultHTTPReadTimeout
	}
	return h.ReadTimeout
}

// isJSON reports whether contentType is application/json, in UTF-8 when
// it names a charset.
func isJSON(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8") || strings.EqualFold(cs, "utf8")
}

// writeBody writes a response of status with the JSON body b.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b) // a client gone is nobody's to tell
}

// answers is the output of a POST's Conn: the frames it writes, which
// ServeHTTP reads once Wait has returned. The Conn writes from one
// goroutine at a time (its writing role), and Wait returns once they have
// all exited, so it needs no lock.
type answers struct {
	b       []byte // the answers kept, each ended by LF
	frames  int    // how many
	corrupt bool   // a frame was not a JSON object or array
	scanner wire.Scanner
}

// Write keeps the answers among the frames in p, each ended by LF (the
// Conn's frames are whole, and compact: no other LF). A request or a
// notification, which only a handler's Batch can write (the handlers'
// other calls are refused before they are), has nowhere to go, and is
// dropped: its calls fail when the body ends. Each frame is scanned, so
// that a 200's body is one JSON value whatever the Conn writes.
func (a *answers) Write(p []byte) (int, error) {
	var env wire.Envelope
	for rest := p; len(rest) > 0; {
		end := bytes.IndexByte(rest, '\n') + 1
		if end == 0 {
			end = len(rest)
		}
		f := rest[:end]
		rest = rest[end:]
		top, _, err := a.scanner.Scan(f, &env)
		switch {
		case err != nil || top != wire.Object && top != wire.Array:
			a.corrupt = true
			continue
		case top == wire.Array:
			wire.Elements(f, func(elem []byte) bool { // the first tells: a batch is all calls, or all answers
				a.scanner.Scan(elem, &env)
				return false
			})
		}
		if env.Method.Kind == wire.Absent {
			a.b = append(a.b, f...)
			a.frames++
		}
	}
	return len(p), nil
}

// errNewlineInString is the error of a body that holds a line feed in a
// string, which no JSON does.
var errNewlineInString = errors.New("transport: a line feed in a JSON string")

// httpBody is the body of a POST as its Conn reads it: one line, so that
// a pretty-printed body (its JSON white space holding line feeds) is one
// frame, and a body of two values is not two. Each LF outside a string
// is read as a space, which is JSON white space as LF is, so the line is
// valid JSON exactly when the body is, and the same value; an LF inside a
// string, which JSON does not allow, ends the reading with
// errNewlineInString, once the rest is read (a body too long is one
// first). The body's end is read as LF, then io.EOF, so that
// the Conn serves the line (it drops a line that the input's end cuts). A
// read error is passed on: the line it cuts is dropped, unserved.
//
// It is read by the Conn's reader alone; err and blank are read by
// ServeHTTP once the Conn's goroutines have exited.
type httpBody struct {
	r        io.Reader
	inString bool // within a string, as JSON's lexer would be
	escaped  bool // within a string, after a backslash
	ended    int8 // 1: the body ended, the LF is to come; 2: it came
	err      error
	// blank: nothing but white space so far, as the Conn trims a line
	// (lines.TrimSpace). lead holds the first bytes of a character that
	// the last Read cut, when blank.
	blank bool
	lead  []byte
}

func (b *httpBody) Read(p []byte) (int, error) {
	switch {
	case b.err != nil:
		return 0, b.err
	case b.ended == 2 || len(p) == 0 && b.ended == 1:
		return 0, io.EOF
	case b.ended == 1:
		b.ended = 2
		p[0] = '\n'
		return 1, nil
	}
	n, err := b.r.Read(p)
	if b.blank {
		b.seeBlank(p[:n])
	}
	if !b.oneLine(p[:n]) {
		// Not JSON, but maybe too long too: 413 says so first, as for
		// any body. The rest is read into p, and dropped.
		b.err = errNewlineInString
		for err == nil {
			_, err = b.r.Read(p)
		}
		if err != io.EOF {
			b.err = err
		}
		return 0, b.err
	}
	switch {
	case err == io.EOF:
		b.ended = 1
	case err != nil:
		b.err = err
		return 0, err // the line is lost either way: the bytes may go too
	}
	return n, nil
}

// oneLine turns each LF outside a string in p into a space, following
// JSON's lexer from where the last call left it, and reports false at an
// LF inside a string. The lexer needs only '"' and '\', which never occur
// inside a multi-byte UTF-8 character, so a body of invalid UTF-8 (which
// the Conn repairs) is followed right too.
func (b *httpBody) oneLine(p []byte) bool {
	for i, c := range p {
		switch {
		case b.escaped:
			b.escaped = false
			if c == '\n' {
				return false
			}
		case b.inString:
			switch c {
			case '\\':
				b.escaped = true
			case '"':
				b.inString = false
			case '\n':
				return false
			}
		case c == '"':
			b.inString = true
		case c == '\n':
			p[i] = ' '
		}
	}
	return true
}

// seeBlank keeps blank true while p, after the lead of the last call,
// holds only white space.
func (b *httpBody) seeBlank(p []byte) {
	if len(b.lead) > 0 {
		k := min(len(p), utf8.UTFMax-len(b.lead))
		ch := append(b.lead, p[:k]...)
		if !utf8.FullRune(ch) { // k is all of p
			b.lead = ch
			return
		}
		_, size := utf8.DecodeRune(ch)
		if len(lines.TrimSpace(ch[:size])) > 0 {
			b.blank = false
			return
		}
		p = p[size-len(b.lead):]
		b.lead = b.lead[:0]
	}
	t := lines.TrimSpace(p)
	switch {
	case len(t) == 0:
	case len(t) < utf8.UTFMax && !utf8.FullRune(t) && &t[len(t)-1] == &p[len(p)-1]:
		// A character the end of p cut, maybe white space.
		b.lead = append(b.lead[:0], t...)
	default:
		b.blank = false
	}
}

// isBlank reports whether the whole body was white space: the Conn then
// read a blank line, and answered nothing. A character the body's end
// cut is invalid UTF-8, which the Conn reads as U+FFFD.
func (b *httpBody) isBlank() bool { return b.blank && len(b.lead) == 0 }
