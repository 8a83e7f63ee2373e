package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
)

const checkUsage = `Usage: dshrpc check [--strict] [--max-frame-size N] [FILE|-]...

Read transcripts and report every frame that breaks the wire contract
(docs/wire.md §2-§6), with its line number, as it is found; then a summary
per file, and a total when there are several. With no FILE, or "-", read
stdin. A file holds one of:

  - raw frames, one JSON-RPC line each (directions are then inferred);
  - a transcript: {"dir":"c2s"|"s2c","frame":"<the exact line>"} per line,
    the format of testdata/transcripts and of 'dshrpc tap' logs (which add
    "t", a timestamp; "frame" may also be the frame as a JSON object).

Problems (each makes the exit status 1):
  malformed           a line that is not valid JSON, not an object, neither a
                      request, a response nor a notification; a frame longer
                      than the maximum frame size (a reader skips it); a bad
                      transcript line; an unterminated last line
  unknown-method      a method that the sender's side of the protocol lacks
  bad-payload         params or a result that do not decode or validate
                      (initialize params, prompt content, results, error
                      objects, notification params, event envelopes and data)
  unmatched-response  a response that answers no pending request
  unanswered-request  a request that got no response by the end
  seq-order           an event whose seq is not above the session's last one
Warnings (exit status 1 only with --strict):
  seq-gap             a session's events skip seqs (or do not start at 0)
  early-prompt        session/prompt before any initialize succeeded
  run-unfinished      a prompt was answered, but the transcript ends (without
                      a shutdown) before what a client's run awaits: the
                      receipt of the message, then the session's idle
                      (docs/wire.md §6.3)
  not-checked         a frame a tap log holds cut short ("truncated":true)

Memory is bounded whatever the size of the input: lines are read up to
twice the maximum frame size (transcript lines quote their frame), and the
tables of ids and sessions keep the latest 65536 entries (a request still
unanswered when it is forgotten is reported then).

Flags:
  --strict              warnings count as problems
  --max-frame-size N    the longest frame a reader accepts, in bytes
                        (default 67108864, the rpc default)
`

// Problem and warning kinds, as printed.
const (
	kMalformed  = "malformed"
	kUnknown    = "unknown-method"
	kBadPayload = "bad-payload"
	kUnmatched  = "unmatched-response"
	kUnanswered = "unanswered-request"
	kSeqOrder   = "seq-order"
	kSeqGap     = "seq-gap"
	kEarly      = "early-prompt"
	kUnfinished = "run-unfinished"
	kNotChecked = "not-checked"
)

// warningKinds do not fail a check unless --strict: the real runtime shows
// them in normal operation (a subagent child's first forwarded event has
// seq 2) or the contract leaves them to the runtime (HEAD accepts a prompt
// before initialize), or the transcript may just have been cut short.
var warningKinds = map[string]bool{kSeqGap: true, kEarly: true, kUnfinished: true, kNotChecked: true}

// checkTable bounds each of check's tables (pending requests, answered
// ids, sessions), so that a transcript of any length is checked in bounded
// memory.
const checkTable = 1 << 16

func checkCmd(e *env, args []string) int {
	fs := newFlagSet("check")
	strict := fs.Bool("strict", false, "")
	maxFrame := fs.Int("max-frame-size", rpc.DefaultMaxFrameSize, "")
	pos, code, err := parseArgs(e, "check", checkUsage, fs, args, true)
	if err != nil {
		return code
	}
	if *maxFrame <= 0 {
		return usageError(e, "check", fmt.Errorf("--max-frame-size must be positive, got %d", *maxFrame))
	}
	if len(pos) == 0 {
		pos = []string{"-"}
	}
	total := &report{}
	status, checked := exitOK, 0
	for _, name := range pos {
		label, in := "<stdin>", e.stdin
		if name != "-" {
			f, err := os.Open(name)
			if err != nil {
				fmt.Fprintf(e.stderr, "dshrpc check: %v\n", err)
				status = exitUsage
				continue
			}
			label, in = name, f
		}
		rep := &report{out: e.stdout, name: label}
		err := checkTranscript(in, rep, *maxFrame)
		if f, ok := in.(*os.File); ok && name != "-" {
			f.Close()
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "dshrpc check: reading %s: %v\n", label, err)
			status = exitUsage
			continue
		}
		rep.summary()
		total.addUp(rep)
		checked++
		if status == exitOK && (rep.problems() > 0 || *strict && rep.findings() > 0) {
			status = exitFailed
		}
	}
	if len(pos) > 1 {
		total.out, total.name = e.stdout, "total"
		total.format = fmt.Sprintf("%d %s", checked, plural(checked, "file"))
		total.summary()
	}
	return status
}

