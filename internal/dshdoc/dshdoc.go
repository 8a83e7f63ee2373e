// Package dshdoc judges DSH frames by the protocol's OpenRPC document
// (sdkproto.OpenRPCDocument): which schema of the document, if any,
// applies to a frame, the value that schema must accept, and the
// refusals that follow from the document alone (a notification sent as a
// request, a method sent by the wrong end). It reads the frames of the
// recorded transcripts (testdata/transcripts) and of the wire vectors
// (testdata/vectors), and the list, in docs/sdkproto.md, of the vectors
// whose rule no schema of the document states.
//
// It is shared by the tests that validate those frames with the Go
// validator (sdkproto) and with ajv (interop), so that both judge the
// same values and count the same frames.
package dshdoc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/vectortest"
	"github.com/linerpc/linerpc/openrpc"
)

// The directions of a frame.
const (
	C2S = "c2s" // written by the client, read by the runtime
	S2C = "s2c" // written by the runtime, read by the client
)

// The values of the document's direction extension, as
// sdkproto.DirectionExtension gives them.
const (
	directionExtension = "x-dsh-direction"
	clientToRuntime    = "client-to-runtime"
	runtimeToClient    = "runtime-to-client"
)

// Kind is what a frame is, as docs/wire.md §2.2 classifies it.
type Kind string

// The kinds of frames.
const (
	Request      Kind = "request"
	Notification Kind = "notification"
	Result       Kind = "result" // a response that settles its request with a result (§2.7)
	Error        Kind = "error"  // a response whose error member is an object or an array (§2.7)
	Other        Kind = "other"  // a line that is no frame of the document: see Judgement.Why
)

// Frame is one frame, in the direction it went.
type Frame struct {
	Dir  string // C2S or S2C
	Line int    // its line in its file (a transcript), or its index (from 1) in its vector
	Raw  []byte // the line, trimmed
}

// Check is a value the document's schema for it must accept: the params
// of a call of Method (Value nil when absent), or the result of one.
type Check struct {
	Method string
	Result bool
	Value  json.RawMessage
}

// Judgement is what the document says of one frame.
type Judgement struct {
	Kind   Kind
	Method string // the method of a request or notification, or of the request a response answers
	ID     string // the id of a request or a response, as a key ("s:x", "n:5"), "" for none
	// Check is the value a schema of the document must accept, nil when
	// none applies (an error response, a method the document does not
	// describe, a response to no request, a line that is no frame).
	Check *Check
	// Refusal is set when the document refuses the frame whatever its
	// values: a request for a notification, a notification of a request
	// method, a method sent by the wrong end, a result that is absent.
	Refusal string
	// Why says, for a frame no schema judges, why not.
	Why string
}

// Judged reports whether the document says anything of the frame.
func (j Judgement) Judged() bool { return j.Check != nil || j.Refusal != "" }

// Judge classifies frames against a document, keeping the requests in
// flight so that a response is judged by its request's method.
type Judge struct {
	methods map[string]*openrpc.Method
	pending map[string]string // id key → method
}

// NewJudge returns a Judge of doc's methods.
func NewJudge(doc *openrpc.Document) *Judge {
	j := &Judge{methods: map[string]*openrpc.Method{}, pending: map[string]string{}}
	for i := range doc.Methods {
		j.methods[doc.Methods[i].Name] = &doc.Methods[i]
	}
	return j
}

// Pending records a request in flight with id (its JSON text) for
// method, as a vector's given.pending does.
func (j *Judge) Pending(id json.RawMessage, method string) {
	if key, ok := idKey(id); ok {
		j.pending[key] = method
	}
}

// Frame judges one frame, read in the direction dir.
func (j *Judge) Frame(dir string, raw []byte) Judgement {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		if json.Valid(raw) {
			return Judgement{Kind: Other, Why: "not a JSON object: no frame (§2.2)"}
		}
		return Judgement{Kind: Other, Why: "not JSON: no frame (§2.2)"}
	}
	id, hasID := idKey(obj["id"])
	var method string
	hasMethod := json.Unmarshal(obj["method"], &method) == nil && obj["method"] != nil && !isNull(obj["method"])
	switch {
	case hasID && hasMethod:
		j.pending[id] = method
		return j.call(Request, dir, id, method, obj)
	case hasMethod:
		return j.call(Notification, dir, "", method, obj)
	case hasID:
		return j.response(id, obj)
	}
	return Judgement{Kind: Other, Why: "neither an id nor a method: no frame (§2.2)"}
}

