package fuzz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/rpc"
)

// chunkReader delivers data in chunks whose sizes the fuzzer chose: each
// byte of cuts is the size of the next Read (0 is an empty read, never two
// in a row); once cuts is used up, the rest comes in one Read. With
// eofWithLast the last bytes come together with io.EOF.
type chunkReader struct {
	data        []byte
	cuts        []byte
	eofWithLast bool
	lastEmpty   bool
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(r.data)
	if len(r.cuts) > 0 {
		n = int(r.cuts[0])
		r.cuts = r.cuts[1:]
		if n == 0 && r.lastEmpty {
			n = 1
		}
	}
	n = min(n, len(r.data), len(p))
	r.lastEmpty = n == 0
	copy(p, r.data[:n])
	r.data = r.data[n:]
	if len(r.data) == 0 && r.eofWithLast {
		return n, io.EOF
	}
	return n, nil
}

// recorder is an io.Writer that keeps every frame written to it. A Conn
// may batch frames into one Write, but never splits one across Writes:
// a Write that does not end a line is recorded as a problem.
type recorder struct {
	mu      sync.Mutex
	frames  [][]byte
	problem string
	onF     func([]byte)
}

func (w *recorder) Write(p []byte) (int, error) {
	w.mu.Lock()
	if len(p) == 0 || p[len(p)-1] != '\n' {
		w.problem = fmt.Sprintf("a Write of %q does not end a frame", p)
	}
	var got [][]byte
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			i = len(rest) - 1
		}
		b := append([]byte(nil), rest[:i+1]...)
		got = append(got, b)
		rest = rest[i+1:]
	}
	w.frames = append(w.frames, got...)
	on := w.onF
	w.mu.Unlock()
	if on != nil {
		for _, b := range got {
			on(b)
		}
	}
	return len(p), nil
}

// all returns the frames written so far and fails t if a Write split one.
func (w *recorder) all(t *testing.T) [][]byte {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.problem != "" {
		t.Fatal(w.problem)
	}
	return append([][]byte(nil), w.frames...)
}

// Class is how the wire rules (rpc/doc.go, docs/wire.md §2.2) classify a line.
type class int

// waitBound bounds every wait of these tests for an event: a failure
// bound, generous for a loaded machine, never a pace.
const waitBound = 30 * time.Second

const (
	classBlank class = iota
	classMalformed
	classNotObject
	classTooDeep
	classRequest
	classResponse
	classNotification
	classUnclassified
)

// classified is the oracle's view of one line, computed independently of
// the Conn from the wire scanner and the wire rules.
type classified struct {
	class  class
	line   []byte // trimmed, UTF-8 repaired
	id     wire.Value
	method []byte // unescaped
	params []byte
	env    wire.Envelope
}

// classify applies the wire rules to one line (LF excluded).
func classify(raw []byte) classified {
	line := lines.TrimSpace(raw)
	if len(line) == 0 {
		return classified{class: classBlank}
	}
	line = append([]byte(nil), line...)
	if !utf8.Valid(line) {
		line = lines.AppendValidUTF8(nil, line)
	}
	var s wire.Scanner
	var env wire.Envelope
	top, depth, err := s.Scan(line, &env)
	c := classified{line: line, env: env}
	switch {
	case err != nil:
		c.class = classMalformed
		return c
	case top != wire.Object:
		c.class = classNotObject
		return c
	case depth > rpc.MaxDepth:
		c.class = classTooDeep
		return c
	}
	hasID := env.ID.Kind == wire.String || env.ID.Kind == wire.Number
	hasMethod := env.Method.Kind == wire.String
	c.id, c.params = env.ID, env.Params.Raw
	if hasMethod {
		c.method = wire.AppendUnquote(nil, env.Method.Raw)
	}
	switch {
	case hasID && hasMethod:
		c.class = classRequest
	case hasID:
		c.class = classResponse
	case hasMethod:
		c.class = classNotification
	default:
		c.class = classUnclassified
	}
	return c
}

// splitLines cuts data at LF; the last element is the unterminated tail.
func splitLines(data []byte) (complete [][]byte, tail []byte) {
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return complete, data
		}
		complete = append(complete, data[:i])
		data = data[i+1:]
	}
}

// checkResponseFrame reports what is wrong with a frame a Conn wrote in
// answer to a request, or "" when it is one well-formed JSON-RPC response:
// one LF-terminated line, an object with exactly jsonrpc "2.0", id and one
// of result or error (an object with an integer code, a string message and
// optional data).
func checkResponseFrame(frame []byte) (id []byte, isError bool, problem string) {
	if len(frame) == 0 || frame[len(frame)-1] != '\n' || bytes.IndexByte(frame, '\n') != len(frame)-1 {
		return nil, false, "not one LF-terminated line"
	}
	body := frame[:len(frame)-1]
	if !utf8.Valid(body) || !json.Valid(body) {
		return nil, false, "not valid UTF-8 JSON"
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, false, "not an object"
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return nil, false, "jsonrpc is not \"2.0\""
	}
	if m["id"] == nil {
		return nil, false, "no id"
	}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if hasResult == hasError || len(m) != 3 {
		return nil, false, "not exactly jsonrpc, id and one of result or error"
	}
	if hasError {
		var e map[string]json.RawMessage
		if json.Unmarshal(m["error"], &e) != nil {
			return nil, false, "error is not an object"
		}
		var code int64
		var msg string
		if json.Unmarshal(e["code"], &code) != nil || json.Unmarshal(e["message"], &msg) != nil || e["message"][0] != '"' {
			return nil, false, "error without an integer code and a string message"
		}
		for k := range e {
			if k != "code" && k != "message" && k != "data" {
				return nil, false, "error has member " + k
			}
		}
	}
	// The id as written, byte for byte (the scanner gives the exact token).
	var s wire.Scanner
	var env wire.Envelope
	s.Scan(body, &env)
	return env.ID.Raw, hasError, ""
}

// connLog records what a Conn did with its input, safely from any
// goroutine: drops and notifications, which happen on the read loop in
// input order, and answers, whose order the Conn does not promise (they
// are compared as a multiset).
type connLog struct {
	mu      sync.Mutex
	ordered []string
	answers []string
}

func (l *connLog) event(s string) {
	l.mu.Lock()
	l.ordered = append(l.ordered, s)
	l.mu.Unlock()
}

func (l *connLog) answer(s string) {
	l.mu.Lock()
	l.answers = append(l.answers, s)
	l.mu.Unlock()
}

// String renders the log with the answers sorted.
func (l *connLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := append([]string(nil), l.answers...)
	sort.Strings(a)
	return strings.Join(l.ordered, "\n") + "\n--- answers:\n" + strings.Join(a, "\n")
}

func (l *connLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ordered) + len(l.answers)
}
