package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/sdkproto"
)

// This file is the JSON form of a Script, documented on Script.

// kindMembers lists the members of each kind of action besides kind: the
// one definition of what UnmarshalJSON accepts.
var kindMembers = map[string][]string{
	actText:       {"parts"},
	actReasoning:  {"parts"},
	actUsage:      {"usage"},
	actTool:       {"id", "name", "arguments", "output", "isError", "error"},
	actSubagent:   {"label", "prompt", "child"},
	actModelError: {"failure"},
	actMaxTokens:  nil,
	actRefuse:     {"message"},
	actPause:      {"duration"},
	actAsk:        {"method", "params"},
	actEvent:      {"type", "data"},
}

// kinds is the kinds in the order the errors list them.
var kinds = []string{actText, actReasoning, actUsage, actTool, actSubagent, actModelError, actMaxTokens, actRefuse, actPause, actAsk, actEvent}

// actionJSON is an action as MarshalJSON writes it: kind first, then the
// members of its kind that are not zero.
type actionJSON struct {
	Kind      string               `json:"kind"`
	Parts     []string             `json:"parts,omitempty"`
	Usage     *sdkproto.TokenUsage `json:"usage,omitempty"`
	ID        string               `json:"id,omitempty"`
	Name      string               `json:"name,omitempty"`
	Arguments string               `json:"arguments,omitempty"`
	Output    string               `json:"output,omitempty"`
	IsError   bool                 `json:"isError,omitempty"`
	Error     *sdkproto.ToolError  `json:"error,omitempty"`
	Label     string               `json:"label,omitempty"`
	Prompt    string               `json:"prompt,omitempty"`
	Child     []actionJSON         `json:"child,omitempty"`
	Failure   *sdkproto.LLMFailure `json:"failure,omitempty"`
	Message   string               `json:"message,omitempty"`
	Duration  string               `json:"duration,omitempty"`
	Method    string               `json:"method,omitempty"`
	Params    json.RawMessage      `json:"params,omitempty"`
	Type      sdkproto.EventType   `json:"type,omitempty"`
	Data      json.RawMessage      `json:"data,omitempty"`
}