// report is the outcome of checking one transcript, or the total of
// several: findings are printed as they are found and only counted.
type report struct {
	out                              io.Writer
	name                             string
	format                           string // "raw frames", "transcript", "empty"
	lines, frames                    int
	requests, responses, notifs, bad int
	counts                           map[string]int // findings by kind
}

// add prints one finding at once.
func (r *report) add(line int, kind, format string, args ...any) {
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	r.counts[kind]++
	warn := ""
	if warningKinds[kind] {
		warn = "warning: "
	}
	fmt.Fprintf(r.out, "%s:%d: %s%s: %s\n", r.name, line, warn, kind, fmt.Sprintf(format, args...))
}

func (r *report) findings() int {
	n := 0
	for _, c := range r.counts {
		n += c
	}
	return n
}

func (r *report) problems() int {
	n := 0
	for k, c := range r.counts {
		if !warningKinds[k] {
			n += c
		}
	}
	return n
}

// addUp adds o's counts to r.
func (r *report) addUp(o *report) {
	r.lines += o.lines
	r.frames += o.frames
	r.requests += o.requests
	r.responses += o.responses
	r.notifs += o.notifs
	r.bad += o.bad
	for k, c := range o.counts {
		if r.counts == nil {
			r.counts = map[string]int{}
		}
		r.counts[k] += c
	}
}

// summary prints the summary line.
func (r *report) summary() {
	w := r.out
	p, wn := r.problems(), r.findings()-r.problems()
	fmt.Fprintf(w, "%s: %s, %d %s, %d %s (%d %s, %d %s, %d %s): ", r.name, r.format,
		r.lines, plural(r.lines, "line"), r.frames, plural(r.frames, "frame"), r.requests, plural(r.requests, "request"),
		r.responses, plural(r.responses, "response"), r.notifs, plural(r.notifs, "notification"))
	if p+wn == 0 {
		fmt.Fprintln(w, "ok")
		return
	}
	var kinds []string
	for k := range r.counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.counts[k]))
	}
	fmt.Fprintf(w, "%d %s, %d %s (%s)\n", p, plural(p, "problem"), wn, plural(wn, "warning"), strings.Join(parts, ", "))
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// The protocol's methods, by sender (docs/wire.md §1).
var (
	clientRequests      = map[string]bool{"initialize": true, "session/prompt": true, "shutdown": true}
	serverNotifications = map[string]bool{"session.event": true, "session.status": true, "subagent.started": true, "subagent.finished": true}
)

const (
	c2s = "c2s"
	s2c = "s2c"
)

// pending is a request waiting for its response.
type pending struct {
	line    int
	dir     string
	method  string
	id      string // as written
	session string // of a session/prompt
}

// run is a prompt whose reply gave a message id: what a client's Run then
// awaits (docs/wire.md §6.3) is the receipt of that message on the session,
// then the session's idle.
type run struct {
	line    int    // of the reply
	msgID   string // the message id of the reply
	receipt bool   // the receipt was seen
}

// sessionRuns is what check knows of one session's runs.
type sessionRuns struct {
	runs     []*run
	receipts []string // ids received before the reply named them (the receipt comes first)
}

// maxEarlyReceipts bounds the receipts kept per session for replies not
// yet read.
const maxEarlyReceipts = 64

// checker holds the state of a check across frames; every table is
// bounded by checkTable.
type checker struct {
	rep      *report
	maxFrame int
	scanner  wire.Scanner
	pending  *fifoMap[pendingKey, *pending]
	answered *fifoMap[pendingKey, int] // the line of the response
	seqs     *fifoMap[string, int64]   // per session: last seq seen
	runs     *fifoMap[string, *sessionRuns]
	initOK   bool // an initialize succeeded
	shutdown int  // line of the last c2s shutdown request, 0 if none
}