// call judges a request or a notification of method.
func (j *Judge) call(kind Kind, dir, id, method string, obj map[string]json.RawMessage) Judgement {
	jd := Judgement{Kind: kind, Method: method, ID: id}
	m := j.methods[method]
	if m == nil {
		jd.Why = "a method the document does not describe"
		return jd
	}
	switch {
	case kind == Request && m.IsNotification():
		jd.Refusal = method + " is a notification: the document gives it no result, and a request needs one"
	case kind == Notification && !m.IsNotification():
		jd.Refusal = method + " is a request: the document gives it a result, which a notification cannot have"
	}
	var want string
	_ = json.Unmarshal(m.Extensions[directionExtension], &want)
	if got := map[string]string{C2S: clientToRuntime, S2C: runtimeToClient}[dir]; jd.Refusal == "" && got != want {
		jd.Refusal = fmt.Sprintf("%s goes %s (%s), and this one went %s", method, want, directionExtension, got)
	}
	if jd.Refusal == "" {
		jd.Check = &Check{Method: method, Value: obj["params"]}
	}
	return jd
}

// response judges a response, by its request's method.
func (j *Judge) response(id string, obj map[string]json.RawMessage) Judgement {
	method, ok := j.pending[id]
	if !ok {
		return Judgement{Kind: Other, ID: id, Why: "a response to no request in flight (§2.7)"}
	}
	delete(j.pending, id)
	if e := bytes.TrimSpace(obj["error"]); len(e) > 0 && (e[0] == '{' || e[0] == '[') {
		// The error object is JSON-RPC's, which the document does not describe.
		return Judgement{Kind: Error, Method: method, ID: id, Why: "an error response: the error object is JSON-RPC's envelope"}
	}
	jd := Judgement{Kind: Result, Method: method, ID: id}
	switch m := j.methods[method]; {
	case m == nil:
		jd.Why = "the result of a method the document does not describe"
	case obj["result"] == nil:
		jd.Refusal = "a response with neither an error nor a result: " + method + "'s result schema has no value to accept (§2.7)"
	default:
		jd.Check = &Check{Method: method, Result: true, Value: obj["result"]}
	}
	return jd
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// idKey returns a key for raw when it is an id (a string or a number,
// §2.2), telling the two apart as the TypeScript transport does; numbers
// are compared as JavaScript's doubles.
func idKey(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s:" + s, true
	case c == '-' || '0' <= c && c <= '9':
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return "", false
		}
		if f == 0 {
			f = 0 // -0 is 0
		}
		return "n:" + strconv.FormatFloat(f, 'g', -1, 64), true
	}
	return "", false
}

// Root returns the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Transcripts returns the paths of the recorded transcripts, sorted.
func Transcripts() ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(Root(), "testdata", "transcripts", "*.ndjson"))
	if err == nil && len(paths) == 0 {
		err = errors.New("dshdoc: no transcripts in testdata/transcripts")
	}
	return paths, err
}

