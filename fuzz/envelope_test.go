package fuzz

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/wire"
)

// goMaxDepth is the nesting encoding/json refuses beyond; JSON.parse and
// the wire scanner accept deeper values (the Conn drops them as too deep).
const goMaxDepth = 10000

// goValid runs go-json's Valid, treating a panic as invalid.
func goValid(b []byte) (ok, panicked bool) {
	defer func() {
		if recover() != nil {
			ok, panicked = false, true
		}
	}()
	return gojson.Valid(b), false
}

// goMembers decodes an object with go-json into a map of raw members, as
// rpc does for error objects; a panic is reported.
func goMembers(b []byte) (m map[string]gojson.RawMessage, err error, panicked bool) {
	defer func() {
		if recover() != nil {
			m, err, panicked = nil, nil, true
		}
	}()
	err = gojson.Unmarshal(b, &m)
	return m, err, false
}

// FuzzEnvelope checks the envelope scanner against two references on every
// input, repaired to UTF-8 as the Conn repairs lines: encoding/json (and,
// for objects, a map of raw members) and go-json, which the Conn uses to
// decode members. All three must give the same validity verdict and the
// same id, method, params, result, error and jsonrpc members, byte for
// byte; go-json must not panic on what the scanner accepted.
func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[1,{"a":null}]}`,
		`{"id":1,"id":"2","\u0069d":3,"result":{"x":[]},"error":{"code":-1,"message":"m"}}`,
		`{"id":1e400,"method":"\ud800","params":"\udc00"}`, `[{"id":1}]`, `{"a" 1}`, `{"id":01}`,
		"\"\x7f\"", `{"":1,"jsonrpc":2}`, ` {} `, `{"id":-0.0e-0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		line := data
		if !utf8.Valid(line) {
			line = lines.AppendValidUTF8(nil, line)
		}
		var s wire.Scanner
		var env wire.Envelope
		top, depth, err := s.Scan(line, &env)
		valid := err == nil
		if depth > goMaxDepth {
			return
		}
		if std := json.Valid(line); std != valid {
			t.Fatalf("Scan says valid=%v (%v), encoding/json says %v", valid, err, std)
		}
		gv, panicked := goValid(line)
		if panicked {
			t.Fatalf("go-json Valid panicked")
		}
		if gv != valid {
			t.Fatalf("Scan says valid=%v (%v), go-json says %v", valid, err, gv)
		}
		if !valid || top != wire.Object {
			if !emptyEnvelope(env) {
				t.Fatalf("envelope filled for a line that is not a valid object: %+v", env)
			}
			return
		}
		var std map[string]json.RawMessage
		if err := json.Unmarshal(line, &std); err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		gm, gerr, panicked := goMembers(line)
		if panicked {
			t.Fatalf("go-json panicked on a valid object")
		}
		if gerr != nil {
			t.Fatalf("go-json refused a valid object: %v", gerr)
		}
		for _, m := range []struct {
			key string
			v   wire.Value
		}{
			{"jsonrpc", env.JSONRPC}, {"id", env.ID}, {"method", env.Method},
			{"params", env.Params}, {"result", env.Result}, {"error", env.Error},
		} {
			want, ok := std[m.key]
			if !ok {
				if m.v.Kind != wire.Absent || m.v.Raw != nil {
					t.Fatalf("member %s found (%q) but absent for encoding/json", m.key, m.v.Raw)
				}
				if _, ok := gm[m.key]; ok {
					t.Fatalf("member %s absent but go-json found it", m.key)
				}
				continue
			}
			if !bytes.Equal(want, m.v.Raw) {
				t.Fatalf("member %s = %q, encoding/json says %q", m.key, m.v.Raw, want)
			}
			if g := gm[m.key]; !bytes.Equal(bytes.TrimSpace(g), m.v.Raw) {
				t.Fatalf("member %s = %q, go-json says %q", m.key, m.v.Raw, g)
			}
			var s2 wire.Scanner
			if k, _, err := s2.Scan(m.v.Raw, nil); err != nil || k != m.v.Kind {
				t.Fatalf("member %s: kind %v, rescanned %v %v", m.key, m.v.Kind, k, err)
			}
		}
	})
}

func emptyEnvelope(env wire.Envelope) bool {
	for _, v := range []wire.Value{env.JSONRPC, env.ID, env.Method, env.Params, env.Result, env.Error} {
		if v.Kind != wire.Absent || v.Raw != nil {
			return false
		}
	}
	return true
}
