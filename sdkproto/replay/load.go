package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/sdkproto"
)

// Format is the form a recording was read in.
type Format string

// The forms Load reads.
const (
	FormatTranscript Format = "transcript" // {"dir","frame"} lines, as testdata/transcripts
	FormatTapLog     Format = "tap log"    // dshrpc tap's log: transcript lines with a time
	FormatRaw        Format = "raw frames" // one JSON-RPC frame a line
)

// Dir is the direction a frame was sent in.
type Dir string

// The directions, as transcripts name them.
const (
	ClientToRuntime Dir = "c2s"
	RuntimeToClient Dir = "s2c"
)

// Kind is what a frame is, classified as a wire end classifies it
// (docs/wire.md §2.4).
type Kind string

// The kinds of frames.
const (
	Request      Kind = "request"
	Response     Kind = "response"
	Notification Kind = "notification"
	Malformed    Kind = "malformed" // not a JSON-RPC frame: a reader drops it
)

// Frame is one frame of a Recording.
type Frame struct {
	Line   int    // the line of the file it was read from, from 1
	Dir    Dir    // who sent it
	Kind   Kind   // request, response, notification or malformed
	Method string // of a request or a notification
	// Text is the frame as recorded, white space around it trimmed.
	Text string
}

// frame is a Frame with what serving it needs.
type frame struct {
	Frame
	id     json.RawMessage // of a request or a response
	params json.RawMessage // nil when absent
	obj    map[string]json.RawMessage
	// group numbers the runs of client frames written back to back: the
	// frames of a group may come in any order.
	group int
	// cause is the index of the client frame that a runtime frame waits
	// for (-1: none, written at once).
	cause int
	// answers is the index of the client request that a runtime
	// response answers (-1: none).
	answers int
}

// Recording is a recorded conversation, loaded by Load, ready to serve
// any number of clients, one at a time or at once: Serve does not change
// it.
type Recording struct {
	format Format
	frames []frame
	groups [][]int // indices of the client frames of each group, in order
	// lastShutdown says the recording's last client frame is a shutdown
	// request: serving ends once it is answered.
	lastShutdown bool
}

// The methods of the runtime's notifications (docs/wire.md §1).
var runtimeNotifications = map[string]bool{
	"session.event": true, "session.status": true, "subagent.started": true, "subagent.finished": true,
}

// Load reads a recording (a transcript, a tap log, or raw frames; see the
// package comment) to its end. Its errors name the line at fault: a line
// that is not of the recording's form, a frame a tap log cut short, a raw
// frame whose direction cannot be told.
func Load(r io.Reader) (*Recording, error) {
	rec := &Recording{}
	br := bufio.NewReader(r)
	decided := false
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			if err == io.EOF {
				break
			}
			return nil, fmt.Errorf("replay: reading line %d: %w", n, err)
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(lines.TrimSpace(line)) == 0 {
			if err == io.EOF {
				break
			}
			continue
		}
		if !decided {
			rec.format, decided = detect(line), true
		}
		var f *frame
		var lerr error
		if rec.format == FormatRaw {
			f, lerr = rawLine(n, line)
		} else {
			f, lerr = transcriptLine(n, line)
		}
		if lerr != nil {
			return nil, lerr
		}
		if f != nil {
			rec.frames = append(rec.frames, *f)
		}
		if err == io.EOF {
			break
		}
	}
	if len(rec.frames) == 0 {
		return nil, errors.New("replay: the recording holds no frame")
	}
	if err := rec.link(); err != nil {
		return nil, err
	}
	return rec, nil
}

// detect tells the form of a recording from its first line.
func detect(line []byte) Format {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return FormatRaw
	}
	_, dir := m["dir"]
	_, fr := m["frame"]
	_, method := m["method"]
	_, rpc := m["jsonrpc"]
	if !dir || !fr || method || rpc {
		return FormatRaw
	}
	if _, t := m["t"]; t {
		return FormatTapLog
	}
	return FormatTranscript
}