// MarshalJSON returns the JSON form of s (see Script), which
// UnmarshalJSON reads back into turns that play the same events. It
// fails when s has a Reply, which has no JSON form, and when a Turn of s
// was misused (Script.Err). Raw JSON (Ask's params, Event's data)
// is written compacted, as encoding/json writes a json.RawMessage, and
// without HTML escaping: the same value as the runtime sends, though not
// byte for byte when the Turn was given raw JSON with white space outside
// its strings, which is dropped (and which UnmarshalJSON drops too).
// json.Marshal of a value holding a Script escapes its HTML again, which
// changes its bytes but not its meaning.
func (s Script) MarshalJSON() ([]byte, error) {
	if s.Reply != nil {
		return nil, errors.New("scripted: Script.Reply has no JSON form: script the turns in Script.Turns")
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	f := struct {
		Turns [][]actionJSON `json:"turns"`
	}{Turns: make([][]actionJSON, 0, len(s.Turns))}
	for _, t := range s.Turns {
		f.Turns = append(f.Turns, actionsJSON(t.actions))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// actionsJSON returns the JSON form of actions; never nil, so that a
// turn without actions is written [].
func actionsJSON(actions []action) []actionJSON {
	out := make([]actionJSON, 0, len(actions))
	for _, a := range actions {
		j := actionJSON{Kind: a.Kind, Parts: a.Parts, Usage: a.Usage, Label: a.Label, Prompt: a.Prompt,
			Failure: a.Failure, Message: a.Message, Method: a.Method, Params: a.Params, Type: a.Type, Data: a.Data}
		switch a.Kind {
		case actTool:
			c := a.Tool
			j.ID, j.Name, j.Arguments, j.Output, j.IsError, j.Error = c.ID, c.Name, c.Arguments, c.Output, c.IsError, c.Error
		case actSubagent:
			j.Child = actionsJSON(a.Child)
			if len(j.Child) == 0 {
				j.Child = nil // an empty child is NewTurn's, as a left-out one
			}
		case actPause:
			j.Duration = a.Duration.String()
		}
		out = append(out, j)
	}
	return out
}

// UnmarshalJSON sets s.Turns to the turns of the JSON form of a Script
// (see Script), each built with NewTurn (or Refuse) and the builder
// method of each action, so that what the builder refuses is refused
// here too. It is strict: a member or a kind that the form does not
// have, a member written twice, a member of the wrong type (null in a
// list of strings included) and a misuse of the builder are errors naming
// where they are (turns[1][2]: unknown kind "txt"). Keys are matched
// exactly, those of the nested wire objects (usage, failure, error)
// included, which encoding/json would match whatever their case. On an
// error s is left as it was; Reply is never changed.
func (s *Script) UnmarshalJSON(data []byte) error {
	if err := s.unmarshal(data); err != nil {
		return fmt.Errorf("scripted: %w", err)
	}
	return nil
}

// unmarshal is UnmarshalJSON, with errors that do not name the package.
func (s *Script) unmarshal(data []byte) error {
	// The script is validated and its members split in one pass; the
	// values inside it, valid already, are then only delimited.
	top := object{members: map[string]json.RawMessage{}}
	kind, _, err := wire.ScanMembers(data, top.add)
	switch {
	case err != nil:
		return fmt.Errorf("the script: %w", err)
	case kind != wire.Object:
		return fmt.Errorf("the script: want an object, got %s", excerpt(data))
	case top.twice != "":
		return top.twiceErr()
	}
	if err := top.only("", "turns"); err != nil {
		return err
	}
	raw := top.members["turns"]
	switch wire.KindOf(raw) {
	case wire.Absent, wire.Null:
		s.Turns = []*Turn{}
		return nil
	case wire.Array:
	default:
		return fmt.Errorf("turns: want a list of turns, got %s", excerpt(raw))
	}
	out := make([]*Turn, 0, wire.CountElements(raw))
	i := 0
	wire.Elements(raw, func(elem []byte) bool {
		var t *Turn
		if t, err = decodeTurn(fmt.Sprintf("turns[%d]", i), elem); err != nil {
			return false
		}
		out = append(out, t)
		i++
		return true
	})
	if err != nil {
		return err
	}
	s.Turns = out
	return nil
}

// LoadScript reads the JSON form of a Script (see Script) from the file
// at path. Its errors name the file, and the line and column of a JSON
// syntax error.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, err
	}
	var s Script
	err = json.Unmarshal(data, &s)
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		// Offset is just past the byte that broke the syntax.
		at := data[:max(syntax.Offset-1, 0)]
		line := 1 + bytes.Count(at, []byte("\n"))
		col := len(at) - bytes.LastIndexByte(at, '\n')
		return Script{}, fmt.Errorf("scripted: %s:%d:%d: %v", path, line, col, err)
	case err != nil:
		return Script{}, fmt.Errorf("scripted: %s: %s", path, strings.TrimPrefix(err.Error(), "scripted: "))
	}
	return s, nil
}

// object is a JSON object of a script, with where it is for errors:
// turns[1][2], say, or "" for the script itself. Its members are keyed
// exactly as written (escapes decoded), not matched whatever their case
// as encoding/json matches the fields of a struct.
type object struct {
	at      string
	members map[string]json.RawMessage
	twice   string // the first key written a second time
}

// add records a member of o, as wire.Members yields them; a duplicate is
// recorded in o.twice, and ends the walk.
func (o *object) add(key, value []byte) bool {
	if _, ok := o.members[string(key)]; ok {
		o.twice = string(key)
		return false
	}
	o.members[string(key)] = value
	return true
}

// twiceErr is the error of a member written twice, which JSON.parse and
// encoding/json would read as its last value: a mistake in a script.
func (o object) twiceErr() error {
	return fmt.Errorf("%s: member %q twice", o.where(), o.twice)
}

// where names o in an error.
func (o object) where() string {
	if o.at == "" {
		return "the script"
	}
	return o.at
}

// path names o's member name in an error.
func (o object) path(name string) string {
	if o.at == "" {
		return name
	}
	return o.at + "." + name
}

// decodeObject splits raw, a valid JSON value of the script (without
// white space around it), which must be an object whose keys are written
// once each.
func decodeObject(at string, raw []byte) (object, error) {
	o := object{at: at, members: map[string]json.RawMessage{}}
	if wire.KindOf(raw) != wire.Object {
		return o, fmt.Errorf("%s: want an object, got %s", o.where(), excerpt(raw))
	}
	if wire.Members(raw, o.add); o.twice != "" {
		return o, o.twiceErr()
	}
	return o, nil
}

// only fails when o has a member other than names; what, when set,
// names the kind of object in the error.
func (o object) only(what string, names ...string) error {
	for _, name := range slices.Sorted(maps.Keys(o.members)) {
		if !slices.Contains(names, name) {
			if what != "" {
				what = " of " + what
			}
			return fmt.Errorf("%s: unknown member %q%s (its members: %s)", o.where(), name, what, strings.Join(names, ", "))
		}
	}
	return nil
}

