package openrpc_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/testservice"
	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/rpc"
)

var update = flag.Bool("update", false, "rewrite the golden documents in testdata")

// golden compares got with the file testdata/name, or rewrites it under
// -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from what Describe writes now (go test -update rewrites it):\n%s", path, got)
	}
}

func TestDescribeTestService(t *testing.T) {
	s := testservice.New()
	methods := slices.DeleteFunc(s.Registry.Methods(), func(m rpc.MethodInfo) bool { return m.Name == openrpc.Discover.Name() })
	doc, err := openrpc.Describe(testservice.Info, methods...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testservice.json", append(b, '\n'))

	// The document reads back into the same Document, and writes the
	// same bytes again.
	var back openrpc.Document
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.MarshalIndent(&back, "", "  ")
	if !bytes.Equal(again, b) {
		t.Fatalf("the document does not read back whole:\n%s", again)
	}
}

func TestDescribeMethods(t *testing.T) {
	doc, err := openrpc.Describe(openrpc.Info{Title: "t", Version: "1"},
		rpc.NewMethod[[]int, int]("sum").Describe(rpc.Doc{ParamsName: "numbers", ResultName: "total",
			Examples: []rpc.Example{{Params: []int{1, 2}, Result: 3}}}).Info(),
		rpc.NewNotification[rpc.NoParams]("ping").Info(),
		rpc.NewMethod[*testservice.AddParams, *testservice.Sum]("add").Describe(rpc.Doc{Deprecated: true}).Info(),
		rpc.NewMethod[int, string]("itoa").Describe(rpc.Doc{Errors: []rpc.ErrorDoc{{Code: 5, Message: "odd", Data: 7}}}).Info(),
	)
	if err != nil {
		t.Fatal(err)
	}
	sum := doc.Methods[0]
	if sum.ParamStructure != "" || len(sum.Params) != 1 || sum.Params[0].Name != "numbers" || !sum.Params[0].Required ||
		string(sum.Extensions[openrpc.WholeParams]) != "true" || sum.Result.Name != "total" {
		t.Errorf("whole params: %+v", sum)
	}
	if ex := sum.Examples[0]; ex.Name != "example 1" || string(ex.Params[0].Value) != "[1,2]" || string(ex.Result.Value) != "3" {
		t.Errorf("whole params example: %+v", ex)
	}
	if ping := doc.Methods[1]; !ping.IsNotification() || len(ping.Params) != 0 || ping.ParamStructure != "by-name" {
		t.Errorf("notification without params: %+v", ping)
	}
	add := doc.Methods[2]
	var names []string
	for _, p := range add.Params {
		names = append(names, p.Name)
	}
	if add.ParamStructure != "by-name" || strings.Join(names, ",") != "a,b" || !add.Deprecated || add.Result.Name != "sum" {
		t.Errorf("pointer params: %+v", add)
	}
	if _, ok := doc.Components.Schemas["AddParams"]; ok {
		t.Errorf("params spread by name are written in the components too")
	}
	itoa := doc.Methods[3]
	if len(itoa.Errors) != 1 || string(itoa.Errors[0].Data) != "7" || doc.Components.Schemas["itoa.error5"] == nil {
		t.Errorf("error data: %+v, components %v", itoa.Errors, doc.Components.Schemas)
	}
	b, _ := json.Marshal(sum)
	if !strings.Contains(string(b), `"x-linerpc-whole-params":true`) {
		t.Errorf("the extension is not written: %s", b)
	}
}

// Strict says more of the whole object than its members: it cannot be
// split into params by name without losing that.
type Strict struct{ A int }

func (Strict) JSONSchema() *openrpc.Schema {
	return &openrpc.Schema{Type: openrpc.Types{"object"}, Properties: map[string]*openrpc.Schema{"a": {Type: openrpc.Types{"integer"}}},
		AdditionalProperties: openrpc.False()}
}

func TestParamsSaidOfTheWholeStayWhole(t *testing.T) {
	doc, err := openrpc.Describe(openrpc.Info{Title: "t", Version: "1"}, rpc.NewMethod[Strict, int]("strict").Info())
	if err != nil {
		t.Fatal(err)
	}
	m := doc.Methods[0]
	if len(m.Params) != 1 || m.Params[0].Name != "params" || !m.Params[0].Schema.AdditionalProperties.IsFalse() ||
		string(m.Extensions[openrpc.WholeParams]) != "true" {
		t.Fatalf("params %+v, extensions %v: want the whole schema as one param", m.Params, m.Extensions)
	}
	b, _ := json.Marshal(m.ParamsSchema())
	if string(b) != `{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false}` {
		t.Fatalf("ParamsSchema = %s", b)
	}
}

func TestDescribeRefuses(t *testing.T) {
	info := openrpc.Info{Title: "t", Version: "1"}
	m := rpc.NewMethod[int, int]("m").Info()
	cases := []struct {
		name    string
		info    openrpc.Info
		methods []rpc.MethodInfo
		want    string
	}{
		{"no title", openrpc.Info{Version: "1"}, nil, "needs a Title and a Version"},
		{"no version", openrpc.Info{Title: "t"}, nil, "needs a Title and a Version"},
		{"twice", info, []rpc.MethodInfo{m, m}, `method "m" given twice`},
		{"no name", info, []rpc.MethodInfo{{Result: reflect.TypeFor[int]()}}, "has no name"},
		{"params", info, []rpc.MethodInfo{rpc.NewMethod[chan int, int]("c").Info()}, `method "c": params:`},
		{"result", info, []rpc.MethodInfo{rpc.NewMethod[int, func()]("f").Info()}, `method "f": result:`},
		{"error data", info, []rpc.MethodInfo{rpc.NewMethod[int, int]("e").Describe(rpc.Doc{Errors: []rpc.ErrorDoc{{Code: 1, Data: make(chan int)}}}).Info()}, `method "e": error 1: data:`},
		{"example", info, []rpc.MethodInfo{rpc.NewMethod[testservice.AddParams, int]("x").Describe(rpc.Doc{Examples: []rpc.Example{{Params: 3}}}).Info()}, `method "x": example 1: params are not an object`},
	}
	for _, c := range cases {
		_, err := openrpc.Describe(c.info, c.methods...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Describe = %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func TestSchemaReadsBackWhole(t *testing.T) {
	in := `{"$ref":"#/x","type":["string","null"],"not":false,"items":true,"x-vendor":{"a":1},"$comment":"kept","additionalProperties":false}`
	var s openrpc.Schema
	if err := json.Unmarshal([]byte(in), &s); err != nil {
		t.Fatal(err)
	}
	if !s.Not.IsFalse() || s.Items == nil || s.Items.IsFalse() || !s.AdditionalProperties.IsFalse() || len(s.Extra) != 2 {
		t.Fatalf("read %+v", s)
	}
	out, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	json.Unmarshal([]byte(in), &a)
	json.Unmarshal(out, &b)
	// true is written back as {}, which means the same.
	want := strings.Replace(in, `"items":true`, `"items":{}`, 1)
	json.Unmarshal([]byte(want), &a)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("wrote %s\nwant %s", out, want)
	}
	c := s.Clone()
	c.Type[0] = "integer"
	c.Extra["x-vendor"] = nil
	if s.Type[0] != "string" || s.Extra["x-vendor"] == nil {
		t.Fatal("Clone shares its slices or maps")
	}
	var bad openrpc.Schema
	if err := json.Unmarshal([]byte(`{"type":3}`), &bad); err == nil {
		t.Fatal("a type that is a number is read")
	}
}