// checkTranscript reads a transcript or raw frames, checks every frame and
// reports to rep as it goes. It holds at most one line in memory: lines
// are read with the project's line reader, up to twice maxFrame bytes
// (a transcript line quotes its frame); a longer line is skipped unread.
func checkTranscript(in io.Reader, rep *report, maxFrame int) error {
	c := &checker{
		rep: rep, maxFrame: maxFrame,
		pending:  newFIFOMap[pendingKey, *pending](checkTable),
		answered: newFIFOMap[pendingKey, int](checkTable),
		seqs:     newFIFOMap[string, int64](checkTable),
		runs:     newFIFOMap[string, *sessionRuns](checkTable),
	}
	lineMax := 2*maxFrame + 4096
	lr := lines.NewReader(in, lineMax)
	wrapped, decided := false, false
	decide := func(raw []byte) {
		wrapped, decided = isTranscriptLine(raw), true
		if wrapped {
			c.rep.format = "transcript"
		} else {
			c.rep.format = "raw frames"
		}
	}
	for n := 1; ; n++ {
		ev, tail, err := lr.Next()
		if err != nil {
			if tail > 0 {
				c.rep.lines++
				c.rep.add(n, kMalformed, "unterminated last line (%d bytes): the reader discards it (docs/wire.md §2.1)", tail)
			}
			if err == io.EOF {
				break
			}
			return err
		}
		c.rep.lines++
		raw := ev.Line
		if !ev.Oversize && !decided {
			if len(lines.TrimSpace(raw)) == 0 {
				continue
			}
			decide(raw)
		}
		if ev.Oversize || !wrapped && len(raw) > maxFrame {
			if !decided {
				c.rep.format, decided = "raw frames", true
			}
			c.rep.frames++
			c.rep.bad++
			if wrapped {
				c.rep.add(n, kMalformed, "a transcript line of %d bytes, longer than twice the maximum frame size (%d): skipped unread", ev.Size, maxFrame)
			} else {
				c.rep.add(n, kMalformed, "a line of %d bytes, longer than the maximum frame size (%d): the reader skips it", ev.Size, maxFrame)
			}
			continue
		}
		if wrapped {
			c.transcriptLine(n, raw)
		} else {
			c.frame(n, "", raw)
		}
	}
	if !decided {
		c.rep.format = "empty"
	}
	c.finish()
	return nil
}

// isTranscriptLine tells a transcript line from a raw frame: an object
// with dir and frame members and none of a frame's own.
func isTranscriptLine(raw []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	_, dir := m["dir"]
	_, frame := m["frame"]
	_, method := m["method"]
	_, rpc := m["jsonrpc"]
	return dir && frame && !method && !rpc
}

// transcriptLine unwraps one line of a transcript or tap log.
func (c *checker) transcriptLine(n int, raw []byte) {
	if len(lines.TrimSpace(raw)) == 0 {
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		c.rep.add(n, kMalformed, "not a transcript line (want {\"dir\":\"c2s\"|\"s2c\",\"frame\":...}): %s", excerpt(raw))
		return
	}
	var dir string
	if json.Unmarshal(m["dir"], &dir) != nil || dir != c2s && dir != s2c {
		c.rep.add(n, kMalformed, "transcript line without dir \"c2s\" or \"s2c\": %s", excerpt(raw))
		return
	}
	var frame []byte
	var s string
	switch fr := bytes.TrimSpace(m["frame"]); {
	case len(fr) == 0:
		c.rep.add(n, kMalformed, "transcript line without frame: %s", excerpt(raw))
		return
	case fr[0] == '"':
		if json.Unmarshal(fr, &s) != nil {
			c.rep.add(n, kMalformed, "transcript frame is not a valid JSON string: %s", excerpt(raw))
			return
		}
		frame = []byte(s)
	default:
		frame = fr // the frame itself, as JSON
	}
	var truncated bool
	json.Unmarshal(m["truncated"], &truncated)
	if truncated {
		var size int64
		json.Unmarshal(m["size"], &size)
		c.rep.frames++
		if size > int64(c.maxFrame) {
			c.rep.bad++
			c.rep.add(n, kMalformed, "%sa frame of %d bytes, longer than the maximum frame size (%d): the reader skips it", dirLabel(dir), size, c.maxFrame)
		} else {
			c.rep.add(n, kNotChecked, "%sa frame of %d bytes was logged cut to its first %d: not checked", dirLabel(dir), size, len(frame))
		}
		return
	}
	var unterminated bool
	json.Unmarshal(m["unterminated"], &unterminated)
	if unterminated {
		c.rep.add(n, kMalformed, "%s: unterminated last line: the reader discards it (docs/wire.md §2.1): %s", dir, excerpt(frame))
		return
	}
	if len(frame) > c.maxFrame {
		c.rep.frames++
		c.rep.bad++
		c.rep.add(n, kMalformed, "%sa frame of %d bytes, longer than the maximum frame size (%d): the reader skips it", dirLabel(dir), len(frame), c.maxFrame)
		return
	}
	c.frame(n, dir, frame)
}

// excerptMax is the most bytes excerpt looks at: at least excerptRunes+1
// runes, however they are encoded.
const excerptMax = 4 * (excerptRunes + 1)

const excerptRunes = 120

