package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/rpc"
)

// MaxFrameSize is the longest frame Serve reads from a client, as
// rpc.Conn reads by default: a longer line is a departure.
const MaxFrameSize = rpc.DefaultMaxFrameSize

// departureCode is the code of the error a departing request gets: the
// code the runtime answers every failure with (docs/wire.md §2.7).
const departureCode = -32603

// Serve plays the runtime's side of the recording to one client that
// writes r and reads w (a runtime process passes os.Stdin and os.Stdout),
// as the package comment describes, until one of:
//
//   - the recording's last client frame, a shutdown request, has been
//     answered and every frame of the recording written: Serve returns
//     nil, and a runtime process should exit 0, as the real one does;
//   - the client's input ended after its last client frame (the
//     recording does not end with shutdown): Serve writes what is left
//     and returns nil;
//   - the client departed from the recording: Serve writes the frames its
//     matched frames are owed, answers a departing request with a
//     JSON-RPC error whose message is the Departure's text, and returns the
//     *Departure; an input that ends early is a departure too;
//   - ctx ended: it returns ctx.Err();
//   - reading r or writing w failed: it returns that error.
//
// Each frame is written with one Write. Serve reads r on a goroutine of
// its own: when r has SetReadDeadline (a net.Conn, an os.Pipe), Serve sets
// a deadline in the past as it returns, which ends a Read in progress;
// otherwise (an io.Pipe, an os.Stdin that cannot be interrupted) that
// goroutine ends when r yields, so close r once Serve has returned. A Write
// blocked in w holds Serve until it returns, whatever ctx does: close w to
// end it.
func (rec *Recording) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	s := &server{
		rec:     rec,
		w:       w,
		b:       newBindings(),
		matched: make([]bool, len(rec.frames)),
		ids:     map[int]json.RawMessage{},
	}
	for i := range rec.frames {
		if rec.frames[i].Dir == RuntimeToClient {
			s.pending = append(s.pending, i)
		}
	}
	in := make(chan input)
	stop := make(chan struct{})
	defer func() {
		close(stop)
		if d, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok {
			d.SetReadDeadline(time.Now()) // ends a blocked Read
		}
	}()
	go read(r, in, stop)

	if err := s.release(); err != nil {
		return err
	}
	if s.done() {
		return nil
	}
	for {
		var got input
		select {
		case <-ctx.Done():
			return ctx.Err()
		case got = <-in:
		}
		switch {
		case got.err == io.EOF:
			if i := s.expected(); i >= 0 {
				f := &rec.frames[i]
				if err := s.release(); err != nil {
					return err
				}
				return &Departure{Line: f.Line, Expected: describe(&f.Frame), Reason: "the client's input ended before it"}
			}
			return s.release()
		case got.err != nil:
			return fmt.Errorf("replay: reading the client: %w", got.err)
		case got.oversize > 0:
			return s.depart(nil, s.here(fmt.Sprintf("a line of %d bytes, longer than the maximum frame size (%d)", got.oversize, MaxFrameSize)))
		}
		// A blank line is no frame (docs/wire.md §2.1).
		if f := newFrame(0, ClientToRuntime, got.line); f.Text != "" {
			if err := s.take(f); err != nil {
				return err
			}
		}
		if got.more {
			continue // the frames that came with it are matched first
		}
		if err := s.release(); err != nil {
			return err
		}
		if s.done() {
			return nil
		}
	}
}

// input is what the reading goroutine hands Serve: a line, an oversize
// line's size, or the end of the input.
type input struct {
	line     []byte
	more     bool // another whole line is already read
	oversize int64
	err      error
}