// ReadTranscript returns the frames of a transcript file, each
// {"dir":"c2s"|"s2c","frame":"<line>"} (testdata/transcripts/README.md).
func ReadTranscript(path string) ([]Frame, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var frames []Frame
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<26)
	for n := 1; sc.Scan(); n++ {
		var rec struct {
			Dir   string `json:"dir"`
			Frame string `json:"frame"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if rec.Dir != C2S && rec.Dir != S2C {
			return nil, fmt.Errorf("%s:%d: dir %q", path, n, rec.Dir)
		}
		frames = append(frames, Frame{Dir: rec.Dir, Line: n, Raw: []byte(rec.Frame)})
	}
	return frames, sc.Err()
}

// VectorFiles are the files of testdata/vectors, in the README's order.
var VectorFiles = []string{
	"framing.ndjson", "requests.ndjson", "content-blocks.ndjson", "notifications.ndjson",
	"session-events.ndjson", "errors.ndjson", "client-flows.ndjson",
}

// VectorFrames returns the frames of a vector, in the order they are
// read: its given.preFrames, then its frame, frames, or the lines its
// raw bytes or chunks hold, read as the line transport reads them (split
// at LF, an unterminated tail dropped, invalid UTF-8 replaced, trimmed
// as ECMAScript trims, empty lines skipped: docs/wire.md §2.1).
func VectorFrames(v vectortest.Vector) ([]Frame, error) {
	dir := map[string]string{"client->server": C2S, "server->client": S2C}[v.Direction]
	if dir == "" {
		return nil, fmt.Errorf("vector %s: direction %q", v.Name, v.Direction)
	}
	var raws [][]byte
	if pre := v.Given["preFrames"]; pre != nil {
		var list []json.RawMessage
		if err := json.Unmarshal(pre, &list); err != nil {
			return nil, fmt.Errorf("vector %s: given.preFrames: %w", v.Name, err)
		}
		for _, f := range list {
			raws = append(raws, f)
		}
	}
	switch {
	case v.Frames != nil:
		for _, f := range v.Frames {
			raws = append(raws, f)
		}
	case v.Frame != nil && v.Raw == nil && v.ChunksHex == nil:
		raws = append(raws, v.Frame)
	default:
		chunks, err := v.Chunks()
		if err != nil {
			return nil, fmt.Errorf("vector %s: %w", v.Name, err)
		}
		raws = append(raws, SplitLines(bytes.Join(chunks, nil))...)
	}
	frames := make([]Frame, len(raws))
	for i, r := range raws {
		var buf bytes.Buffer
		if json.Compact(&buf, r) == nil {
			r = buf.Bytes()
		}
		frames[i] = Frame{Dir: dir, Line: i + 1, Raw: r}
	}
	return frames, nil
}

// SplitLines returns the lines of the byte stream b as the line transport
// reads them (docs/wire.md §2.1).
func SplitLines(b []byte) [][]byte {
	var out [][]byte
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return out // the unterminated tail is dropped
		}
		line := lines.TrimSpace(bytes.ToValidUTF8(b[:i], []byte("\uFFFD")))
		if len(line) > 0 {
			out = append(out, line)
		}
		b = b[i+1:]
	}
}

// Pendings returns the requests in flight a vector gives, as [id, method]
// pairs: given.pending ([{id, method}]) and expect.pending ({id, method}).
func Pendings(v vectortest.Vector) ([][2]json.RawMessage, error) {
	type entry struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	var out [][2]json.RawMessage
	if g := v.Given["pending"]; g != nil {
		var list []entry
		if err := json.Unmarshal(g, &list); err != nil {
			return nil, fmt.Errorf("vector %s: given.pending: %w", v.Name, err)
		}
		for _, e := range list {
			out = append(out, [2]json.RawMessage{e.ID, json.RawMessage(strconv.Quote(e.Method))})
		}
	}
	if x := v.Expect["pending"]; x != nil {
		var e entry
		if err := json.Unmarshal(x, &e); err != nil {
			return nil, fmt.Errorf("vector %s: expect.pending: %w", v.Name, err)
		}
		out = append(out, [2]json.RawMessage{e.ID, json.RawMessage(strconv.Quote(e.Method))})
	}
	return out, nil
}

// Exception is a vector whose document verdict is not the one its valid
// flag gives: an invalid vector the document accepts (no schema of it
// states the rule) or a valid one it refuses (the flag is of another
// layer than payloads).
type Exception struct {
	File, Name string
	Accepted   bool // the document accepts it (an invalid vector); else it refuses it (a valid one)
	Why        string
}

// The tables of docs/sdkproto.md that list the exceptions, each after
// its marker comment.
const (
	acceptedMarker = "<!-- dshdoc: invalid vectors the document accepts -->"
	refusedMarker  = "<!-- dshdoc: valid vectors the document refuses -->"
)

var backticked = regexp.MustCompile("`([^`]+)`")

// Exceptions reads the two tables of docs/sdkproto.md that list the
// vectors whose verdict differs from their valid flag. Each table
// follows its marker comment; a row is "| file | `name`, `name` | why |".
func Exceptions() ([]Exception, error) {
	path := filepath.Join(Root(), "docs", "sdkproto.md")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Exception
	for _, t := range []struct {
		marker   string
		accepted bool
	}{{acceptedMarker, true}, {refusedMarker, false}} {
		i := bytes.Index(data, []byte(t.marker))
		if i < 0 {
			return nil, fmt.Errorf("%s: no %s", path, t.marker)
		}
		rows := 0
		for _, line := range strings.Split(string(data[i+len(t.marker):]), "\n")[1:] {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "|") {
				if rows > 0 {
					break
				}
				continue
			}
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if len(cells) < 3 || strings.Trim(cells[0], " -") == "" || strings.TrimSpace(cells[0]) == "File" {
				continue // the separator or the header
			}
			rows++
			file := strings.Trim(strings.TrimSpace(cells[0]), "`")
			why := strings.TrimSpace(strings.Join(cells[2:], "|"))
			names := backticked.FindAllStringSubmatch(cells[1], -1)
			if len(names) == 0 {
				return nil, fmt.Errorf("%s: a row of %s names no vector: %s", path, t.marker, line)
			}
			for _, n := range names {
				out = append(out, Exception{File: file, Name: n[1], Accepted: t.accepted, Why: why})
			}
		}
		if rows == 0 {
			return nil, fmt.Errorf("%s: no table after %s", path, t.marker)
		}
	}
	return out, nil
}

// Verdict is a validator's verdict on a check: nil when the schema
// accepts the value.
type Verdict func(Check) error

// verdictOf is the verdict on a judged frame: its refusal, or the
// validator's on its check, or nil when the document says nothing of it.
func verdictOf(jd Judgement, v Verdict) error {
	switch {
	case jd.Refusal != "":
		return errors.New(jd.Refusal)
	case jd.Check == nil:
		return nil
	}
	return v(*jd.Check)
}

// TranscriptCount counts the frames of one transcript by kind. Refused
// lists the client's requests the document refuses (each one the runtime
// refused too, else Problems says so).
type TranscriptCount struct {
	File                                                    string
	Frames, Requests, Results, Errors, Notifications, Other int
	Refused                                                 []string
	ByMethod                                                map[string]int // "method kind" → frames a schema judged
}

// String is the count as one line.
func (c TranscriptCount) String() string {
	return fmt.Sprintf("%-32s %3d frames: %2d requests (%d refused, by the runtime too), %2d results, %d errors, %3d notifications, %d other",
		c.File, c.Frames, c.Requests, len(c.Refused), c.Results, c.Errors, c.Notifications, c.Other)
}

// JudgeTranscripts judges every frame of every recorded transcript by doc,
// with v for the schemas' verdicts, and returns the counts per file and the
// problems: a frame of the runtime's that the document refuses or says
// nothing of, a request of the client's that the document refuses and the
// runtime did not (it answered it with a result, or not at all).
func JudgeTranscripts(doc *openrpc.Document, v Verdict) (counts []TranscriptCount, problems []string, err error) {
	paths, err := Transcripts()
	if err != nil {
		return nil, nil, err
	}
	for _, path := range paths {
		name := filepath.Base(path)
		frames, err := ReadTranscript(path)
		if err != nil {
			return nil, nil, err
		}
		c := TranscriptCount{File: name, Frames: len(frames), ByMethod: map[string]int{}}
		j := NewJudge(doc)
		refused := map[string]string{} // id → the request the document refuses
		var order []string
		for _, f := range frames {
			jd := j.Frame(f.Dir, f.Raw)
			err := verdictOf(jd, v)
			switch jd.Kind {
			case Request:
				c.Requests++
			case Result:
				c.Results++
			case Error:
				c.Errors++
				if why, ok := refused[jd.ID]; ok {
					c.Refused = append(c.Refused, why)
					delete(refused, jd.ID)
				}
			case Notification:
				c.Notifications++
			default:
				c.Other++
			}
			if jd.Judged() {
				c.ByMethod[jd.Method+" "+string(jd.Kind)]++
			}
			switch {
			case err == nil:
			case f.Dir == C2S && jd.Kind == Request:
				refused[jd.ID] = fmt.Sprintf("%s:%d %s: %v", name, f.Line, jd.Method, err)
				order = append(order, jd.ID)
			default:
				problems = append(problems, fmt.Sprintf("%s:%d: the document refuses a %s %s frame: %v", name, f.Line, f.Dir, jd.Kind, err))
			}
			if jd.Kind == Other && f.Dir == S2C {
				problems = append(problems, fmt.Sprintf("%s:%d: a frame of the runtime's that the document says nothing of (%s)", name, f.Line, jd.Why))
			}
		}
		for _, id := range order {
			if why, ok := refused[id]; ok {
				problems = append(problems, "the document refuses a request the runtime did not refuse: "+why)
			}
		}
		counts = append(counts, c)
	}
	return counts, problems, nil
}

// Total sums counts.
func Total(counts []TranscriptCount) TranscriptCount {
	t := TranscriptCount{File: "total", ByMethod: map[string]int{}}
	for _, c := range counts {
		t.Frames += c.Frames
		t.Requests += c.Requests
		t.Results += c.Results
		t.Errors += c.Errors
		t.Notifications += c.Notifications
		t.Other += c.Other
		t.Refused = append(t.Refused, c.Refused...)
		for k, n := range c.ByMethod {
			t.ByMethod[k] += n
		}
	}
	return t
}

// VectorVerdict is the document's verdict on one vector: Err is nil when
// it accepts every frame, else the first refusal.
type VectorVerdict struct {
	File  string
	Name  string
	Valid bool
	Err   error
}

// JudgeVectors judges every vector of every file of testdata/vectors (all
// revisions) by doc, with v for the schemas' verdicts.
func JudgeVectors(doc *openrpc.Document, v Verdict) ([]VectorVerdict, error) {
	var out []VectorVerdict
	for _, file := range VectorFiles {
		vectors, err := vectortest.Load(file)
		if err != nil {
			return nil, err
		}
		for _, vec := range vectors {
			frames, err := VectorFrames(vec)
			if err != nil {
				return nil, err
			}
			pending, err := Pendings(vec)
			if err != nil {
				return nil, err
			}
			j := NewJudge(doc)
			for _, p := range pending {
				var method string
				_ = json.Unmarshal(p[1], &method)
				j.Pending(p[0], method)
			}
			vv := VectorVerdict{File: file, Name: vec.Name, Valid: vec.Valid}
			for _, f := range frames {
				if err := verdictOf(j.Frame(f.Dir, f.Raw), v); err != nil {
					vv.Err = fmt.Errorf("frame %d: %w", f.Line, err)
					break
				}
			}
			out = append(out, vv)
		}
	}
	return out, nil
}

// CompareVectors holds the verdicts against the vectors' valid flags and
// the exceptions of docs/sdkproto.md: an invalid vector must be refused and
// a valid one accepted, unless listed, and a listed one must be judged as
// its list says. It returns the problems and a line of counts per file.
func CompareVectors(verdicts []VectorVerdict, exceptions []Exception) (problems, counts []string) {
	listed := map[string]Exception{}
	for _, e := range exceptions {
		key := e.File + " " + e.Name
		if _, dup := listed[key]; dup {
			problems = append(problems, "docs/sdkproto.md lists "+key+" twice")
		}
		listed[key] = e
	}
	seen := map[string]bool{}
	type tally struct{ n, valid, refused, listed int }
	tallies := map[string]*tally{}
	for _, vv := range verdicts {
		key := vv.File + " " + vv.Name
		seen[key] = true
		t := tallies[vv.File]
		if t == nil {
			t = &tally{}
			tallies[vv.File] = t
		}
		t.n++
		if vv.Valid {
			t.valid++
		}
		if vv.Err != nil {
			t.refused++
		}
		e, isListed := listed[key]
		if isListed {
			t.listed++
		}
		switch {
		case isListed && e.Accepted == vv.Valid:
			problems = append(problems, fmt.Sprintf("%s: listed in docs/sdkproto.md among the %s vectors, but its valid flag is %v", key,
				map[bool]string{true: "invalid", false: "valid"}[e.Accepted], vv.Valid))
		case vv.Valid && vv.Err != nil && !isListed:
			problems = append(problems, fmt.Sprintf("%s: a valid vector the document refuses: %v", key, vv.Err))
		case vv.Valid && vv.Err == nil && isListed:
			problems = append(problems, key+": listed in docs/sdkproto.md as refused, but the document accepts it")
		case !vv.Valid && vv.Err == nil && !isListed:
			problems = append(problems, key+": an invalid vector the document accepts: refuse it, or list it in docs/sdkproto.md with the reason")
		case !vv.Valid && vv.Err != nil && isListed:
			problems = append(problems, fmt.Sprintf("%s: listed in docs/sdkproto.md as accepted, but the document refuses it: %v", key, vv.Err))
		}
	}
	for key := range listed {
		if !seen[key] {
			problems = append(problems, "docs/sdkproto.md lists "+key+", which testdata/vectors does not have")
		}
	}
	for _, file := range VectorFiles {
		if t := tallies[file]; t != nil {
			counts = append(counts, fmt.Sprintf("%-22s %3d vectors (%2d valid, %2d invalid): %2d refused, %2d accepted, %2d listed",
				file, t.n, t.valid, t.n-t.valid, t.refused, t.n-t.refused, t.listed))
		}
	}
	return problems, counts
}