// excerpt shortens a line for a message, looking only at its first
// excerptMax bytes.
func excerpt(b []byte) string {
	if len(b) > excerptMax {
		b = b[:excerptMax]
	}
	s := string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	if utf8.RuneCountInString(s) > excerptRunes {
		s = string([]rune(s)[:excerptRunes-1]) + "…"
	}
	return s
}

// dirLabel names a frame's direction in messages.
func dirLabel(dir string) string {
	if dir == "" {
		return ""
	}
	return dir + " "
}

// frame checks one frame, read on line n in direction dir ("" unknown).
func (c *checker) frame(n int, dir string, line []byte) {
	// Exactly what a wire end does with the line (docs/wire.md §2.1): invalid
	// UTF-8 becomes U+FFFD, ECMAScript trim, empty lines are skipped.
	if !utf8.Valid(line) {
		line = lines.AppendValidUTF8(nil, line)
	}
	line = lines.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	c.rep.frames++
	var env wire.Envelope
	top, _, err := c.scanner.Scan(line, &env)
	switch {
	case err != nil:
		c.rep.bad++
		c.rep.add(n, kMalformed, "%snot valid JSON (%v): %s", dirLabel(dir), err, excerpt(line))
		return
	case top != wire.Object:
		c.rep.bad++
		c.rep.add(n, kMalformed, "%sa JSON %s, not an object: the reader drops it: %s", dirLabel(dir), top, excerpt(line))
		return
	}
	class := env.Class()
	var method string
	if class == wire.Request || class == wire.Notification {
		method = string(wire.AppendUnquote(nil, env.Method.Raw))
	}
	switch class {
	case wire.Request:
		c.rep.requests++
		c.request(n, dir, method, &env)
	case wire.Response:
		c.rep.responses++
		c.response(n, dir, &env)
	case wire.Notification:
		c.rep.notifs++
		c.notification(n, dir, method, &env)
	default:
		c.rep.bad++
		c.rep.add(n, kMalformed, "%sneither a request, a response nor a notification (no string method and no string or number id): the reader drops it: %s", dirLabel(dir), excerpt(line))
	}
}

// pendingKey is what a response matches a request by: the direction it
// was sent in ("" unknown) and its id, compared as rpc compares them.
type pendingKey struct {
	dir string
	id  wire.IDKey
}

// params returns the raw params member as upstream hands it to handlers.
func params(env *wire.Envelope) (json.RawMessage, bool) {
	if env.Params.Kind != wire.Object {
		return json.RawMessage(`{}`), env.Params.Kind == wire.Absent
	}
	return append(json.RawMessage(nil), env.Params.Raw...), true
}

func (c *checker) request(n int, dir, method string, env *wire.Envelope) {
	id := string(env.ID.Raw)
	if dir == "" && clientRequests[method] {
		dir = c2s
	}
	switch {
	case dir == s2c:
		c.rep.add(n, kUnknown, "s2c request %q: the runtime sends no requests (a client answers -32601)", method)
	case !clientRequests[method]:
		c.rep.add(n, kUnknown, "%srequest %q (id %s) is not a runtime method (initialize, session/prompt, shutdown)", dirLabel(dir), method, id)
	default:
		c.requestParams(n, method, env)
	}
	key := pendingKey{dir, wire.KeyOfID(env.ID)}
	if p, ok := c.pending.get(key); ok {
		c.rep.add(n, kMalformed, "%srequest id %s is already waiting for a response (line %d): responses cannot tell them apart", dirLabel(dir), id, p.line)
	}
	req := &pending{line: n, dir: dir, method: method, id: id}
	if method == "session/prompt" {
		if raw, ok := params(env); ok {
			req.session, _ = sdkproto.Notification{Params: raw}.SessionID()
		}
	}
	if method == "shutdown" && dir != s2c {
		c.shutdown = n
	}
	if _, old, evicted := c.pending.set(key, req); evicted {
		c.rep.add(old.line, kUnanswered, "%srequest %q (id %s) got no response within the next %d requests; check stopped waiting for it", dirLabel(old.dir), old.method, old.id, checkTable)
	}
	c.answered.delete(key)
}

