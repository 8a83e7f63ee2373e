package openrpc

import (
	"reflect"
	"slices"
	"strings"
)

// jsonField is a member encoding/json writes for a struct field.
type jsonField struct {
	name     string // the member's name
	goName   string // the field's name, for errors
	typ      reflect.Type
	optional bool // omitempty or omitzero: the member may be absent
	quoted   bool // the ",string" option: the value is written as a string
	doc      string
	index    []int
	tagged   bool
}

// jsonFields returns the members encoding/json writes for the struct type
// t, in field order, by its rules: exported fields, renamed by their json
// tag, "-" left out, the fields of embedded structs promoted unless
// the embedded field is named by a tag, and of several fields with one
// name the shallowest wins, then the tagged one; a tie leaves them all
// out. The jsonschema tag, as in google/jsonschema-go, is the member's
// description.
func jsonFields(t reflect.Type) []jsonField {
	type level struct {
		typ   reflect.Type
		index []int
		// viaPointer: the level is reached through an embedded pointer,
		// whose fields are absent when it is nil.
		viaPointer bool
	}
	var fields []jsonField
	var current []level
	next := []level{{typ: t}}
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current, next = next, nil
		count := map[string]int{}
		var found []jsonField
		// A struct embedded more than once at one depth gives each of its
		// names more than once there, so that none of them is kept, as
		// encoding/json does.
		times := map[reflect.Type]int{}
		for _, l := range current {
			times[l.typ]++
		}
		for _, l := range current {
			if visited[l.typ] {
				continue
			}
			visited[l.typ] = true
			for i := range l.typ.NumField() {
				sf := l.typ.Field(i)
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				ft := sf.Type
				if sf.Anonymous {
					pointer := ft.Kind() == reflect.Pointer
					if pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
					if name == "" && ft.Kind() == reflect.Struct {
						next = append(next, level{typ: ft, index: append(slices.Clone(l.index), i), viaPointer: l.viaPointer || pointer})
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				f := jsonField{
					name: name, goName: sf.Name, typ: sf.Type, tagged: name != "",
					index: append(slices.Clone(l.index), i), doc: sf.Tag.Get("jsonschema"),
					optional: l.viaPointer,
				}
				if f.name == "" {
					f.name = sf.Name
				}
				for _, o := range strings.Split(opts, ",") {
					switch o {
					case "omitempty", "omitzero":
						f.optional = true
					case "string":
						f.quoted = quotable(sf.Type)
					}
				}
				for range times[l.typ] {
					count[f.name]++
					found = append(found, f)
				}
			}
		}
		// At one depth, a name given by several fields goes to the one
		// tagged, if exactly one is; otherwise to none. A name seen at a
		// shallower depth hides them all.
		for _, f := range found {
			if slices.ContainsFunc(fields, func(g jsonField) bool { return g.name == f.name }) {
				continue
			}
			if count[f.name] > 1 {
				tagged := 0
				for _, g := range found {
					if g.name == f.name && g.tagged {
						tagged++
					}
				}
				if tagged != 1 || !f.tagged {
					continue
				}
			}
			fields = append(fields, f)
		}
		// Names seen at this depth, kept or not, hide the deeper ones.
		for name := range count {
			if !slices.ContainsFunc(fields, func(g jsonField) bool { return g.name == name }) {
				fields = append(fields, jsonField{name: name, index: nil})
			}
		}
	}
	kept := fields[:0]
	for _, f := range fields {
		if f.index != nil {
			kept = append(kept, f)
		}
	}
	slices.SortStableFunc(kept, func(a, b jsonField) int { return slices.Compare(a.index, b.index) })
	return kept
}

// quotable reports whether the ",string" option applies to t: a string,
// a number or a boolean (through one pointer).
func quotable(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}
