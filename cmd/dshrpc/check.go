package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/sdkproto"
)

const checkUsage = `Usage: dshrpc check [--strict] [FILE|-]

Read a transcript and report every frame that breaks the wire contract
(WIRE.md §2-§5), with its line number, then a summary. FILE (default: stdin)
holds one of:

  - raw frames, one JSON-RPC line each (directions are then inferred);
  - a transcript: {"dir":"c2s"|"s2c","frame":"<the exact line>"} per line,
    the format of testdata/transcripts and of 'dshrpc tap' logs (which add
    "t", a timestamp; "frame" may also be the frame as a JSON object).

Problems (each makes the exit status 1):
  malformed           a line that is not valid JSON, not an object, neither a
                      request, a response nor a notification; a bad transcript
                      line; an unterminated last line
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

Flags:
  --strict   warnings count as problems
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
)

// warningKinds do not fail a check unless --strict: the real runtime shows
// them in normal operation (a subagent child's first forwarded event has
// seq 2) or the contract leaves them to the runtime (HEAD accepts a prompt
// before initialize).
var warningKinds = map[string]bool{kSeqGap: true, kEarly: true}

func checkCmd(e *env, args []string) int {
	fs := newFlagSet("check")
	strict := fs.Bool("strict", false, "")
	pos, code, err := parseArgs(e, "check", checkUsage, fs, args, true)
	if err != nil {
		return code
	}
	if len(pos) > 1 {
		return usageError(e, "check", fmt.Errorf("one FILE at most, got %d", len(pos)))
	}
	name, in := "-", e.stdin
	if len(pos) == 1 && pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			fmt.Fprintf(e.stderr, "dshrpc check: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		name, in = pos[0], f
	}
	rep, err := checkTranscript(in)
	if err != nil {
		fmt.Fprintf(e.stderr, "dshrpc check: reading %s: %v\n", name, err)
		return exitUsage
	}
	label := name
	if name == "-" {
		label = "<stdin>"
	}
	rep.print(e.stdout, label)
	if rep.problems() > 0 || *strict && len(rep.findings) > 0 {
		return exitFailed
	}
	return exitOK
}

// finding is one problem or warning.
type finding struct {
	line int
	kind string
	msg  string
}

// report is the outcome of a check.
type report struct {
	format                           string // "raw frames" or "transcript"
	lines, frames                    int
	requests, responses, notifs, bad int
	findings                         []finding
}

func (r *report) add(line int, kind, format string, args ...any) {
	r.findings = append(r.findings, finding{line, kind, fmt.Sprintf(format, args...)})
}

func (r *report) problems() int {
	n := 0
	for _, f := range r.findings {
		if !warningKinds[f.kind] {
			n++
		}
	}
	return n
}

// print writes the findings in line order, then the summary.
func (r *report) print(w io.Writer, name string) {
	sort.SliceStable(r.findings, func(i, j int) bool { return r.findings[i].line < r.findings[j].line })
	counts := map[string]int{}
	for _, f := range r.findings {
		counts[f.kind]++
		warn := ""
		if warningKinds[f.kind] {
			warn = "warning: "
		}
		fmt.Fprintf(w, "%s:%d: %s%s: %s\n", name, f.line, warn, f.kind, f.msg)
	}
	p, wn := r.problems(), len(r.findings)-r.problems()
	fmt.Fprintf(w, "%s: %s, %d %s, %d %s (%d %s, %d %s, %d %s): ", name, r.format,
		r.lines, plural(r.lines, "line"), r.frames, plural(r.frames, "frame"), r.requests, plural(r.requests, "request"),
		r.responses, plural(r.responses, "response"), r.notifs, plural(r.notifs, "notification"))
	if len(r.findings) == 0 {
		fmt.Fprintln(w, "ok")
		return
	}
	var kinds []string
	for k := range counts {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	fmt.Fprintf(w, "%d %s, %d %s (%s)\n", p, plural(p, "problem"), wn, plural(wn, "warning"), strings.Join(parts, ", "))
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// The protocol's methods, by sender (WIRE.md §1).
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
	line   int
	dir    string
	method string
	id     string // as written
}

// checker holds the state of a check across frames.
type checker struct {
	rep      *report
	scanner  wire.Scanner
	pending  map[string]*pending // by direction + id key
	answered map[string]int      // by direction + id key: the line of the response
	seqs     map[string]int64    // per session: last seq seen
	initOK   bool                // an initialize succeeded
}

// checkTranscript reads a transcript or raw frames and checks every frame.
func checkTranscript(in io.Reader) (*report, error) {
	c := &checker{rep: &report{}, pending: map[string]*pending{}, answered: map[string]int{}, seqs: map[string]int64{}}
	br := bufio.NewReaderSize(in, 64<<10)
	wrapped, decided := false, false
	for n := 1; ; n++ {
		raw, err := br.ReadBytes('\n')
		if len(raw) == 0 && err != nil {
			if err == io.EOF {
				break
			}
			return nil, err
		}
		c.rep.lines++
		terminated := bytes.HasSuffix(raw, []byte("\n"))
		raw = bytes.TrimSuffix(raw, []byte("\n"))
		if !decided {
			if len(lines.TrimSpace(raw)) == 0 {
				continue
			}
			wrapped, decided = isTranscriptLine(raw), true
			if wrapped {
				c.rep.format = "transcript"
			} else {
				c.rep.format = "raw frames"
			}
		}
		if wrapped {
			c.transcriptLine(n, raw)
		} else {
			if !terminated && len(lines.TrimSpace(raw)) > 0 {
				c.rep.add(n, kMalformed, "unterminated last line: the reader discards it (WIRE §2.1.5)")
				continue
			}
			c.frame(n, "", raw)
		}
		if err != nil {
			break
		}
	}
	if !decided {
		c.rep.format = "empty"
	}
	c.finish()
	return c.rep, nil
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
	var unterminated bool
	json.Unmarshal(m["unterminated"], &unterminated)
	if unterminated {
		c.rep.add(n, kMalformed, "%s: unterminated last line: the reader discards it (WIRE §2.1.5): %s", dir, excerpt(frame))
		return
	}
	c.frame(n, dir, frame)
}

// excerpt shortens a line for a message.
func excerpt(b []byte) string {
	s := string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	if utf8.RuneCountInString(s) > 120 {
		s = string([]rune(s)[:119]) + "…"
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
	// Exactly what a wire end does with the line (WIRE §2.1): invalid
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
	hasID := env.ID.Kind == wire.String || env.ID.Kind == wire.Number
	hasMethod := env.Method.Kind == wire.String
	var method string
	if hasMethod {
		method = string(wire.AppendUnquote(nil, env.Method.Raw))
	}
	switch {
	case hasID && hasMethod:
		c.rep.requests++
		c.request(n, dir, method, &env)
	case hasID:
		c.rep.responses++
		c.response(n, dir, &env)
	case hasMethod:
		c.rep.notifs++
		c.notification(n, dir, method, &env)
	default:
		c.rep.bad++
		c.rep.add(n, kMalformed, "%sneither a request, a response nor a notification (no string method and no string or number id): the reader drops it: %s", dirLabel(dir), excerpt(line))
	}
}

// idKey identifies an id type-sensitively (5 and "5" differ) and
// numerically (1 and 1.0 are the same id once parsed, as in JavaScript).
func idKey(v wire.Value) string {
	if v.Kind == wire.String {
		return "s:" + string(wire.AppendUnquote(nil, v.Raw))
	}
	if f, err := strconv.ParseFloat(string(v.Raw), 64); err == nil {
		return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "n:" + string(v.Raw)
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
	key := dir + "|" + idKey(env.ID)
	if p := c.pending[key]; p != nil {
		c.rep.add(n, kMalformed, "%srequest id %s is already waiting for a response (line %d): responses cannot tell them apart", dirLabel(dir), id, p.line)
	}
	c.pending[key] = &pending{line: n, dir: dir, method: method, id: id}
	delete(c.answered, key)
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
				c.rep.add(n, kBadPayload, "initialize params: %s must be a string, got %s", k, jsonKind(m))
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
			c.rep.add(n, kBadPayload, "session/prompt params: sessionId must be a string, got %s", jsonKind(m))
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
			c.rep.add(n, kEarly, "session/prompt before any initialize succeeded (WIRE §5.1: clients MUST await the initialize reply; newer runtimes refuse it)")
		}
	}
}

func isJSONString(m json.RawMessage) bool { return len(m) > 0 && m[0] == '"' }

func jsonKind(m json.RawMessage) string {
	if len(m) == 0 {
		return "nothing (member absent)"
	}
	switch m[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

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
	var key string
	want := map[string]string{c2s: s2c, s2c: c2s}[dir]
	for _, k := range []string{want + "|" + idKey(env.ID), c2s + "|" + idKey(env.ID), s2c + "|" + idKey(env.ID), "|" + idKey(env.ID)} {
		if q := c.pending[k]; q != nil && (dir == "" || q.dir == "" || q.dir == want) {
			p, key = q, k
			break
		}
	}
	if p == nil {
		if line, ok := c.answeredLine(want, idKey(env.ID)); ok {
			c.rep.add(n, kUnmatched, "%sresponse to id %s, which was already answered on line %d (duplicate response)", dirLabel(dir), id, line)
		} else {
			c.rep.add(n, kUnmatched, "%sresponse to id %s, which no request is waiting for", dirLabel(dir), id)
		}
		return
	}
	delete(c.pending, key)
	c.answered[key] = n
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
		}
	case "shutdown":
		if env.Result.Kind != wire.Object {
			c.rep.add(n, kBadPayload, "shutdown result (id %s) is a JSON %s, not {}", id, env.Result.Kind)
		}
	}
}

// answeredLine finds the response that already answered a request with
// this id key, sent in direction want ("" for raw frames: any).
func (c *checker) answeredLine(want, key string) (int, bool) {
	dirs := []string{want}
	if want == "" {
		dirs = []string{"", c2s, s2c}
	}
	for _, d := range dirs {
		if line, ok := c.answered[d+"|"+key]; ok {
			return line, true
		}
	}
	return 0, false
}

// errorObject checks an error response: code a number, message a string
// (WIRE §2.7 falls back on "JSON-RPC error" and no code otherwise).
func (c *checker) errorObject(n int, p *pending, env *wire.Envelope) {
	var e map[string]json.RawMessage
	if json.Unmarshal(env.Error.Raw, &e) != nil {
		c.rep.add(n, kBadPayload, "error response to %s (id %s): error is not an object", p.method, p.id)
		return
	}
	if code := e["code"]; len(code) == 0 || jsonKind(code) != "a number" {
		c.rep.add(n, kBadPayload, "error response to %s (id %s): code must be a number, got %s", p.method, p.id, jsonKind(code))
	}
	if msg := e["message"]; !isJSONString(msg) {
		c.rep.add(n, kBadPayload, "error response to %s (id %s): message must be a string, got %s", p.method, p.id, jsonKind(msg))
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
			c.rep.add(n, kBadPayload, "session.status: sessionId must be a string, got %s", jsonKind(p.Member("sessionId")))
		case p.Status != sdkproto.StatusRunning && p.Status != sdkproto.StatusIdle:
			c.rep.add(n, kBadPayload, "session.status: status must be \"running\" or \"idle\", got %s", orAbsent(p.Member("status")))
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

// sessionEvent checks a session.event: the envelope (WIRE §4.5), the data
// of known types, and the per-session seq order.
func (c *checker) sessionEvent(n int, note sdkproto.Notification) {
	p, err := note.SessionEvent()
	if err != nil {
		c.rep.add(n, kBadPayload, "session.event params do not decode: %v", err)
		return
	}
	sid, ok := note.SessionID()
	if !ok {
		c.rep.add(n, kBadPayload, "session.event: sessionId must be a string, got %s", jsonKind(p.Member("sessionId")))
	}
	if err := p.CheckEnvelope(); err != nil {
		c.rep.add(n, kBadPayload, "%v", err)
		return
	}
	ev := p.Event
	label := fmt.Sprintf("session.event %s", ev.Type)
	seqRaw, timeRaw := ev.Member("seq"), ev.Member("time")
	seq, seqOK := integer(seqRaw)
	if !seqOK {
		c.rep.add(n, kBadPayload, "%s: seq must be an integer, got %s", label, orAbsent(seqRaw))
	}
	if _, ok := integer(timeRaw); !ok {
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
	last, seen := c.seqs[sid]
	switch {
	case !seen && seq != 0:
		c.rep.add(n, kSeqGap, "session %s: first event (%s) has seq %d, not 0 (WIRE §4.5: contiguous from 0)", sid, ev.Type, seq)
	case seen && seq <= last:
		c.rep.add(n, kSeqOrder, "session %s: %s has seq %d after seq %d (seqs must increase)", sid, ev.Type, seq, last)
		return // keep the highest seq seen
	case seen && seq > last+1:
		c.rep.add(n, kSeqGap, "session %s: seq jumps from %d to %d (%s)", sid, last, seq, ev.Type)
	}
	c.seqs[sid] = seq
}

// integer parses a raw JSON number with an integral value.
func integer(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 || jsonKind(raw) != "a number" {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// finish reports the requests that were never answered.
func (c *checker) finish() {
	var left []*pending
	for _, p := range c.pending {
		left = append(left, p)
	}
	sort.Slice(left, func(i, j int) bool { return left[i].line < left[j].line })
	for _, p := range left {
		c.rep.add(p.line, kUnanswered, "%srequest %q (id %s) got no response", dirLabel(p.dir), p.method, p.id)
	}
}