// requestParams validates the params of a client request.
func (c *checker) requestParams(n int, method string, env *wire.Envelope) {
	raw, ok := params(env)
	if !ok {
		c.rep.add(n, kBadPayload, "%s params are a JSON %s, not an object (the runtime sees {})", method, env.Params.Kind)
	}
	switch method {
	case "initialize":
		var p sdkproto.InitializeParams
		if err := p.UnmarshalJSON(raw); err != nil {
			c.rep.add(n, kBadPayload, "initialize params do not decode: %v", err)
			return
		}
		for _, k := range []string{"cwd", "provider", "model"} {
			if m := p.Member(k); !isJSONString(m) {
				c.rep.add(n, kBadPayload, "initialize params: %s must be a string, got %s", k, wire.KindOf(m).Phrase())
			}
		}
		if err := p.Validate(); err != nil {
			c.rep.add(n, kBadPayload, "initialize params: %v (%s)", err, memberText(p.Member("maxTokens"), p.Member("reasoningEffort"), err))
		}
	case "session/prompt":
		var p sdkproto.SessionPromptParams
		if err := p.UnmarshalJSON(raw); err != nil {
			c.rep.add(n, kBadPayload, "session/prompt params do not decode: %v", err)
			return
		}
		if m := p.Member("sessionId"); !isJSONString(m) {
			c.rep.add(n, kBadPayload, "session/prompt params: sessionId must be a string, got %s", wire.KindOf(m).Phrase())
		}
		if _, err := p.Validate(sdkproto.ImagePolicy{}); err != nil {
			c.rep.add(n, kBadPayload, "session/prompt params: %v", err)
		} else {
			for i, b := range p.ContentBlocks {
				if !b.IsObject() || b.Type == "" {
					c.rep.add(n, kBadPayload, "session/prompt params: contentBlocks[%d] is not a content block (an object with a string type): %s", i, excerpt(b.Raw()))
				}
			}
		}
		if !c.initOK {
			c.rep.add(n, kEarly, "session/prompt before any initialize succeeded (docs/wire.md §5.1: clients MUST await the initialize reply; newer runtimes refuse it)")
		}
	}
}

func isJSONString(m json.RawMessage) bool { return len(m) > 0 && m[0] == '"' }

// memberText quotes the offending initialize member for a message.
func memberText(maxTokens, effort json.RawMessage, err error) string {
	if err == sdkproto.ErrReasoningEffort {
		return "reasoningEffort " + string(effort)
	}
	return "maxTokens " + string(maxTokens)
}

func (c *checker) response(n int, dir string, env *wire.Envelope) {
	id := string(env.ID.Raw)
	var p *pending
	var key pendingKey
	want := map[string]string{c2s: s2c, s2c: c2s}[dir]
	idk := wire.KeyOfID(env.ID)
	for _, k := range []pendingKey{{want, idk}, {c2s, idk}, {s2c, idk}, {"", idk}} {
		if q, _ := c.pending.get(k); q != nil && (dir == "" || q.dir == "" || q.dir == want) {
			p, key = q, k
			break
		}
	}
	if p == nil {
		if line, ok := c.answeredLine(want, idk); ok {
			c.rep.add(n, kUnmatched, "%sresponse to id %s, which was already answered on line %d (duplicate response)", dirLabel(dir), id, line)
		} else {
			c.rep.add(n, kUnmatched, "%sresponse to id %s, which no request is waiting for", dirLabel(dir), id)
		}
		return
	}
	c.pending.delete(key)
	c.answered.set(key, n)
	isErr := env.Error.Kind == wire.Object || env.Error.Kind == wire.Array
	if isErr {
		if env.Result.Kind != wire.Absent {
			c.rep.add(n, kBadPayload, "response to %s (id %s) has both result and error", p.method, id)
		}
		c.errorObject(n, p, env)
		return
	}
	if env.Error.Kind != wire.Absent {
		c.rep.add(n, kBadPayload, "response to %s (id %s): error is a JSON %s, not an object (the client ignores it)", p.method, id, env.Error.Kind)
	}
	if env.Result.Kind == wire.Absent {
		c.rep.add(n, kBadPayload, "response to %s (id %s) has neither result nor error", p.method, id)
		return
	}
	raw := json.RawMessage(env.Result.Raw)
	switch p.method {
	case "initialize":
		var r sdkproto.InitializeResult
		err := r.UnmarshalJSON(raw)
		if err == nil && env.Result.Kind != wire.Object {
			err = fmt.Errorf("initialize returned no server identity: %s", raw)
		}
		if err == nil {
			err = r.Check()
		}
		if err != nil {
			c.rep.add(n, kBadPayload, "initialize result (id %s): %v", id, err)
			return
		}
		c.initOK = true
	case "session/prompt":
		var r sdkproto.SessionPromptResult
		err := r.UnmarshalJSON(raw)
		if err == nil && env.Result.Kind != wire.Object {
			err = fmt.Errorf("session/prompt returned no message id: %s", raw)
		}
		if err == nil {
			err = r.Check()
		}
		if err != nil {
			c.rep.add(n, kBadPayload, "session/prompt result (id %s): %v", id, err)
		} else if p.session != "" {
			c.prompted(n, p.session, r.MessageID)
		}
	case "shutdown":
		if env.Result.Kind != wire.Object {
			c.rep.add(n, kBadPayload, "shutdown result (id %s) is a JSON %s, not {}", id, env.Result.Kind)
		}
	}
}