// get decodes o's member name into v, strictly: a member of a nested
// object that v does not have, written in another case than v's JSON
// name or written twice, is an error. A member left out or null leaves v
// as it is. want says what the member should be, for errors.
func (o object) get(name string, v any, want string) error {
	raw, ok := o.members[name]
	if !ok {
		return nil
	}
	if err := exactMembers(o.path(name), raw, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	at := o.path(name)
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return fmt.Errorf("%s.%s: want %s, got a JSON %s", at, typeErr.Field, describe(typeErr.Type), typeErr.Value)
	case errors.As(err, &typeErr):
		return fmt.Errorf("%s: want %s, got %s", at, want, excerpt(raw))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("%s: unknown member %s", at, strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return fmt.Errorf("%s: %s", at, strings.TrimPrefix(err.Error(), "json: "))
}

// exactMembers checks the keys of raw, and of the objects in it, against
// the JSON names of the fields of t, the struct (or pointer to one) that
// raw decodes into, before encoding/json decodes it: encoding/json keeps
// the last of a duplicate key, and takes a key that matches a field's
// name in another case. Values that are not objects are left to
// encoding/json, whose errors say what they should be.
func exactMembers(at string, raw []byte, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || wire.KindOf(raw) != wire.Object {
		return nil
	}
	o, err := decodeObject(at, raw)
	if err != nil {
		return err
	}
	fields := map[string]reflect.Type{}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() || name == "-":
			continue
		case name == "":
			name = f.Name
		}
		fields[name] = f.Type
		names = append(names, name)
	}
	if err := o.only("", names...); err != nil {
		return err
	}
	for _, name := range names {
		if v, ok := o.members[name]; ok {
			if err := exactMembers(o.path(name), v, fields[name]); err != nil {
				return err
			}
		}
	}
	return nil
}

// strings returns o's member name, a list of strings; left out or null,
// nil. An element that is not a string is an error naming it: encoding/json
// would read null as "".
func (o object) strings(name string) ([]string, error) {
	raw := o.members[name]
	switch wire.KindOf(raw) {
	case wire.Absent, wire.Null:
		return nil, nil
	case wire.Array:
	default:
		return nil, fmt.Errorf("%s: want a list of strings, got %s", o.path(name), excerpt(raw))
	}
	list := make([]string, 0, wire.CountElements(raw))
	var err error
	wire.Elements(raw, func(elem []byte) bool {
		at := fmt.Sprintf("%s[%d]", o.path(name), len(list))
		var s string
		switch wire.KindOf(elem) {
		case wire.String:
			err = json.Unmarshal(elem, &s)
		case wire.Null:
			err = fmt.Errorf("%s: null, not a string", at)
		default:
			err = fmt.Errorf("%s: want a string, got %s", at, excerpt(elem))
		}
		list = append(list, s)
		return err == nil
	})
	return list, err
}

// raw returns o's member name compacted (a script written by hand may
// spread it over lines, which a frame may not hold), or nil when it is
// left out.
func (o object) raw(name string) json.RawMessage {
	raw, ok := o.members[name]
	if !ok {
		return nil
	}
	var buf bytes.Buffer
	json.Compact(&buf, raw) // valid: it was decoded
	return buf.Bytes()
}

// describe names the JSON that a Go type is decoded from.
func describe(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return "an object"
}