// read reads r line by line into in until the input ends or stop is
// closed.
func read(r io.Reader, in chan<- input, stop <-chan struct{}) {
	lr := lines.NewReader(r, MaxFrameSize)
	for {
		ev, _, err := lr.Next() // an unterminated tail is dropped (docs/wire.md §2.1)
		var got input
		switch {
		case err != nil:
			got.err = err
		case ev.Oversize:
			got.oversize = ev.Size
		default:
			got.line = bytes.Clone(ev.Line)
			got.more = lr.HasLine()
		}
		select {
		case in <- got:
		case <-stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// server is the state of one Serve.
type server struct {
	rec     *Recording
	w       io.Writer
	b       *bindings
	matched []bool                  // by frame index: the client frames received
	ids     map[int]json.RawMessage // the client's id of each recorded request received
	pending []int                   // the runtime frames not written yet, in order
}

// expected returns the index of the first client frame of the recording
// not received yet, -1 when there is none.
func (s *server) expected() int {
	for _, g := range s.rec.groups {
		for _, i := range g {
			if !s.matched[i] {
				return i
			}
		}
	}
	return -1
}

// done reports that serving is over: every frame of the recording went
// across, and its last client frame was a shutdown request.
func (s *server) done() bool {
	return s.rec.lastShutdown && len(s.pending) == 0 && s.expected() < 0
}

// take matches the client's frame against the frames of the current
// group; on a departure it writes what is owed, answers a request, and
// returns the *Departure.
func (s *server) take(got *frame) error {
	i := s.expected()
	if i < 0 {
		var last *frame
		for j := range s.rec.frames {
			if s.rec.frames[j].Dir == ClientToRuntime {
				last = &s.rec.frames[j]
			}
		}
		if last == nil {
			return s.depart(got, &Departure{Reason: "the recording has no client frame, and the client sent a " + gotWhat(got)})
		}
		return s.depart(got, &Departure{After: true, Line: last.Line, Expected: describe(&last.Frame),
			Reason: "the client sent one more: " + gotWhat(got)})
	}
	var best *frame
	var bestReason string
	var open []string
	for _, j := range s.rec.groups[s.rec.frames[i].group] {
		if s.matched[j] {
			continue
		}
		want := &s.rec.frames[j]
		reason, commit := s.b.match(want, got)
		if reason == "" {
			commit()
			s.matched[j] = true
			if got.Kind == Request {
				s.ids[j] = got.id
			}
			return nil
		}
		open = append(open, fmt.Sprint(want.Line))
		if best == nil || best.Method != got.Method && want.Method == got.Method && want.Kind == got.Kind {
			best, bestReason = want, reason
		}
	}
	if len(open) > 1 {
		bestReason = fmt.Sprintf("none of lines %s (written together, in any order) matches the client's %s; line %d: %s",
			strings.Join(open, ", "), gotWhat(got), best.Line, bestReason)
	}
	return s.depart(got, &Departure{Line: best.Line, Expected: describe(&best.Frame), Reason: bestReason})
}

// gotWhat names the client's frame for a message.
func gotWhat(f *frame) string {
	switch {
	case f.Kind == Malformed:
		return "line that is not a JSON-RPC frame"
	case f.Method != "":
		return f.Method + " " + string(f.Kind)
	}
	return string(f.Kind)
}

// here returns a departure at the next client frame expected.
func (s *server) here(reason string) *Departure {
	dep := &Departure{Reason: reason}
	if i := s.expected(); i >= 0 {
		f := &s.rec.frames[i]
		dep.Line, dep.Expected = f.Line, describe(&f.Frame)
	}
	return dep
}

// depart ends serving on the departure dep of the client's frame got
// (nil when it was no frame): the frames owed to what was matched are
// written, a departing request is answered with the error, and the error
// is returned.
func (s *server) depart(got *frame, dep *Departure) error {
	if got != nil {
		dep.Got = got.Text
	}
	if err := s.release(); err != nil {
		return err
	}
	if got != nil && got.Kind == Request {
		msg, _ := json.Marshal(dep.Error())
		resp := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, got.id, departureCode, msg)
		if err := s.write([]byte(resp)); err != nil {
			return err
		}
	}
	return dep
}

// release writes, in the recording's order, every runtime frame whose
// cause has been received.
func (s *server) release() error {
	kept := s.pending[:0]
	for n, i := range s.pending {
		f := &s.rec.frames[i]
		if f.cause >= 0 && !s.matched[f.cause] {
			kept = append(kept, i)
			continue
		}
		if err := s.write(s.rewrite(f)); err != nil {
			s.pending = append(kept, s.pending[n+1:]...)
			return err
		}
	}
	s.pending = kept
	return nil
}

// write writes one frame with one Write.
func (s *server) write(frame []byte) error {
	if _, err := s.w.Write(append(frame, '\n')); err != nil {
		return fmt.Errorf("replay: writing to the client: %w", err)
	}
	return nil
}

// rewrite returns a runtime frame as this client must see it: its
// request's id, its sessions' names and its cwd.
func (s *server) rewrite(f *frame) []byte {
	out := []byte(f.Text)
	if f.Kind == Response && f.answers >= 0 {
		if id, ok := s.ids[f.answers]; ok {
			out = splice(out, id, "id")
		}
	}
	if (f.Kind == Notification || f.Kind == Request) && kindOf(f.params) == '{' {
		for _, m := range []string{"sessionId", "parentSessionId", "childSessionId"} {
			if id, ok := stringMember(f.params, m); ok {
				if c, ok := s.b.sessions[id]; ok && c != id {
					out = splice(out, jsonString(c), "params", m)
				}
			}
		}
	}
	for recorded, c := range s.b.cwds {
		if recorded != c && rewritableCwd(recorded) {
			out = bytes.ReplaceAll(out, stringContent(recorded), stringContent(c))
		}
	}
	return out
}

// rewritableCwd reports whether a recorded cwd is rewritten where it
// appears: not when it is so short ("", "/", ".") that its bytes are
// everywhere.
func rewritableCwd(cwd string) bool {
	return len(cwd) > 1 && cwd != ".." && cwd != "./"
}

// splice replaces the value of the member at path (object members from
// the top) of the JSON object obj with val; obj is returned unchanged
// when the member is missing.
func splice(obj, val []byte, path ...string) []byte {
	start, end, ok := 0, len(obj), true
	for _, name := range path {
		var s, e int
		s, e, ok = memberSpan(obj[start:end], name)
		if !ok {
			return obj
		}
		start, end = start+s, start+e
	}
	out := make([]byte, 0, len(obj)-(end-start)+len(val))
	out = append(out, obj[:start]...)
	out = append(out, val...)
	return append(out, obj[end:]...)
}

// memberSpan returns where the value of the member name of the JSON
// object obj starts and ends (the last one, when it is repeated, as
// JSON.parse keeps it).
func memberSpan(obj []byte, name string) (start, end int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, 0, false
		}
		if key, _ := t.(string); key == name {
			end = int(dec.InputOffset())
			start, ok = end-len(raw), true
		}
	}
	return start, end, ok
}

// jsonString encodes s as a JSON string, <, > and & as they are.
func jsonString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// stringContent is s encoded as the inside of a JSON string.
func stringContent(s string) []byte {
	q := jsonString(s)
	return q[1 : len(q)-1]
}
