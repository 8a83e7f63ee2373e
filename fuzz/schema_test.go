package fuzz

import (
	"encoding/json"
	"errors"
	"math/rand"
	"reflect"
	"strconv"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/linerpc/linerpc/openrpc"
	"github.com/linerpc/linerpc/openrpc/validator"
	"github.com/linerpc/linerpc/rpc"
)

// typeBuilder makes a Go type from fuzz bytes, with reflect: scalars,
// pointers, slices, arrays, maps, structs with tags and embedded fields,
// and the kinds JSON has no form for.
type typeBuilder struct {
	data []byte
	n    int // fields made, for unique names
}

func (b *typeBuilder) next() byte {
	if len(b.data) == 0 {
		return 0
	}
	c := b.data[0]
	b.data = b.data[1:]
	return c
}

var leafTypes = []reflect.Type{
	reflect.TypeFor[bool](), reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[uint16](),
	reflect.TypeFor[float64](), reflect.TypeFor[string](), reflect.TypeFor[any](), reflect.TypeFor[json.RawMessage](),
	reflect.TypeFor[[]byte](), reflect.TypeFor[time.Time](), reflect.TypeFor[uint64](), reflect.TypeFor[float32](),
}

var badTypes = []reflect.Type{reflect.TypeFor[chan int](), reflect.TypeFor[func()](), reflect.TypeFor[complex64]()}

// build returns a type; depth bounds the nesting.
func (b *typeBuilder) build(depth int) reflect.Type {
	op := int(b.next())
	if depth <= 0 {
		op %= len(leafTypes)
	}
	switch op % 20 {
	case 12:
		return reflect.PointerTo(b.build(depth - 1))
	case 13:
		return reflect.SliceOf(b.build(depth - 1))
	case 14:
		return reflect.ArrayOf(1+int(b.next()%3), b.build(depth-1))
	case 15:
		return reflect.MapOf(reflect.TypeFor[string](), b.build(depth-1))
	case 16:
		return reflect.MapOf(reflect.TypeFor[int32](), b.build(depth-1))
	case 17, 18:
		return b.structType(depth - 1)
	case 19:
		return badTypes[int(b.next())%len(badTypes)]
	}
	return leafTypes[op%len(leafTypes)]
}

// structType makes a struct of up to four fields, some embedded, some
// tagged omitempty, ",string" or "-", some sharing a JSON name.
func (b *typeBuilder) structType(depth int) reflect.Type {
	var fields []reflect.StructField
	for range int(b.next() % 5) {
		b.n++
		flags := b.next()
		name := "F" + strconv.Itoa(b.n)
		tag := ""
		jsonName := "f" + strconv.Itoa(int(flags>>5)) // a few names, so that some collide
		switch flags % 6 {
		case 1:
			tag = `json:"` + jsonName + `"`
		case 2:
			tag = `json:"` + jsonName + `,omitempty"`
		case 3:
			tag = `json:"-"`
		case 4:
			tag = `json:"` + jsonName + `,string"`
		}
		if flags&8 != 0 && depth > 0 { // an embedded struct, through a pointer or not
			inner := b.structType(depth - 1)
			if flags&16 != 0 {
				inner = reflect.PointerTo(inner)
			}
			fields = append(fields, reflect.StructField{Name: name, Type: inner, Tag: reflect.StructTag(tag), Anonymous: true})
			continue
		}
		fields = append(fields, reflect.StructField{Name: name, Type: b.build(depth - 1), Tag: reflect.StructTag(tag)})
	}
	return reflect.StructOf(fields)
}

// buildType returns the type data makes, or nil when reflect refuses it.
func buildType(data []byte) (t reflect.Type) {
	defer func() {
		if recover() != nil {
			t = nil // reflect.StructOf refuses some embeddings: not ours to test
		}
	}()
	b := &typeBuilder{data: data}
	return b.build(5)
}

// populated returns a value of t whose pointers, slices and maps hold one
// element each, and whose channels and functions are not nil, so that
// encoding/json visits every part of t it writes.
func populated(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	if t == reflect.TypeFor[json.RawMessage]() {
		v.SetBytes([]byte("null")) // empty, it fails the marshaling first
		return v
	}
	switch t.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		v.Elem().Set(populated(t.Elem()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(t, 1, 1))
		v.Index(0).Set(populated(t.Elem()))
	case reflect.Array:
		for i := range t.Len() {
			v.Index(i).Set(populated(t.Elem()))
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		v.SetMapIndex(reflect.New(t.Key()).Elem(), populated(t.Elem()))
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				v.Field(i).Set(populated(t.Field(i).Type))
			}
		}
	case reflect.Chan:
		v.Set(reflect.MakeChan(t, 0))
	case reflect.Func:
		v.Set(reflect.MakeFunc(t, func([]reflect.Value) []reflect.Value { return nil }))
	}
	return v
}

func marshalErr(v reflect.Value) error {
	_, err := json.Marshal(v.Interface())
	return err
}

