package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/linerpc/linerpc/internal/lines"
)

// Departure is the error of a client that departed from the recording.
type Departure struct {
	// Line is the line of the recording whose client frame the client did
	// not send: the frame expected instead (the closest of those it could
	// have sent), or, when the recording had no client frame left, its
	// last one.
	Line int
	// Expected describes that frame: its direction, kind and method, e.g.
	// "c2s session/prompt request".
	Expected string
	// Got is the client's frame, as it sent it; "" when its input ended.
	Got string
	// Reason says what differed, e.g. `params.contentBlocks[0].text:
	// recorded "say hi", got "say bye"`.
	Reason string
	// After says that the recording had no client frame left: Line is its
	// last one, which the client had sent.
	After bool
}

// Error names the line, the frame expected and what differed.
func (d *Departure) Error() string {
	switch {
	case d.After:
		return fmt.Sprintf("replay: the client departed from the recording after its last client frame (line %d, a %s): %s", d.Line, d.Expected, d.Reason)
	case d.Line == 0:
		return "replay: the client departed from the recording: " + d.Reason
	}
	return fmt.Sprintf("replay: the client departed from the recording at line %d (a %s): %s", d.Line, d.Expected, d.Reason)
}

// describe names a frame for a message: "c2s session/prompt request".
func describe(f *Frame) string {
	if f.Kind == Malformed {
		return string(f.Dir) + " line that is not a JSON-RPC frame"
	}
	if f.Method == "" {
		return string(f.Dir) + " " + string(f.Kind)
	}
	return string(f.Dir) + " " + f.Method + " " + string(f.Kind)
}

// bindings are what a client changed of the recording: the names it
// gave recorded sessions, its cwd.
type bindings struct {
	sessions map[string]string // recorded session id → the client's
	clients  map[string]string // the client's session id → recorded
	cwds     map[string]string // recorded cwd → the client's
}

func newBindings() *bindings {
	return &bindings{sessions: map[string]string{}, clients: map[string]string{}, cwds: map[string]string{}}
}

// match compares the client's frame got with the recorded client frame
// want, as far as the package comment says they must agree. It returns
// what differed ("" when they match) and the bindings the match makes,
// which the caller commits when it takes the match.
func (b *bindings) match(want, got *frame) (reason string, commit func()) {
	commit = func() {}
	if want.Kind == Malformed || got.Kind == Malformed {
		if want.Kind == got.Kind && want.Text == got.Text {
			return "", commit
		}
		if got.Kind == Malformed {
			return "not a JSON-RPC frame: " + lines.Excerpt([]byte(got.Text)), commit
		}
		return fmt.Sprintf("a %s, not the line recorded: %s", got.Kind, lines.Excerpt([]byte(want.Text))), commit
	}
	if want.Kind != got.Kind {
		what := string(got.Kind)
		if got.Method != "" {
			what = got.Method + " " + what
		}
		return fmt.Sprintf("a %s, not a %s", what, want.Kind), commit
	}
	if want.Method != got.Method {
		return fmt.Sprintf("method: recorded %q, got %q", want.Method, got.Method), commit
	}
	d := &differ{}
	if want.Kind == Response {
		// A response to a request of the runtime: same id, same outcome.
		d.compare("id", decode(want.id), decode(got.id))
		for _, m := range []string{"result", "error"} {
			d.compare(m, decode(want.obj[m]), decode(got.obj[m]))
		}
		return d.reason(), commit
	}
	wp, gp := decode(normalParams(want.params)), decode(normalParams(got.params))
	wm, wok := wp.(map[string]any)
	gm, gok := gp.(map[string]any)
	if !wok || !gok {
		d.compare("params", wp, gp)
		return d.reason(), commit
	}
	var binds []func()
	for _, k := range union(wm, gm) {
		wv, win := wm[k]
		gv, gin := gm[k]
		ws, wstr := wv.(string)
		gs, gstr := gv.(string)
		switch {
		case k == "cwd" && want.Method == "initialize" && wstr && gstr:
			binds = append(binds, func() { b.cwds[ws] = gs })
			continue
		case k == "sessionId" && wstr && gstr:
			if diff, bind := b.session(ws, gs); diff != "" {
				d.add("params.sessionId: " + diff)
			} else if bind != nil {
				binds = append(binds, bind)
			}
			continue
		}
		d.member("params."+k, wv, win, gv, gin)
	}
	if len(d.diffs) > 0 {
		return d.reason(), commit
	}
	return "", func() {
		for _, f := range binds {
			f()
		}
	}
}

