package sdkproto

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/linerpc/linerpc/openrpc/validator"
)

var fuzzValidator = sync.OnceValues(func() (*validator.Validator, error) {
	return validator.New(OpenRPCDocument())
})

func documentValidator(t *testing.T) *validator.Validator {
	t.Helper()
	v, err := fuzzValidator()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// FuzzCanonicalBase64Pattern: the schema of an image upload accepts its
// data exactly when ValidatePromptBlocks's base64 check does: a non-empty
// string of canonical standard base64.
func FuzzCanonicalBase64Pattern(f *testing.F) {
	for _, s := range []string{
		"", "QQ==", "QR==", "QUI=", "QUJ=", "QUJD", "QUJ", "Q===", "====", "QQ", "QQ=", "-_8=", "/+8=", "/+9=",
		"iVBORw0KGgo=", "iVBO Rw0K", "iVBO\nRw0K", "data:image/png;base64,QQ==", "QQ==QQ==", "AAAA", "AA==", "AB==",
		"AAA=", "AAE=", "ÿÿÿÿ", "QUJDRA==", "QUJDRB==",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data, err := json.Marshal(s) // invalid UTF-8 becomes U+FFFD: read it back
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		_, canonical := canonicalBase64(ContentBlock{Type: BlockTypeImage, Data: s, MimeType: "image/png"})
		params := `{"sessionId":"s","contentBlocks":[{"type":"image","mimeType":"image/png","data":` + string(data) + `}]}`
		err = documentValidator(t).Params("session/prompt", json.RawMessage(params))
		if canonical != (err == nil) {
			t.Fatalf("data %q: canonical base64 %v, the schema says %v", s, canonical, err)
		}
	})
}

// FuzzMaxTokensSchema: the schema of initialize's maxTokens accepts a
// value exactly when InitializeParams.Validate does (a positive safe
// integer, as JavaScript reads JSON numbers), for every JSON value whose
// number, if it is one, is exactly a double. A number written with more
// digits than a double holds (4096.0000000000000000001) is an integer to
// JavaScript, which rounds it, and not to the Go validator, which reads
// it exactly: the one place where they differ.
func FuzzMaxTokensSchema(f *testing.F) {
	for _, s := range []string{
		"1", "4096", "1.0", "2e3", "0.1e1", "10e-1", "1E2", "0", "-0", "-1", "1.5", "9007199254740991", "9007199254740992",
		"9007199254740991.0", "9.007199254740991e15", "1e300", "1e-400", "null", "true", `"4096"`, "[4096]", `{"value":4096}`,
		"4096.0000000000000000001",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		raw := json.RawMessage(s)
		if kindOf(raw) == kindNumber && !exactDouble(s) {
			return
		}
		var p InitializeParams
		if err := p.UnmarshalJSON([]byte(`{"cwd":"/w","provider":"p","model":"m","maxTokens":` + s + `}`)); err != nil {
			t.Fatal(err)
		}
		want := p.Validate()
		got := documentValidator(t).Params("initialize", json.RawMessage(`{"cwd":"/w","provider":"p","model":"m","maxTokens":`+s+`}`))
		if (want == nil) != (got == nil) {
			t.Fatalf("maxTokens %s: Validate says %v, the schema says %v", s, want, got)
		}
	})
}

// exactDouble reports whether the JSON number s is exactly a double
// (false for one out of a double's range, or with an exponent beyond
// 1000, which big.Rat would take long to expand).
func exactDouble(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		if e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+")); err != nil || e > 1000 || e < -1000 {
			return false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return false
	}
	exact := new(big.Rat)
	exact.SetFloat64(f)
	return r.Cmp(exact) == 0
}
