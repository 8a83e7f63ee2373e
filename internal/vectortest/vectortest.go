// Package vectortest loads the wire vectors kept in testdata/vectors and
// matches values against their expectations, placeholders included. It is
// shared by the tests of the public packages.
package vectortest

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
)

// Vector is one record of a vectors file (see testdata/vectors/README.md).
// Members whose spelling matters stay raw.
type Vector struct {
	Name         string                     `json:"name"`
	Direction    string                     `json:"direction"`
	Revision     string                     `json:"revision"`
	Given        map[string]json.RawMessage `json:"given"`
	Frame        json.RawMessage            `json:"frame"`
	Raw          *string                    `json:"raw"`
	Unterminated bool                       `json:"unterminated"`
	ChunksHex    []string                   `json:"chunksHex"`
	Frames       []json.RawMessage          `json:"frames"`
	Valid        bool                       `json:"valid"`
	Expect       map[string]json.RawMessage `json:"expect"`
}

// Dir returns the directory of the project's copy of the vectors.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "vectors")
}

// Load reads every vector of the named file (for example "framing.ndjson").
func Load(name string) ([]Vector, error) {
	data, err := os.ReadFile(filepath.Join(Dir(), name))
	if err != nil {
		return nil, err
	}
	var out []Vector
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<26)
	for n := 1; sc.Scan(); n++ {
		var v Vector
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// Targets reports whether the vector applies to the newer revision that
// this project implements.
func (v Vector) Targets() bool { return v.Revision == "all" || v.Revision == "newer" }

// Chunks returns the wire bytes of the vector, in the chunks they are to be
// delivered in.
func (v Vector) Chunks() ([][]byte, error) {
	switch {
	case v.ChunksHex != nil:
		var out [][]byte
		for _, h := range v.ChunksHex {
			b, err := hex.DecodeString(h)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
		return out, nil
	case v.Raw != nil:
		b := []byte(*v.Raw)
		if !v.Unterminated {
			b = append(b, '\n')
		}
		return [][]byte{b}, nil
	case v.Frame != nil:
		var buf bytes.Buffer
		if err := json.Compact(&buf, v.Frame); err != nil {
			return nil, err
		}
		buf.WriteByte('\n')
		return [][]byte{buf.Bytes()}, nil
	}
	return nil, fmt.Errorf("vector %s has no wire bytes", v.Name)
}

// GivenBool returns the boolean precondition key, false when absent.
func (v Vector) GivenBool(key string) bool {
	var b bool
	_ = json.Unmarshal(v.Given[key], &b)
	return b
}

// GivenString returns the string precondition key, "" when absent.
func (v Vector) GivenString(key string) string {
	var s string
	_ = json.Unmarshal(v.Given[key], &s)
	return s
}

// Match reports whether the JSON value got matches the expectation want,
// which may use the placeholders of the vectors README. A nil got stands for
// an absent member. Numbers match when they are equal as float64 values, as
// they are after JSON.parse: 1 and 1.0 match, and so does an exact echo of an
// id beyond 2^53 and its upstream rounding. It returns a description of the first difference.
func Match(want, got json.RawMessage) error {
	var w, g any
	if err := decodeNumber(want, &w); err != nil {
		return fmt.Errorf("expectation: %w", err)
	}
	if got == nil {
		if w == "{{absent}}" || w == "{{any}}" {
			return nil
		}
		return fmt.Errorf("absent, want %s", want)
	}
	if err := decodeNumber(got, &g); err != nil {
		return fmt.Errorf("value: %w", err)
	}
	return match("$", w, g)
}

func decodeNumber(data []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	return d.Decode(v)
}

var (
	uuidRE   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	sha256RE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

func match(path string, want, got any) error {
	if s, ok := want.(string); ok && strings.HasPrefix(s, "{{") && strings.HasSuffix(s, "}}") {
		return placeholder(path, s, got)
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: got %v, want an object", path, got)
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, present := g[k]
			if !present {
				if w[k] == "{{absent}}" || w[k] == "{{any}}" {
					continue
				}
				return fmt.Errorf("%s.%s: absent, want %v", path, k, w[k])
			}
			if w[k] == "{{absent}}" {
				return fmt.Errorf("%s.%s: present (%v), want absent", path, k, gv)
			}
			if err := match(path+"."+k, w[k], gv); err != nil {
				return err
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				return fmt.Errorf("%s.%s: unexpected member %v", path, k, g[k])
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: got %v, want %v", path, got, want)
		}
		for i := range w {
			if err := match(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); err != nil {
				return err
			}
		}
		return nil
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return fmt.Errorf("%s: got %v, want number %v", path, got, w)
		}
		wf, err1 := w.Float64()
		gf, err2 := g.Float64()
		if err1 == nil && err2 == nil && wf == gf {
			return nil
		}
		return fmt.Errorf("%s: got %v, want %v", path, g, w)
	default:
		if want != got {
			return fmt.Errorf("%s: got %#v, want %#v", path, got, want)
		}
		return nil
	}
}

func placeholder(path, p string, got any) error {
	ok := false
	switch p {
	case "{{any}}", "{{unspecified}}":
		ok = true
	case "{{absent}}":
		ok = false
	case "{{string}}":
		_, ok = got.(string)
	case "{{uuid}}":
		s, isStr := got.(string)
		ok = isStr && uuidRE.MatchString(s)
	case "{{sha256-attachment-id}}":
		s, isStr := got.(string)
		ok = isStr && sha256RE.MatchString(s)
	case "{{image-media-type}}":
		switch got {
		case "image/png", "image/jpeg", "image/webp", "image/gif":
			ok = true
		}
	case "{{positive-int}}":
		if n, isNum := got.(json.Number); isNum {
			i, err := n.Int64()
			ok = err == nil && i > 0
		}
	default:
		return fmt.Errorf("%s: unknown placeholder %s", path, p)
	}
	if !ok {
		return fmt.Errorf("%s: got %#v, want %s", path, got, p)
	}
	return nil
}