// answeredLine finds the response that already answered a request with
// this id key, sent in direction want ("" for raw frames: any).
func (c *checker) answeredLine(want string, id wire.IDKey) (int, bool) {
	dirs := []string{want}
	if want == "" {
		dirs = []string{"", c2s, s2c}
	}
	for _, d := range dirs {
		if line, ok := c.answered.get(pendingKey{d, id}); ok {
			return line, true
		}
	}
	return 0, false
}

// errorObject checks an error response: code a number, message a string
// (docs/wire.md §2.7 falls back on "JSON-RPC error" and no code otherwise).
func (c *checker) errorObject(n int, p *pending, env *wire.Envelope) {
	var e map[string]json.RawMessage
	if json.Unmarshal(env.Error.Raw, &e) != nil {
		c.rep.add(n, kBadPayload, "error response to %s (id %s): error is not an object", p.method, p.id)
		return
	}
	if code := e["code"]; len(code) == 0 || wire.KindOf(code) != wire.Number {
		c.rep.add(n, kBadPayload, "error response to %s (id %s): code must be a number, got %s", p.method, p.id, wire.KindOf(code).Phrase())
	}
	if msg := e["message"]; !isJSONString(msg) {
		c.rep.add(n, kBadPayload, "error response to %s (id %s): message must be a string, got %s", p.method, p.id, wire.KindOf(msg).Phrase())
	}
}

func (c *checker) notification(n int, dir, method string, env *wire.Envelope) {
	if dir == "" && serverNotifications[method] {
		dir = s2c
	}
	if dir == c2s {
		c.rep.add(n, kUnknown, "c2s notification %q: the runtime defines no client notifications (it ignores them)", method)
		return
	}
	if !serverNotifications[method] {
		c.rep.add(n, kUnknown, "%snotification %q is not a runtime notification (session.event, session.status, subagent.started, subagent.finished)", dirLabel(dir), method)
		return
	}
	raw, ok := params(env)
	if !ok || env.Params.Kind == wire.Absent {
		c.rep.add(n, kBadPayload, "%s params are %s, not an object", method, map[bool]string{true: "absent", false: "a JSON " + env.Params.Kind.String()}[env.Params.Kind == wire.Absent])
		return
	}
	note := sdkproto.Notification{Method: method, Params: raw}
	switch method {
	case "session.event":
		c.sessionEvent(n, note)
	case "session.status":
		p, err := note.SessionStatus()
		switch {
		case err != nil:
			c.rep.add(n, kBadPayload, "session.status params do not decode: %v", err)
		case !isJSONString(p.Member("sessionId")):
			c.rep.add(n, kBadPayload, "session.status: sessionId must be a string, got %s", wire.KindOf(p.Member("sessionId")).Phrase())
		case p.Status != sdkproto.StatusRunning && p.Status != sdkproto.StatusIdle:
			c.rep.add(n, kBadPayload, "session.status: status must be \"running\" or \"idle\", got %s", orAbsent(p.Member("status")))
		case p.Status == sdkproto.StatusIdle:
			c.idle(p.SessionID)
		}
	case "subagent.started":
		p, err := note.SubagentStarted()
		if err != nil {
			c.rep.add(n, kBadPayload, "subagent.started params do not decode: %v", err)
			return
		}
		for _, k := range []string{"parentSessionId", "childSessionId"} {
			if m := p.Member(k); !isJSONString(m) || string(m) == `""` {
				c.rep.add(n, kBadPayload, "subagent.started: %s must be a non-empty string, got %s", k, orAbsent(m))
			}
		}
	case "subagent.finished":
		p, err := note.SubagentFinished()
		if err != nil {
			c.rep.add(n, kBadPayload, "subagent.finished params do not decode: %v", err)
			return
		}
		for _, k := range []string{"provider", "agentId", "parentSessionId", "childSessionId", "stopReason"} {
			if m := p.Member(k); !isJSONString(m) {
				c.rep.add(n, kBadPayload, "subagent.finished: %s must be a string, got %s", k, orAbsent(m))
			}
		}
		if p.Status != sdkproto.RunOK && p.Status != sdkproto.RunError {
			c.rep.add(n, kBadPayload, "subagent.finished: status must be \"ok\" or \"error\", got %s", orAbsent(p.Member("status")))
		}
		if m := p.Member("lastAssistantMessage"); m != nil {
			if !blocksOK(m) {
				c.rep.add(n, kBadPayload, "subagent.finished: lastAssistantMessage must be an array of content blocks, got %s", excerpt(m))
			}
		}
	}
}