// session checks the client's session id got against the recorded one:
// a recorded session is bound to one client id, and a client id to one
// recorded session. It returns what is wrong, or the binding to make
// (nil when it exists).
func (b *bindings) session(recorded, got string) (diff string, bind func()) {
	if c, ok := b.sessions[recorded]; ok {
		if c != got {
			return fmt.Sprintf("the recording's session %q is %q in this replay, got %q", recorded, c, got), nil
		}
		return "", nil
	}
	if r, ok := b.clients[got]; ok {
		return fmt.Sprintf("%q is already the recording's session %q in this replay, not %q", got, r, recorded), nil
	}
	return "", func() {
		b.sessions[recorded] = got
		b.clients[got] = recorded
	}
}

// normalParams returns params as the runtime reads them for matching:
// absent and null are {} (docs/wire.md §2.5).
func normalParams(p json.RawMessage) json.RawMessage {
	if p == nil || string(bytes.TrimSpace(p)) == "null" {
		return json.RawMessage(`{}`)
	}
	return p
}

// absent stands for a missing value in a comparison.
type absentValue struct{}

// decode decodes a JSON value with its numbers as json.Number; a nil or
// undecodable value is absentValue.
func decode(raw json.RawMessage) any {
	if raw == nil {
		return absentValue{}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return absentValue{}
	}
	return v
}

// union returns the keys of two objects, sorted.
func union(a, b map[string]any) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// maxDiffs bounds the differences a Departure lists.
const maxDiffs = 3

// differ collects the differences between two JSON values.
type differ struct {
	diffs []string
	more  int
}

func (d *differ) add(s string) {
	if len(d.diffs) < maxDiffs {
		d.diffs = append(d.diffs, s)
	} else {
		d.more++
	}
}

// member compares an object member present or not on either side.
func (d *differ) member(path string, w any, win bool, g any, gin bool) {
	switch {
	case win && !gin:
		d.add(fmt.Sprintf("%s: recorded %s, got none", path, show(w)))
	case !win && gin:
		d.add(fmt.Sprintf("%s: not recorded, got %s", path, show(g)))
	default:
		d.compare(path, w, g)
	}
}

// compare compares two decoded JSON values, numbers by value.
func (d *differ) compare(path string, w, g any) {
	switch wv := w.(type) {
	case map[string]any:
		if gv, ok := g.(map[string]any); ok {
			for _, k := range union(wv, gv) {
				a, ain := wv[k]
				b, bin := gv[k]
				d.member(path+"."+k, a, ain, b, bin)
			}
			return
		}
	case []any:
		if gv, ok := g.([]any); ok {
			if len(wv) != len(gv) {
				d.add(fmt.Sprintf("%s: recorded %d elements, got %d", path, len(wv), len(gv)))
				return
			}
			for i := range wv {
				d.compare(path+"["+strconv.Itoa(i)+"]", wv[i], gv[i])
			}
			return
		}
	case json.Number:
		if gv, ok := g.(json.Number); ok && sameNumber(wv, gv) {
			return
		}
	default:
		if w == g {
			return
		}
	}
	d.add(fmt.Sprintf("%s: recorded %s, got %s", path, show(w), show(g)))
}

// sameNumber compares two JSON numbers by value, exactly.
func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, okx := new(big.Float).SetPrec(512).SetString(string(a))
	y, oky := new(big.Float).SetPrec(512).SetString(string(b))
	return okx && oky && x.Cmp(y) == 0
}

// show renders a decoded value for a message, shortened.
func show(v any) string {
	if _, ok := v.(absentValue); ok {
		return "none"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return fmt.Sprint(v)
	}
	return lines.Excerpt(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// reason joins the differences of a match.
func (d *differ) reason() string {
	s := strings.Join(d.diffs, "; ")
	if d.more > 0 {
		s += fmt.Sprintf("; and %d more", d.more)
	}
	return s
}
