package openrpc_test

import (
	"encoding/json"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/rpc"
)

type (
	Inner struct {
		X int `json:"x"`
	}
	Embedded struct {
		Inner        // promoted: x
		Y     string `json:"y,omitempty"`
	}
	EmbeddedTagged struct {
		Inner `json:"inner"`
	}
	EmbeddedPointer struct {
		*Inner
		Z bool `json:"z,omitzero"`
	}
	Shadowed struct {
		Inner
		X string `json:"x"` // the shallower x wins
	}
	Tree struct {
		Value    int     `json:"value"`
		Children []*Tree `json:"children,omitempty"`
	}
	Everything struct {
		Skipped int `json:"-"`
		//lint:ignore SA5008 encoding/json names this member "-": the rule is tested
		Dash      int             `json:"-,"`
		Renamed   string          `json:"renamed"`
		Plain     bool            // named by the field
		Optional  *float64        `json:"optional,omitempty"`
		Quoted    int64           `json:"quoted,string"`
		Raw       json.RawMessage `json:"raw"`
		Any       any             `json:"any"`
		Bytes     []byte          `json:"bytes"`
		When      time.Time       `json:"when"`
		Addr      netip.Addr      `json:"addr"` // MarshalText: a string
		Counts    map[string]int  `json:"counts"`
		ByID      map[int]string  `json:"byID"`
		Pair      [2]uint8        `json:"pair"`
		Small     int8            `json:"small"`
		Described string          `json:"described" jsonschema:"what it is"`
		Ref       *Inner          `json:"ref" jsonschema:"a described reference"`
		Nested    struct{ N int } `json:"nested"`
		Level     Level           `json:"level"`
		LevelPtr  *Level          `json:"levelPtr"`
		Custom    Custom          `json:"custom"`
		//lint:ignore U1000 an unexported field, which no schema describes
		unexp   int
		Matrix  [][]int           `json:"matrix"`
		Objects map[string]*Inner `json:"objects"`
	}
	// Level gives its own schema, with a value receiver.
	Level int
	// Custom gives its own schema, with a pointer receiver.
	Custom struct {
		//lint:ignore U1000 its JSON is its schema's business, not its fields'
		hidden string
	}
	// Marshaled has its own MarshalJSON and no schema: any value.
	Marshaled int
)

func (Level) JSONSchema() *openrpc.Schema {
	return &openrpc.Schema{Type: openrpc.Types{"integer"}, Enum: []json.RawMessage{json.RawMessage("1"), json.RawMessage("2")}}
}

func (*Custom) JSONSchema() *openrpc.Schema {
	return &openrpc.Schema{Type: openrpc.Types{"string"}, Pattern: "^c"}
}

func (Marshaled) MarshalJSON() ([]byte, error) { return []byte(`"m"`), nil }

