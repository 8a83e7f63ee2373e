package validator_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"testing/quick"

	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/openrpc/validator"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// resultValidator returns a Validator for a method "m" whose result is of
// type t, so that Result checks values of t.
func resultValidator(t *testing.T, typ reflect.Type) *validator.Validator {
	t.Helper()
	doc, err := openrpc.Describe(openrpc.Info{Title: "t", Version: "1"}, rpc.MethodInfo{Name: "m", Result: typ})
	if err != nil {
		t.Fatal(err)
	}
	v, err := validator.New(doc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

type (
	Inner struct {
		X int `json:"x"`
	}
	Embedded struct {
		Inner
		Y string `json:"y,omitempty"`
	}
	EmbeddedPointer struct {
		*Inner
		Z bool `json:"z,omitzero"`
	}
	Shadowed struct {
		Inner
		X string `json:"x"`
	}
	Tree struct {
		Value    int     `json:"value"`
		Children []*Tree `json:"children,omitempty"`
	}
	Page[T any] struct {
		Items []T `json:"items"`
	}
)

// Wide holds what testing/quick can fill: no interfaces, no raw JSON.
type Wide struct {
	Renamed  string             `json:"renamed"`
	Optional *float64           `json:"optional,omitempty"`
	Quoted   int64              `json:"quoted,string"`
	Bytes    []byte             `json:"bytes"`
	Counts   map[string]int     `json:"counts"`
	ByID     map[int16]string   `json:"byID"`
	Pair     [2]uint8           `json:"pair"`
	Small    int8               `json:"small"`
	Ref      *Inner             `json:"ref"`
	Nested   struct{ N uint32 } `json:"nested"`
	Matrix   [][]int            `json:"matrix"`
	Objects  map[string]*Inner  `json:"objects"`
	Embedded
	Trees []Tree `json:"trees"`
}

// The schema of a type accepts whatever encoding/json writes for a value
// of it: random values, written and checked by the validator.
func TestDerivedSchemasAcceptWhatJSONWrites(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, typ := range []reflect.Type{
		reflect.TypeFor[Wide](), reflect.TypeFor[*Wide](), reflect.TypeFor[[]Shadowed](),
		reflect.TypeFor[map[string]EmbeddedPointer](), reflect.TypeFor[Page[Tree]](), reflect.TypeFor[[3]*Tree](),
	} {
		v := resultValidator(t, typ)
		for i := range 200 {
			val, ok := quick.Value(typ, rng)
			if !ok {
				t.Fatalf("quick cannot make a %v", typ)
			}
			raw, err := json.Marshal(val.Interface())
			if err != nil {
				t.Fatalf("%v: %v", typ, err)
			}
			if err := v.Result("m", raw); err != nil {
				t.Fatalf("%v value %d refused: %v\n%s", typ, i, err, raw)
			}
		}
	}
}

func TestValidatorRefusesWithThePath(t *testing.T) {
	v := resultValidator(t, reflect.TypeFor[Wide]())
	good, _ := json.Marshal(Wide{})
	if err := v.Result("m", good); err != nil {
		t.Fatalf("the zero Wide is refused: %v", err)
	}
	cases := []struct{ mutate, path, reason string }{
		{`"renamed":1`, "/renamed", "want string"},
		{`"pair":[1,2,3]`, "/pair", "maxItems"},
		// A pointer's schema is its type's or null: the refusal names the
		// type, not null.
		{`"ref":5`, "/ref", "got number, want object"},
		{`"small":200`, "/small", "200"},
		{`"trees":[{"value":1,"children":[{"value":"x"}]}]`, "/trees/0/children/0/value", "want integer"},
		{`"byID":{"a":"b"}`, "/byID", "additional properties 'a'"},
		{`"byID":{"1":2}`, "/byID/1", "want string"},
	}
	for _, c := range cases {
		raw := mutate(t, good, c.mutate)
		err := v.Result("m", raw)
		var ve *validator.Error
		if !errors.As(err, &ve) {
			t.Errorf("%s: got %v, want a *validator.Error", c.mutate, err)
			continue
		}
		if ve.Path != c.path || !strings.Contains(ve.Reason, c.reason) || !ve.Result || ve.Method != "m" {
			t.Errorf("%s: got %+v, want path %q and a reason with %q", c.mutate, *ve, c.path, c.reason)
		}
	}
	if err := v.Result("other", []byte(`1`)); err != nil {
		t.Errorf("a method the document does not have is checked: %v", err)
	}
	if err := v.Result("m", []byte(`{`)); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("malformed JSON: %v", err)
	}
}

// mutate sets one member of the JSON object obj.
func mutate(t *testing.T, obj []byte, member string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		t.Fatal(err)
	}
	var one map[string]json.RawMessage
	if err := json.Unmarshal([]byte("{"+member+"}"), &one); err != nil {
		t.Fatal(err)
	}
	for k, v := range one {
		m[k] = v
	}
	out, _ := json.Marshal(m)
	return out
}

