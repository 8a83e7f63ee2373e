package sdktest

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/linerpc/linerpc/rpc"
)

// Dir is the direction a frame was sent in, as transcripts name it
// (testdata/transcripts/README.md).
type Dir string

// The two directions.
const (
	ClientToRuntime Dir = "c2s" // a frame the client wrote
	RuntimeToClient Dir = "s2c" // a frame the runtime wrote
)

// Frame is one frame that crossed the connection, as the runtime read or
// wrote it.
type Frame struct {
	Dir  Dir
	Line []byte // the frame's line, without its LF
}

// String returns the frame as a line of a transcript:
// {"dir":"c2s","frame":"..."}.
func (f Frame) String() string { return string(f.transcriptLine()) }

func (f Frame) transcriptLine() []byte {
	b, _ := json.Marshal(struct {
		Dir   Dir    `json:"dir"`
		Frame string `json:"frame"`
	}{f.Dir, string(f.Line)})
	return b
}

// envelope is what the assertions read of a frame.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *wireError      `json:"error"`
}

// wireError is an error object as written.
type wireError struct {
	Code    *int64          `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// rpcError returns e as an *rpc.Error (nil for nil).
func (e *wireError) rpcError() *rpc.Error {
	if e == nil {
		return nil
	}
	r := &rpc.Error{Message: e.Message, Data: e.Data, CodeMissing: e.Code == nil}
	if e.Code != nil {
		r.Code = rpc.Code(*e.Code)
	}
	return r
}

// parse decodes the members of the frame that the assertions read; ok is
// false for a line that is not a JSON object.
func (f Frame) parse() (e envelope, ok bool) {
	return e, json.Unmarshal(f.Line, &e) == nil
}

// isRequest reports a request (an id and a method), of method when
// method is not "".
func (e envelope) isRequest(method string) bool {
	return e.Method != nil && len(e.ID) > 0 && string(e.ID) != "null" && (method == "" || *e.Method == method)
}

// Request is a request that crossed the connection.
type Request struct {
	ID     json.RawMessage // as written
	Method string
	Params json.RawMessage // nil when absent
}

// Answer is a request the runtime sent to the client (scripted.Turn.Ask) with the
// client's answer.
type Answer struct {
	Request
	// Result is the answer's result, or Error its error; both are nil
	// while no answer came.
	Result json.RawMessage
	Error  *rpc.Error
}

// recorder keeps every frame in the order the runtime read or wrote it,
// and tells waiters of each new one; out, when set, gets each as a
// transcript line.
type recorder struct {
	out io.Writer

	mu      sync.Mutex
	frames  []Frame
	changed chan struct{} // closed, and forgotten, by the next frame
	outErr  error
}

func (r *recorder) add(dir Dir, line []byte) {
	f := Frame{Dir: dir, Line: bytes.Clone(line)}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.frames = append(r.frames, f)
	if r.out != nil && r.outErr == nil {
		_, r.outErr = r.out.Write(append(f.transcriptLine(), '\n'))
	}
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// snapshot returns the frames so far and a channel closed by the next.
func (r *recorder) snapshot() ([]Frame, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return append([]Frame(nil), r.frames...), r.changed
}

// tap cuts the bytes of one direction into frames for a recorder.
type tap struct {
	dir     Dir
	rec     *recorder
	partial []byte // the frame not yet ended
}

func (t *tap) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.partial = append(t.partial, p...)
			return
		}
		line := p[:i]
		if len(t.partial) > 0 {
			line = append(t.partial, line...)
			t.partial = t.partial[:0]
		}
		if len(bytes.TrimSpace(line)) > 0 {
			t.rec.add(t.dir, bytes.TrimSuffix(line, []byte("\r")))
		}
		p = p[i+1:]
	}
}

// tapReader records what the runtime reads.
type tapReader struct {
	r io.Reader
	t tap
}

func (r *tapReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.t.feed(p[:n])
	return n, err
}

// tapWriter records what the runtime writes, as the write starts: the
// client may read a frame, and answer it, before the write returns, and
// the answer must not be recorded before the frame.
type tapWriter struct {
	w io.Writer
	t tap
}

func (w *tapWriter) Write(p []byte) (int, error) {
	w.t.feed(p)
	return w.w.Write(p)
}

// readTranscript parses transcript lines, skipping an unfinished last one.
func readTranscript(data []byte) []Frame {
	var frames []Frame
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return frames
		}
		var l struct {
			Dir   Dir    `json:"dir"`
			Frame string `json:"frame"`
		}
		if json.Unmarshal(data[:i], &l) == nil {
			frames = append(frames, Frame{Dir: l.Dir, Line: []byte(l.Frame)})
		}
		data = data[i+1:]
	}
}

// requests returns the requests sent in direction dir, of method when not "".
func requests(frames []Frame, dir Dir, method string) []Request {
	var out []Request
	for _, f := range frames {
		if f.Dir != dir {
			continue
		}
		if e, ok := f.parse(); ok && e.isRequest(method) {
			out = append(out, Request{ID: e.ID, Method: *e.Method, Params: e.Params})
		}
	}
	return out
}

// answers returns the runtime's requests of method with the client's
// answers, matched by id.
func answers(frames []Frame, method string) []Answer {
	var out []Answer
	index := map[string]int{} // id -> place in out
	for _, f := range frames {
		e, ok := f.parse()
		switch {
		case !ok:
		case f.Dir == RuntimeToClient && e.isRequest(method):
			index[string(e.ID)] = len(out)
			out = append(out, Answer{Request: Request{ID: e.ID, Method: *e.Method, Params: e.Params}})
		case f.Dir == ClientToRuntime && e.Method == nil:
			if i, ok := index[string(e.ID)]; ok {
				out[i].Result, out[i].Error = e.Result, e.Error.rpcError()
				delete(index, string(e.ID))
			}
		}
	}
	return out
}