// excerpt returns raw, cut short when long, for an error.
func excerpt(raw []byte) string {
	const max = 40
	s := string(bytes.TrimSpace(raw))
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// decodeTurn decodes a turn, a list of actions, built with NewTurn and
// the methods of its actions.
func decodeTurn(at string, raw json.RawMessage) (*Turn, error) {
	if wire.KindOf(raw) != wire.Array {
		return nil, fmt.Errorf("%s: want a list of actions, got %s", at, excerpt(raw))
	}
	t := NewTurn()
	j := 0
	var err error
	wire.Elements(raw, func(elem []byte) bool {
		var o object
		if o, err = decodeObject(fmt.Sprintf("%s[%d]", at, j), elem); err != nil {
			return false
		}
		if err = t.decodeAction(o, j); err != nil {
			return false
		}
		if t.err != nil {
			err = fmt.Errorf("%s: %s", o.at, strings.TrimPrefix(t.err.Error(), "scripted: "))
			return false
		}
		j++
		return true
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// decodeAction appends to t the action of o, the action at index j of
// its turn, with the builder method of its kind.
func (t *Turn) decodeAction(o object, j int) error {
	kindRaw, ok := o.members["kind"]
	if !ok {
		return fmt.Errorf("%s: no kind (one of %s)", o.at, strings.Join(kinds, ", "))
	}
	var kind string
	if err := json.Unmarshal(kindRaw, &kind); err != nil {
		return fmt.Errorf("%s.kind: want a string, got %s", o.at, excerpt(kindRaw))
	}
	members, ok := kindMembers[kind]
	if !ok {
		return fmt.Errorf("%s: unknown kind %q (one of %s)", o.at, kind, strings.Join(kinds, ", "))
	}
	if err := o.only("a "+kind+" action", append([]string{"kind"}, members...)...); err != nil {
		return err
	}
	var err error
	// get records the first error of the members decoded.
	get := func(name string, v any, want string) {
		if err == nil {
			err = o.get(name, v, want)
		}
	}
	switch kind {
	case actText, actReasoning:
		var parts []string
		parts, err = o.strings("parts")
		switch {
		case err != nil:
		case kind == actText:
			t.Text(parts...)
		default:
			t.Reasoning(parts...)
		}
	case actUsage:
		var u sdkproto.TokenUsage
		if get("usage", &u, "an object of token counts"); err == nil {
			t.Usage(u)
		}
	case actTool:
		var c ToolCall
		get("id", &c.ID, "a string")
		get("name", &c.Name, "a string")
		get("output", &c.Output, "a string")
		get("isError", &c.IsError, "true or false")
		get("error", &c.Error, `an object {"name", "code"}`)
		if err == nil {
			c.Arguments, err = o.arguments()
		}
		if err == nil {
			t.ToolCall(c)
		}
	case actSubagent:
		var label, prompt string
		var child *Turn
		get("label", &label, "a string")
		get("prompt", &prompt, "a string")
		if raw, ok := o.members["child"]; ok && err == nil && string(raw) != "null" {
			child, err = decodeTurn(o.at+".child", raw)
		}
		if err == nil {
			t.Subagent(label, prompt, child)
		}
	case actModelError:
		var f sdkproto.LLMFailure
		if get("failure", &f, "an object describing the failure"); err == nil {
			t.ModelError(f)
		}
	case actMaxTokens:
		t.MaxTokens()
	case actRefuse:
		var message string
		get("message", &message, "a string")
		switch {
		case err != nil:
		case j > 0:
			// Refuse is a turn of its own: what came before would be
			// dropped, so it is refused rather than ignored.
			err = fmt.Errorf("%s: refuse is the only action of its turn (it answers the prompt with an error, and nothing else is played)", o.at)
		default:
			*t = *Refuse(message)
		}
	case actPause:
		var d time.Duration
		d, err = o.duration()
		if err == nil {
			t.Pause(d)
		}
	case actAsk:
		var method string
		if get("method", &method, "a string"); err == nil {
			t.Ask(method, rawOrNil(o.raw("params")))
		}
	case actEvent:
		var typ sdkproto.EventType
		if get("type", &typ, "a string"); err == nil {
			t.Event(typ, rawOrNil(o.raw("data")))
		}
	}
	return err
}

// rawOrNil returns raw as a value for Ask and Event: nil when left out,
// which they send as {}.
func rawOrNil(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	return raw
}

// arguments returns the JSON text of a tool call's arguments: the member
// arguments when it is a string, the member itself (compacted) when it is
// an object or a list, "" when it is left out or null.
func (o object) arguments() (string, error) {
	raw := o.raw("arguments")
	switch {
	case raw == nil, string(raw) == "null":
		return "", nil
	case raw[0] == '{' || raw[0] == '[':
		return string(raw), nil
	case raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	return "", fmt.Errorf("%s.arguments: want the arguments as a JSON object or as its text (a string), got %s", o.at, excerpt(raw))
}

// duration returns the member duration of a pause, a Go duration string;
// left out or null, 0.
func (o object) duration() (time.Duration, error) {
	raw, ok := o.members["duration"]
	if !ok || string(raw) == "null" {
		return 0, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		// A number is refused rather than read as nanoseconds, which a
		// script written by hand would mean as seconds or milliseconds.
		return 0, fmt.Errorf(`%s.duration: want a duration string such as "1.5s" or "250ms", got %s`, o.at, excerpt(raw))
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf(`%s.duration: want a duration string such as "1.5s" or "250ms", got %q`, o.at, s)
	}
	return d, nil
}