// transcriptLine reads one line of a transcript or a tap log; nil, nil
// for an unterminated last line a tap log kept, which no reader takes.
func transcriptLine(n int, line []byte) (*frame, error) {
	var e struct {
		Dir          *string         `json:"dir"`
		Frame        json.RawMessage `json:"frame"`
		Truncated    bool            `json:"truncated"`
		Size         int64           `json:"size"`
		Unterminated bool            `json:"unterminated"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, fmt.Errorf("replay: line %d: not a transcript line (want {\"dir\":\"c2s\"|\"s2c\",\"frame\":...}): %v", n, err)
	}
	if e.Dir == nil || Dir(*e.Dir) != ClientToRuntime && Dir(*e.Dir) != RuntimeToClient {
		return nil, fmt.Errorf("replay: line %d: a transcript line without dir \"c2s\" or \"s2c\": %s", n, lines.Excerpt(line))
	}
	if len(e.Frame) == 0 {
		return nil, fmt.Errorf("replay: line %d: a transcript line without frame: %s", n, lines.Excerpt(line))
	}
	text := []byte(e.Frame) // the frame itself, as JSON
	if e.Frame[0] == '"' {
		var s string
		if err := json.Unmarshal(e.Frame, &s); err != nil {
			return nil, fmt.Errorf("replay: line %d: frame is not a valid JSON string: %v", n, err)
		}
		text = []byte(s)
	}
	if e.Truncated {
		return nil, fmt.Errorf("replay: line %d: the log cut this frame short (%d bytes of %d logged): it cannot be replayed (tap --max-log-frame keeps more)", n, len(text), e.Size)
	}
	if e.Unterminated {
		return nil, nil // a reader discards it (docs/wire.md §2.1)
	}
	return newFrame(n, Dir(*e.Dir), text), nil
}

// directionPrefixes give the direction of a raw frame.
var directionPrefixes = []struct {
	prefix string
	dir    Dir
}{
	{"c2s", ClientToRuntime}, {"s2c", RuntimeToClient},
	{"C→S", ClientToRuntime}, {"S→C", RuntimeToClient},
}

// rawLine reads one raw frame, its direction given or left to link.
func rawLine(n int, line []byte) (*frame, error) {
	text := lines.TrimSpace(line)
	var dir Dir
	for _, p := range directionPrefixes {
		if rest, ok := bytes.CutPrefix(text, []byte(p.prefix)); ok && len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\t') {
			dir, text = p.dir, rest
			break
		}
	}
	f := newFrame(n, dir, text)
	if f.Kind == Malformed && dir == "" {
		return nil, fmt.Errorf("replay: line %d: not a JSON-RPC frame, so its direction cannot be told (put c2s or s2c before it): %s", n, lines.Excerpt(text))
	}
	return f, nil
}

// newFrame classifies a frame as a wire end does (docs/wire.md §2.1, §2.4):
// invalid UTF-8 as U+FFFD, white space trimmed, then a string or number
// id and a string method make a request, an id alone a response, a method
// alone a notification.
func newFrame(n int, dir Dir, text []byte) *frame {
	if !utf8.Valid(text) {
		text = lines.AppendValidUTF8(nil, text)
	}
	text = lines.TrimSpace(text)
	f := &frame{Frame: Frame{Line: n, Dir: dir, Kind: Malformed, Text: string(text)}, cause: -1, answers: -1}
	if json.Unmarshal(text, &f.obj) != nil || f.obj == nil {
		f.obj = nil
		return f
	}
	id, hasID := f.obj["id"]
	hasID = hasID && (kindOf(id) == '"' || kindOf(id) == '0')
	var method string
	hasMethod := f.obj["method"] != nil && kindOf(f.obj["method"]) == '"' && json.Unmarshal(f.obj["method"], &method) == nil
	switch {
	case hasID && hasMethod:
		f.Kind = Request
	case hasID:
		f.Kind = Response
	case hasMethod:
		f.Kind = Notification
	default:
		return f
	}
	if hasID {
		f.id = id
	}
	f.Method = method
	f.params = f.obj["params"]
	return f
}

// kindOf returns the first byte of a JSON value's kind: '{', '[', '"',
// '0' for a number, 't', 'f', 'n', or 0 when there is none.
func kindOf(v json.RawMessage) byte {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return 0
	}
	switch c := v[0]; {
	case c == '-' || c >= '0' && c <= '9':
		return '0'
	default:
		return c
	}
}

// link gives raw frames their direction and every frame its place in
// serving: the groups of client frames, the request each response
// answers, the client frame each runtime frame waits for.
func (rec *Recording) link() error {
	// The requests awaiting their response, by direction and id key.
	pending := map[Dir]map[string]int{ClientToRuntime: {}, RuntimeToClient: {}}
	// The latest client frame of each root session: a prompt to it, or an
	// answer to a runtime request about it.
	latest := map[string]int{}
	parents := map[string]string{} // child session → parent (subagent.started)
	lastClient := -1
	group := -1
	prevClient := false
	for i := range rec.frames {
		f := &rec.frames[i]
		if f.Dir == "" {
			switch f.Kind {
			case Request:
				// The runtime sends requests only where a client answers
				// them (sdkproto.ClientOptions.Responders): a recording
				// says so with s2c.
				f.Dir = ClientToRuntime
			case Notification:
				f.Dir = ClientToRuntime
				if runtimeNotifications[f.Method] {
					f.Dir = RuntimeToClient
				}
			case Response:
				_, toClient := pending[ClientToRuntime][idKey(f.id)]
				_, toRuntime := pending[RuntimeToClient][idKey(f.id)]
				switch {
				case toClient:
					f.Dir = RuntimeToClient
				case toRuntime:
					f.Dir = ClientToRuntime
				default:
					return fmt.Errorf("replay: line %d: a response to id %s, which no request before it awaits, so its direction cannot be told (put c2s or s2c before it)", f.Line, f.id)
				}
			}
		}
		other := RuntimeToClient
		if f.Dir == RuntimeToClient {
			other = ClientToRuntime
		}
		// A request awaits its response; a response answers the request
		// of the other side with its id.
		asked := -1
		switch f.Kind {
		case Request:
			pending[f.Dir][idKey(f.id)] = i
		case Response:
			if q, ok := pending[other][idKey(f.id)]; ok {
				delete(pending[other], idKey(f.id))
				asked = q
			}
		}
		if f.Dir == ClientToRuntime {
			if !prevClient {
				group++
				rec.groups = append(rec.groups, nil)
			}
			f.group = group
			rec.groups[group] = append(rec.groups[group], i)
			prevClient = true
			lastClient = i
			var session string
			var ok bool
			switch {
			case f.Kind == Request && f.Method == "session/prompt":
				session, ok = stringMember(f.params, "sessionId")
			case asked >= 0:
				session, ok = sessionOf(&rec.frames[asked])
			}
			if ok {
				latest[root(session, parents)] = i
			}
			rec.lastShutdown = f.Kind == Request && f.Method == "shutdown"
			continue
		}
		prevClient = false
		f.cause = lastClient
		if asked >= 0 {
			f.answers, f.cause = asked, asked
			continue
		}
		if f.Method == "subagent.started" {
			child, okc := stringMember(f.params, "childSessionId")
			parent, okp := stringMember(f.params, "parentSessionId")
			if okc && okp {
				parents[child] = parent
			}
		}
		if s, ok := sessionOf(f); ok {
			if c, ok := latest[root(s, parents)]; ok {
				f.cause = c
			}
		}
	}
	return nil
}

// sessionOf returns the session a frame is about: its params' sessionId,
// else their parentSessionId (subagent.started, subagent.finished).
func sessionOf(f *frame) (string, bool) {
	if f.Kind != Request && f.Kind != Notification {
		return "", false
	}
	if s, ok := stringMember(f.params, "sessionId"); ok {
		return s, true
	}
	return stringMember(f.params, "parentSessionId")
}

// root follows a session's parents (subagent.started) to its root.
func root(s string, parents map[string]string) string {
	for range len(parents) + 1 { // a cycle in a recording must not hang
		p, ok := parents[s]
		if !ok {
			break
		}
		s = p
	}
	return s
}

// idKey is what matches a response to its request: the id's JSON kind
// and value (a number by its value, as JSON.parse reads it).
func idKey(id json.RawMessage) string {
	if kindOf(id) == '0' {
		var v float64
		if json.Unmarshal(id, &v) == nil {
			return fmt.Sprintf("n%v", v)
		}
	}
	var s string
	if json.Unmarshal(id, &s) == nil {
		return "s" + s
	}
	return "r" + string(id)
}

// stringMember returns the string member name of a JSON object.
func stringMember(obj json.RawMessage, name string) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return "", false
	}
	var s string
	if kindOf(m[name]) != '"' || json.Unmarshal(m[name], &s) != nil {
		return "", false
	}
	return s, true
}

// Format returns the form the recording was read in.
func (rec *Recording) Format() Format { return rec.format }

// Frames returns the recording's frames, in order.
func (rec *Recording) Frames() []Frame {
	out := make([]Frame, len(rec.frames))
	for i, f := range rec.frames {
		out[i] = f.Frame
	}
	return out
}

// ClientFrames returns the frames the client is expected to send, in the
// order of the recording.
func (rec *Recording) ClientFrames() []Frame {
	var out []Frame
	for _, f := range rec.frames {
		if f.Dir == ClientToRuntime {
			out = append(out, f.Frame)
		}
	}
	return out
}

// InitializeParams returns the params of the recording's first
// initialize request, for a client to send them again (any cwd will do:
// it is not compared), and false when the recording has none or its
// params do not decode.
func (rec *Recording) InitializeParams() (sdkproto.InitializeParams, bool) {
	for _, f := range rec.frames {
		if f.Dir == ClientToRuntime && f.Kind == Request && f.Method == "initialize" {
			var p sdkproto.InitializeParams
			if p.UnmarshalJSON(orEmpty(f.params)) != nil {
				return sdkproto.InitializeParams{}, false
			}
			return p, true
		}
	}
	return sdkproto.InitializeParams{}, false
}

// Prompt is a session/prompt request of a recording.
type Prompt struct {
	Line      int    // its line in the recording
	SessionID string // the recorded session id
	// Blocks are its content blocks, to send them again.
	Blocks []sdkproto.ContentBlock
	// Text is the text of its text blocks, joined with newlines.
	Text string
}

// Prompts returns the recording's session/prompt requests, in order
// (those whose params do not decode are left out).
func (rec *Recording) Prompts() []Prompt {
	var out []Prompt
	for _, f := range rec.frames {
		if f.Dir != ClientToRuntime || f.Kind != Request || f.Method != "session/prompt" {
			continue
		}
		var p sdkproto.SessionPromptParams
		if p.UnmarshalJSON(orEmpty(f.params)) != nil {
			continue
		}
		var texts []string
		for _, b := range p.ContentBlocks {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
		out = append(out, Prompt{Line: f.Line, SessionID: p.SessionID, Blocks: p.ContentBlocks, Text: strings.Join(texts, "\n")})
	}
	return out
}

// orEmpty returns params, or {} when they are absent.
func orEmpty(params json.RawMessage) json.RawMessage {
	if params == nil {
		return json.RawMessage(`{}`)
	}
	return params
}