func orAbsent(m json.RawMessage) string {
	if m == nil {
		return "nothing (member absent)"
	}
	return excerpt(m)
}

// blocksOK reports an array of objects with a string type.
func blocksOK(m json.RawMessage) bool {
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(m, &blocks) != nil {
		return false
	}
	for _, b := range blocks {
		if !isJSONString(b["type"]) {
			return false
		}
	}
	return true
}

// eventDecoders are the typed accessors of the known event types whose
// data sdkproto can decode: data that fails them breaks the contract.
var eventDecoders = map[sdkproto.EventType]func(sdkproto.Event) error{
	sdkproto.EventAgentInboxSpliced: func(e sdkproto.Event) error { _, err := e.InboxSpliced(); return err },
	sdkproto.EventUserMessage:       func(e sdkproto.Event) error { _, err := e.UserMessage(); return err },
	sdkproto.EventAssistantChunk:    func(e sdkproto.Event) error { _, err := e.AssistantChunk(); return err },
	sdkproto.EventAssistantMessage:  func(e sdkproto.Event) error { _, err := e.AssistantMessage(); return err },
	sdkproto.EventToolCall:          func(e sdkproto.Event) error { _, err := e.ToolCall(); return err },
	sdkproto.EventToolResult:        func(e sdkproto.Event) error { _, err := e.ToolResult(); return err },
	sdkproto.EventTurnStart:         func(e sdkproto.Event) error { _, err := e.TurnStart(); return err },
	sdkproto.EventTurnEnd: func(e sdkproto.Event) error {
		if _, err := e.TurnEnd(); err != nil {
			return err
		}
		_, err := e.TurnEndReasonKind()
		return err
	},
	sdkproto.EventStepStart:          func(e sdkproto.Event) error { _, err := e.StepStart(); return err },
	sdkproto.EventStepEnd:            func(e sdkproto.Event) error { _, err := e.StepEnd(); return err },
	sdkproto.EventRequestHeader:      func(e sdkproto.Event) error { _, err := e.RequestHeader(); return err },
	sdkproto.EventRequestContext:     func(e sdkproto.Event) error { _, err := e.RequestContext(); return err },
	sdkproto.EventTodoWrite:          func(e sdkproto.Event) error { _, err := e.TodoWrite(); return err },
	sdkproto.EventSessionTitle:       func(e sdkproto.Event) error { _, err := e.SessionTitle(); return err },
	sdkproto.EventSubagentDescriptor: func(e sdkproto.Event) error { _, err := e.SubagentDescriptor(); return err },
	sdkproto.EventLLMRetry:           func(e sdkproto.Event) error { _, err := e.LLMRetry(); return err },
	sdkproto.EventLLMRetryStarted:    func(e sdkproto.Event) error { _, err := e.LLMRetryStarted(); return err },
}

// sessionEvent checks a session.event: the envelope (docs/wire.md §4.5), the data
// of known types, and the per-session seq order.
func (c *checker) sessionEvent(n int, note sdkproto.Notification) {
	p, err := note.SessionEvent()
	if err != nil {
		c.rep.add(n, kBadPayload, "session.event params do not decode: %v", err)
		return
	}
	sid, ok := note.SessionID()
	if !ok {
		c.rep.add(n, kBadPayload, "session.event: sessionId must be a string, got %s", wire.KindOf(p.Member("sessionId")).Phrase())
	}
	if err := p.CheckEnvelope(); err != nil {
		c.rep.add(n, kBadPayload, "%v", err)
		return
	}
	ev := p.Event
	label := fmt.Sprintf("session.event %s", ev.Type)
	seqRaw, timeRaw := ev.Member("seq"), ev.Member("time")
	seq, seqOK := wire.NumberInt64(seqRaw)
	if !seqOK {
		c.rep.add(n, kBadPayload, "%s: seq must be an integer, got %s", label, orAbsent(seqRaw))
	}
	if _, ok := wire.NumberInt64(timeRaw); !ok {
		c.rep.add(n, kBadPayload, "%s: time must be an integer (epoch ms), got %s", label, orAbsent(timeRaw))
	}
	if d := ev.Member("data"); len(d) == 0 || d[0] != '{' {
		c.rep.add(n, kBadPayload, "%s: data must be an object, got %s", label, orAbsent(d))
	} else if dec := eventDecoders[ev.Type]; dec != nil {
		if err := dec(ev); err != nil {
			c.rep.add(n, kBadPayload, "%s: data does not decode: %v", label, err)
		}
	}
	if err := ev.CheckAssistantContent(); err != nil {
		c.rep.add(n, kBadPayload, "%s", excerpt([]byte(err.Error())))
	}
	if !ok || !seqOK {
		return
	}
	if ev.Type == sdkproto.EventAgentInboxSpliced {
		c.received(sid, ev.ReceiptIDs())
	}
	last, seen := c.seqs.get(sid)
	switch {
	case !seen && seq != 0:
		c.rep.add(n, kSeqGap, "session %s: first event (%s) has seq %d, not 0 (docs/wire.md §4.5: contiguous from 0)", sid, ev.Type, seq)
	case seen && seq <= last:
		c.rep.add(n, kSeqOrder, "session %s: %s has seq %d after seq %d (seqs must increase)", sid, ev.Type, seq, last)
		return // keep the highest seq seen
	case seen && seq > last+1:
		c.rep.add(n, kSeqGap, "session %s: seq jumps from %d to %d (%s)", sid, last, seq, ev.Type)
	}
	c.seqs.set(sid, seq)
}

