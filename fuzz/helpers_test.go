package fuzz

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// cutReader serves data in reads whose sizes the fuzzer chose (see
// rpctest.Cut); with eofWithLast the last bytes come with io.EOF.
func cutReader(data, cuts []byte, eofWithLast bool) *rpctest.ChunkReader {
	r := rpctest.Cut(data, cuts)
	r.EOFWithLast = eofWithLast
	return r
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
// goroutine: drops, reported by the goroutine that reads, in input order;
// notifications, handled in input order (each runs alone, in its turn);
// and answers, whose order the Conn does not promise (they are compared
// as a multiset). Drops and notifications each keep their order, but the
// test does not hold them to an order with each other.
type connLog struct {
	mu      sync.Mutex
	drops   []string
	notes   []string
	answers []string
}

func (l *connLog) drop(s string) {
	l.mu.Lock()
	l.drops = append(l.drops, s)
	l.mu.Unlock()
}

func (l *connLog) note(s string) {
	l.mu.Lock()
	l.notes = append(l.notes, s)
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
	return strings.Join(l.drops, "\n") + "\n--- notifications:\n" + strings.Join(l.notes, "\n") +
		"\n--- answers:\n" + strings.Join(a, "\n")
}

func (l *connLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.drops) + len(l.notes) + len(l.answers)
}