// FuzzSchemaFor builds a type from the input and describes it: no panic;
// an error exactly when a type without JSON is reachable; otherwise the
// schema compiles, and random values of the type, as encoding/json and
// go-json write them, are accepted by it.
func FuzzSchemaFor(f *testing.F) {
	for _, seed := range [][]byte{
		{17, 4, 1, 5, 2, 13, 4, 3, 12, 19, 0},
		{18, 3, 9, 17, 2, 1, 1, 2, 3, 0, 12, 5},
		{13, 12, 17, 2, 24, 1, 0, 0},
		{15, 16, 14, 3, 13, 10},
		{19, 1},
		{17, 2, 3, 19, 0, 1, 5},
	} {
		f.Add(seed, int64(len(seed)))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed int64) {
		typ := buildType(data)
		if typ == nil {
			return
		}
		// A type without JSON is reachable when encoding/json refuses a
		// value of typ with every pointer, slice and map filled.
		var unsupported *json.UnsupportedTypeError
		bad := errors.As(marshalErr(populated(typ)), &unsupported)
		s, defs, err := openrpc.SchemaFor(typ)
		var de *openrpc.DeriveError
		switch {
		case bad && !errors.As(err, &de):
			t.Fatalf("%v: SchemaFor = %v, want a *DeriveError", typ, err)
		case !bad && err != nil:
			t.Fatalf("%v: %v", typ, err)
		case bad:
			return
		}
		if s == nil || defs == nil {
			t.Fatalf("%v: nil schema or components", typ)
		}
		doc, err := openrpc.Describe(openrpc.Info{Title: "f", Version: "1"}, rpc.MethodInfo{Name: "m", Result: typ})
		if err != nil {
			t.Fatalf("%v: Describe: %v", typ, err)
		}
		v, err := validator.New(doc)
		if err != nil {
			t.Fatalf("%v: validator.New: %v", typ, err)
		}
		rng := rand.New(rand.NewSource(seed))
		for range 4 {
			val := randomValue(typ, rng, 0)
			for _, marshal := range []func(any) ([]byte, error){json.Marshal, gojson.Marshal} {
				raw, err := marshal(val.Interface())
				if err != nil {
					continue // random bytes for json.RawMessage, say
				}
				if err := v.Result("m", raw); err != nil {
					schema, _ := json.Marshal(doc.Methods[0].Result.Schema)
					comps, _ := json.Marshal(doc.Components)
					t.Fatalf("%v: its schema refuses what is written for a value of it: %v\nvalue %s\nschema %s\ncomponents %s", typ, err, raw, schema, comps)
				}
			}
		}
	})
}

// randomValue returns a random value of t: small collections, nil
// pointers, slices and maps now and then, valid raw JSON, any JSON value
// for an interface.
func randomValue(t reflect.Type, rng *rand.Rand, depth int) reflect.Value {
	v := reflect.New(t).Elem()
	switch t {
	case reflect.TypeFor[json.RawMessage]():
		raws := []string{`null`, `{"a":[1,"x"]}`, `-0.5e3`, `"s"`, `[true]`}
		v.SetBytes([]byte(raws[rng.Intn(len(raws))]))
		return v
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Unix(rng.Int63n(1<<33), rng.Int63n(1e9)).UTC()))
		return v
	}
	if depth > 8 {
		return v
	}
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(rng.Intn(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(rng.Int63() >> (64 - t.Bits()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(rng.Uint64() >> (64 - t.Bits()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(rng.NormFloat64() * 1e6)
	case reflect.String:
		runes := []rune("aZ0 \"\\\u00e9\u2028\U0001F600<>&")
		b := make([]rune, rng.Intn(6))
		for i := range b {
			b[i] = runes[rng.Intn(len(runes))]
		}
		v.SetString(string(b))
	case reflect.Interface:
		choices := []any{nil, 1.5, "s", true, map[string]any{"k": []any{1.0}}}
		if c := choices[rng.Intn(len(choices))]; c != nil {
			v.Set(reflect.ValueOf(c))
		}
	case reflect.Pointer:
		if rng.Intn(4) > 0 {
			v.Set(reflect.New(t.Elem()))
			v.Elem().Set(randomValue(t.Elem(), rng, depth+1))
		}
	case reflect.Slice:
		if rng.Intn(5) > 0 {
			n := rng.Intn(4)
			v.Set(reflect.MakeSlice(t, n, n))
			for i := range n {
				v.Index(i).Set(randomValue(t.Elem(), rng, depth+1))
			}
		}
	case reflect.Array:
		for i := range t.Len() {
			v.Index(i).Set(randomValue(t.Elem(), rng, depth+1))
		}
	case reflect.Map:
		if rng.Intn(5) > 0 {
			v.Set(reflect.MakeMap(t))
			for range rng.Intn(4) {
				v.SetMapIndex(randomValue(t.Key(), rng, depth+1), randomValue(t.Elem(), rng, depth+1))
			}
		}
	case reflect.Struct:
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				v.Field(i).Set(randomValue(t.Field(i).Type, rng, depth+1))
			}
		}
	}
	return v
}