// prompted records the reply to a session/prompt: a run of session now
// awaits the receipt of msgID (unless it came already), then an idle.
func (c *checker) prompted(line int, session, msgID string) {
	sr := c.sessionRuns(session)
	r := &run{line: line, msgID: msgID}
	if i := slices.Index(sr.receipts, msgID); i >= 0 {
		sr.receipts = slices.Delete(sr.receipts, i, i+1)
		r.receipt = true
	}
	if len(sr.runs) == maxRuns {
		old := sr.runs[0]
		sr.runs = slices.Delete(sr.runs, 0, 1)
		c.rep.add(old.line, kUnfinished, "session %s: message %q: the session did not go idle after it within the next %d prompts; check stopped waiting", session, old.msgID, maxRuns)
	}
	sr.runs = append(sr.runs, r)
}

// maxRuns bounds the runs check waits for per session.
const maxRuns = 1024

// received records the ids an agent/inbox/spliced event of session
// inserted: the receipts of runs, or of replies still to come.
func (c *checker) received(session string, ids []string) {
	if len(ids) == 0 {
		return
	}
	sr := c.sessionRuns(session)
	for _, id := range ids {
		i := slices.IndexFunc(sr.runs, func(r *run) bool { return r.msgID == id && !r.receipt })
		if i >= 0 {
			sr.runs[i].receipt = true
			continue
		}
		if len(sr.receipts) == maxEarlyReceipts {
			sr.receipts = slices.Delete(sr.receipts, 0, 1)
		}
		sr.receipts = append(sr.receipts, id)
	}
}

// idle ends the runs of session whose receipt was seen.
func (c *checker) idle(session string) {
	sr, ok := c.runs.get(session)
	if !ok {
		return
	}
	sr.runs = slices.DeleteFunc(sr.runs, func(r *run) bool { return r.receipt })
}

func (c *checker) sessionRuns(session string) *sessionRuns {
	sr, ok := c.runs.get(session)
	if !ok {
		sr = &sessionRuns{}
		c.runs.set(session, sr) // a session forgotten takes its runs along
	}
	return sr
}

// finish reports the requests that were never answered, and the runs
// that would still be waiting when the transcript ends.
func (c *checker) finish() {
	var left []*pending
	c.pending.each(func(_ pendingKey, p *pending) { left = append(left, p) })
	sort.Slice(left, func(i, j int) bool { return left[i].line < left[j].line })
	for _, p := range left {
		c.rep.add(p.line, kUnanswered, "%srequest %q (id %s) got no response", dirLabel(p.dir), p.method, p.id)
	}
	type open struct {
		session string
		*run
	}
	var runs []open
	c.runs.each(func(s string, sr *sessionRuns) {
		for _, r := range sr.runs {
			if c.shutdown < r.line { // a later shutdown ends the run: nothing waits
				runs = append(runs, open{s, r})
			}
		}
	})
	sort.Slice(runs, func(i, j int) bool { return runs[i].line < runs[j].line })
	for _, r := range runs {
		if !r.receipt {
			c.rep.add(r.line, kUnfinished, "session %s: the prompt was answered with message id %q, but no receipt of it followed (an agent/inbox/spliced event inserting it): a client's Run waits for that receipt, then for the session's idle (docs/wire.md §6.3)", r.session, r.msgID)
		} else {
			c.rep.add(r.line, kUnfinished, "session %s: message %q was received, but the session never went idle after it: a client's Run waits for that idle (docs/wire.md §6.3)", r.session, r.msgID)
		}
	}
}