// Documents read from elsewhere lay params out by position, or either way.
func TestValidatorParamStructures(t *testing.T) {
	doc := &openrpc.Document{OpenRPC: openrpc.Version, Info: openrpc.Info{Title: "t", Version: "1"}, Methods: []openrpc.Method{
		{Name: "byName", ParamStructure: "by-name", Params: []openrpc.ContentDescriptor{
			{Name: "a", Required: true, Schema: &openrpc.Schema{Type: openrpc.Types{"integer"}}},
			{Name: "b", Schema: &openrpc.Schema{Type: openrpc.Types{"string"}}}}},
		{Name: "byPosition", ParamStructure: "by-position", Params: []openrpc.ContentDescriptor{
			{Name: "a", Required: true, Schema: &openrpc.Schema{Type: openrpc.Types{"integer"}}},
			{Name: "b", Schema: &openrpc.Schema{Type: openrpc.Types{"string"}}}}},
		{Name: "either", Params: []openrpc.ContentDescriptor{
			{Name: "a", Required: true, Schema: &openrpc.Schema{Type: openrpc.Types{"integer"}}}}},
		{Name: "none", ParamStructure: "by-name", Params: []openrpc.ContentDescriptor{}},
	}}
	v, err := validator.New(doc)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		method, params string // params "" means absent
		ok             bool
	}{
		{"byName", `{"a":1}`, true}, {"byName", `{"a":1,"b":"x","c":0}`, true}, {"byName", `{"b":"x"}`, false},
		{"byName", `[1]`, false}, {"byName", ``, false}, {"byName", `{"a":"1"}`, false},
		{"byPosition", `[1]`, true}, {"byPosition", `[1,"x"]`, true}, {"byPosition", `[1,"x",3]`, false},
		{"byPosition", `[]`, false}, {"byPosition", `["x"]`, false}, {"byPosition", `{"a":1}`, false},
		{"either", `{"a":1}`, true}, {"either", `[1]`, true}, {"either", `[]`, false},
		{"none", ``, true}, {"none", `{}`, true}, {"none", `[]`, true}, {"none", `[1]`, false}, {"none", `{"extra":1}`, true},
	}
	for _, c := range cases {
		var raw json.RawMessage
		if c.params != "" {
			raw = json.RawMessage(c.params)
		}
		err := v.Params(c.method, raw)
		if (err == nil) != c.ok {
			t.Errorf("%s %s: error %v, want ok=%v", c.method, c.params, err, c.ok)
		}
	}
	err = v.Params("byName", nil)
	if err == nil || !strings.Contains(err.Error(), "params absent: missing property 'a'") {
		t.Errorf("absent required params: %v", err)
	}
}

func TestNewRefusesADanglingReference(t *testing.T) {
	doc := &openrpc.Document{OpenRPC: openrpc.Version, Info: openrpc.Info{Title: "t", Version: "1"}, Methods: []openrpc.Method{
		{Name: "m", Params: []openrpc.ContentDescriptor{}, Result: &openrpc.ContentDescriptor{Name: "r", Schema: &openrpc.Schema{Ref: "#/components/schemas/Missing"}}},
	}}
	if _, err := validator.New(doc); err == nil || !strings.Contains(err.Error(), `method "m": result`) {
		t.Fatalf("New = %v, want an error naming the method's result", err)
	}
}

type Range struct {
	From  int    `json:"from"`
	To    int    `json:"to"`
	Label *Label `json:"label,omitempty"`
}

type Label struct {
	Text string `json:"text"`
}

var Span = rpc.NewMethod[Range, int]("span")

// A server with the validator as Options.CheckParams answers params its
// schema refuses with -32602, the path in the message and in the data,
// and never runs the handler for them.
func TestCheckParamsOnAServer(t *testing.T) {
	reg := rpc.NewRegistry()
	ran := make(chan Range, 4)
	rpc.Handle(reg, Span, func(_ context.Context, r Range) (int, error) { ran <- r; return r.To - r.From, nil })
	doc, err := openrpc.Describe(openrpc.Info{Title: "t", Version: "1"}, reg.Methods()...)
	if err != nil {
		t.Fatal(err)
	}
	v, err := validator.New(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, peer := rpctest.Start(t, &rpc.Options{Handler: reg, CheckParams: v.CheckParams})
	peer.Send(`{"jsonrpc":"2.0","id":1,"method":"span","params":{"from":1}}`)
	peer.Expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid params: missing property 'to'","data":{"path":"","reason":"missing property 'to'"}}}`)
	peer.Send(`{"jsonrpc":"2.0","id":2,"method":"span","params":{"from":1,"to":2,"label":{}}}`)
	peer.Expect(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"invalid params: /label: missing property 'text'","data":{"path":"/label","reason":"missing property 'text'"}}}`)
	peer.Send(`{"jsonrpc":"2.0","id":3,"method":"span","params":{"from":1,"to":4}}`)
	peer.Expect(`{"jsonrpc":"2.0","id":3,"result":3}`)
	if r := <-ran; r != (Range{From: 1, To: 4}) {
		t.Fatalf("the handler ran for %+v, want only the valid params", r)
	}
}