// schemaJSON returns the schema of T and its components as JSON, for
// comparison with what a reader of the document sees.
func schemaJSON(t *testing.T, typ reflect.Type) (string, map[string]string) {
	t.Helper()
	s, defs, err := openrpc.SchemaFor(typ)
	if err != nil {
		t.Fatalf("SchemaFor(%v): %v", typ, err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for name, d := range defs {
		db, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(db)
	}
	return string(b), out
}

func TestSchemaForTypes(t *testing.T) {
	cases := []struct {
		name string
		typ  reflect.Type
		want string
		defs map[string]string
	}{
		{"int", reflect.TypeFor[int](), `{"type":"integer"}`, nil},
		{"uint16", reflect.TypeFor[uint16](), `{"type":"integer","minimum":0,"maximum":65535}`, nil},
		{"int8", reflect.TypeFor[int8](), `{"type":"integer","minimum":-128,"maximum":127}`, nil},
		{"float", reflect.TypeFor[float32](), `{"type":"number"}`, nil},
		{"string pointer", reflect.TypeFor[*string](), `{"type":["string","null"]}`, nil},
		{"pointer to pointer", reflect.TypeFor[**bool](), `{"type":["boolean","null"]}`, nil},
		{"slice", reflect.TypeFor[[]string](), `{"type":["array","null"],"items":{"type":"string"}}`, nil},
		{"bytes", reflect.TypeFor[[]byte](), `{"type":["string","null"],"contentEncoding":"base64"}`, nil},
		{"raw message", reflect.TypeFor[json.RawMessage](), `{}`, nil},
		{"interface", reflect.TypeFor[any](), `{}`, nil},
		{"own MarshalJSON", reflect.TypeFor[Marshaled](), `{}`, nil},
		{"schemer by value", reflect.TypeFor[Level](), `{"type":"integer","enum":[1,2]}`, nil},
		{"schemer pointer", reflect.TypeFor[*Level](), `{"type":["integer","null"],"enum":[1,2,null]}`, nil},
		{"schemer by pointer receiver", reflect.TypeFor[Custom](), `{"type":"string","pattern":"^c"}`, nil},
		{"anonymous struct", reflect.TypeFor[struct {
			A int `json:"a,omitempty"`
		}](), `{"type":"object","properties":{"a":{"type":"integer"}}}`, nil},
		{"embedded", reflect.TypeFor[Embedded](), `{"$ref":"#/components/schemas/Embedded"}`, map[string]string{
			"Embedded": `{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"string"}},"required":["x"]}`}},
		{"embedded tagged", reflect.TypeFor[EmbeddedTagged](), `{"$ref":"#/components/schemas/EmbeddedTagged"}`, map[string]string{
			"EmbeddedTagged": `{"type":"object","properties":{"inner":{"$ref":"#/components/schemas/Inner"}},"required":["inner"]}`,
			"Inner":          `{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}`}},
		{"embedded pointer", reflect.TypeFor[EmbeddedPointer](), `{"$ref":"#/components/schemas/EmbeddedPointer"}`, map[string]string{
			"EmbeddedPointer": `{"type":"object","properties":{"x":{"type":"integer"},"z":{"type":"boolean"}}}`}},
		{"shadowed", reflect.TypeFor[Shadowed](), `{"$ref":"#/components/schemas/Shadowed"}`, map[string]string{
			"Shadowed": `{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`}},
		{"recursive", reflect.TypeFor[*Tree](), `{"anyOf":[{"type":"null"},{"$ref":"#/components/schemas/Tree"}]}`, map[string]string{
			"Tree": `{"type":"object","properties":{"children":{"type":["array","null"],"items":{"anyOf":[{"type":"null"},{"$ref":"#/components/schemas/Tree"}]}},"value":{"type":"integer"}},"required":["value"]}`}},
		{"generic", reflect.TypeFor[Page[Inner]](), `{"$ref":"#/components/schemas/Page_github.com_linerpc_linerpc_openrpc_test.Inner_"}`, map[string]string{
			"Page_github.com_linerpc_linerpc_openrpc_test.Inner_": `{"type":"object","properties":{"items":{"type":["array","null"],"items":{"$ref":"#/components/schemas/Inner"}}},"required":["items"]}`,
			"Inner": `{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}`}},
		{"same name, two packages", reflect.TypeFor[struct {
			A rpc.Error `json:"a"`
			B Error     `json:"b"`
		}](), `{"type":"object","properties":{"a":{"$ref":"#/components/schemas/Error"},"b":{"$ref":"#/components/schemas/openrpc_test.Error"}},"required":["a","b"]}`, map[string]string{
			"Error":              `{"type":"object","properties":{"Code":{"type":"integer"},"CodeMissing":{"type":"boolean"},"Data":{},"Message":{"type":"string"}},"required":["Code","Message","Data","CodeMissing"]}`,
			"openrpc_test.Error": `{"type":"object","properties":{"reason":{"type":"string"}},"required":["reason"]}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, defs := schemaJSON(t, c.typ)
			if got != c.want {
				t.Errorf("schema\n got %s\nwant %s", got, c.want)
			}
			if c.defs == nil {
				c.defs = map[string]string{}
			}
			if !reflect.DeepEqual(defs, c.defs) {
				t.Errorf("components\n got %v\nwant %v", defs, c.defs)
			}
		})
	}
}

type Page[T any] struct {
	Items []T `json:"items"`
}

type Error struct {
	Reason string `json:"reason"`
}

func TestSchemaForEveryField(t *testing.T) {
	_, defs := schemaJSON(t, reflect.TypeFor[Everything]())
	var got map[string]any
	if err := json.Unmarshal([]byte(defs["Everything"]), &got); err != nil {
		t.Fatal(err)
	}
	props := got["properties"].(map[string]any)
	want := map[string]string{
		"-":         `{"type":"integer"}`,
		"renamed":   `{"type":"string"}`,
		"Plain":     `{"type":"boolean"}`,
		"optional":  `{"type":["number","null"]}`,
		"quoted":    `{"type":"string"}`,
		"raw":       `{}`,
		"any":       `{}`,
		"bytes":     `{"contentEncoding":"base64","type":["string","null"]}`,
		"when":      `{"format":"date-time","type":"string"}`,
		"addr":      `{"type":"string"}`,
		"counts":    `{"additionalProperties":{"type":"integer"},"type":["object","null"]}`,
		"byID":      `{"additionalProperties":false,"patternProperties":{"^-?[0-9]+$":{"type":"string"}},"type":["object","null"]}`,
		"pair":      `{"items":{"maximum":255,"minimum":0,"type":"integer"},"maxItems":2,"minItems":2,"type":"array"}`,
		"small":     `{"maximum":127,"minimum":-128,"type":"integer"}`,
		"described": `{"description":"what it is","type":"string"}`,
		"ref":       `{"anyOf":[{"type":"null"},{"$ref":"#/components/schemas/Inner"}],"description":"a described reference"}`,
		"nested":    `{"properties":{"N":{"type":"integer"}},"required":["N"],"type":"object"}`,
		"level":     `{"enum":[1,2],"type":"integer"}`,
		"levelPtr":  `{"enum":[1,2,null],"type":["integer","null"]}`,
		"custom":    `{"pattern":"^c","type":"string"}`,
		"matrix":    `{"items":{"items":{"type":"integer"},"type":["array","null"]},"type":["array","null"]}`,
		"objects":   `{"additionalProperties":{"anyOf":[{"type":"null"},{"$ref":"#/components/schemas/Inner"}]},"type":["object","null"]}`,
	}
	for name, w := range want {
		b, _ := json.Marshal(props[name])
		if string(b) != w {
			t.Errorf("member %q\n got %s\nwant %s", name, b, w)
		}
	}
	for name := range props {
		if _, ok := want[name]; !ok {
			t.Errorf("unexpected member %q", name)
		}
	}
	req, _ := json.Marshal(got["required"])
	if !strings.Contains(string(req), `"renamed"`) || strings.Contains(string(req), `"optional"`) {
		t.Errorf("required = %s: renamed is required, optional is not", req)
	}
}

func TestSchemaForRefusesTypesWithoutJSON(t *testing.T) {
	cases := []struct {
		typ  reflect.Type
		path string
	}{
		{reflect.TypeFor[chan int](), "chan int"},
		{reflect.TypeFor[func()](), "func()"},
		{reflect.TypeFor[complex128](), "complex128"},
		{reflect.TypeFor[struct {
			Items []struct {
				Callback func() `json:"cb"`
			}
		}](), `.Items[].Callback`},
		{reflect.TypeFor[map[[2]int]string](), "map[[2]int]string"},
	}
	for _, c := range cases {
		_, _, err := openrpc.SchemaFor(c.typ)
		var de *openrpc.DeriveError
		if !errors.As(err, &de) {
			t.Errorf("SchemaFor(%v) = %v, want a *DeriveError", c.typ, err)
			continue
		}
		if !strings.HasSuffix(de.Path, c.path) || !strings.Contains(err.Error(), "has no JSON form") {
			t.Errorf("SchemaFor(%v): path %q, error %q; want the path to end with %q", c.typ, de.Path, err, c.path)
		}
	}
}

type (
	// Untagged's X is named by its field: go vet has no tag to compare.
	Untagged struct{ X int }
	TwiceA   struct{ Untagged }
	TwiceB   struct{ Untagged }
	// Twice embeds Untagged twice at one depth: encoding/json writes none
	// of its members.
	Twice struct {
		TwiceA
		TwiceB
		Own int `json:"own"`
	}
	// Stamped has time.Time's MarshalJSON and UnmarshalJSON, promoted: it
	// is written as a time.
	Stamped struct {
		time.Time
		Note string `json:"note"`
	}
	// ReadsAnything has only an UnmarshalJSON.
	ReadsAnything int
	// PtrText has MarshalText on its pointer: a byte that makes []PtrText
	// an array.
	PtrText uint8
	// PtrTextKey has MarshalText on its pointer: not a map key
	// encoding/json takes.
	PtrTextKey struct{ A int }
)

func (*PtrTextKey) MarshalText() ([]byte, error) { return []byte("k"), nil }

func (*ReadsAnything) UnmarshalJSON([]byte) error { return nil }
func (*PtrText) MarshalText() ([]byte, error)     { return []byte("t"), nil }

func TestSchemaForEncodingJSONsEdges(t *testing.T) {
	cases := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"embedded twice at one depth", reflect.TypeFor[struct{ Twice }](), `{"type":"object","properties":{"own":{"type":"integer"}},"required":["own"]}`},
		{"promoted MarshalJSON", reflect.TypeFor[Stamped](), `{}`},
		{"UnmarshalJSON alone", reflect.TypeFor[ReadsAnything](), `{}`},
		{"bytes whose pointer has MarshalText", reflect.TypeFor[[]PtrText](), `{"type":["array","null"],"items":{"type":"string"}}`},
	}
	for _, c := range cases {
		got, _ := schemaJSON(t, c.typ)
		if got != c.want {
			t.Errorf("%s: schema\n got %s\nwant %s", c.name, got, c.want)
		}
	}
	b, err := json.Marshal(struct{ Twice }{})
	if err != nil || string(b) != `{"own":0}` {
		t.Fatalf("encoding/json writes %s (%v): the test's premise is wrong", b, err)
	}
	//lint:ignore SA1026 the marshaling is expected to fail: it is the premise checked
	if _, err := json.Marshal(map[PtrTextKey]int{{}: 1}); err == nil {
		t.Fatal("encoding/json takes a map whose keys have MarshalText on their pointer: the test's premise is wrong")
	}
	if _, _, err := openrpc.SchemaFor(reflect.TypeFor[map[PtrTextKey]int]()); err == nil {
		t.Error("a map whose keys have MarshalText on their pointer is described; encoding/json refuses it")
	}
}

func TestSchemaReadsATuple(t *testing.T) {
	in := `{"type":"array","items":[{"type":"integer"},{"type":"string"}],"minItems":1}`
	var s openrpc.Schema
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	if s.Items != nil || string(s.Extra["items"]) != `[{"type":"integer"},{"type":"string"}]` {
		t.Fatalf("read %+v", s)
	}
	out, _ := json.Marshal(&s)
	var a, b any
	json.Unmarshal([]byte(in), &a)
	json.Unmarshal(out, &b)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("wrote %s, want %s", out, in)
	}
}
