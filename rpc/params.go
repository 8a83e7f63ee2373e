package rpc

import (
	"errors"
	"reflect"
	"strconv"

	gojson "github.com/goccy/go-json"

	"github.com/linerpc/linerpc/internal/wire"
)

// A frame's params reach a typed handler's decoder without being walked
// twice. The scanner leaves them unchecked (wire.Scanner.LazyParams), so
// that the decoder, which rejects invalid JSON, checks them as it decodes;
// and when they end the frame, it does not even find where they end
// (wire.Scanner.ParamsToEnd): it guesses, and the decoder's success
// confirms the guess, since go-json rejects anything after the value.
//
// That is one mechanism with one rule, kept here: when a guess cannot be
// confirmed that way (the decode fails, or no typed decoder takes the
// frame), nothing has been done with the line, and it is scanned again in
// full (see Conn.dispatch). So members after params still decide what the
// frame is.
//
// A peer seen to write members after params has its next frames scanned in
// full from the start (reader.paramsFirst), as every guess would fail.

// paramsIn is a params member on its way to the decoder of a typed
// handler.
type paramsIn struct {
	raw       []byte
	unchecked *wire.Scanner // non-nil: raw is not validated yet
	toEnd     bool          // raw was guessed to end the object
}

// params returns the params member of the line being dispatched.
func (rd *reader) params() paramsIn {
	p := paramsIn{raw: rd.env.Params.Raw, toEnd: rd.env.ParamsToEnd}
	if rd.env.ParamsUnchecked {
		p.unchecked = &rd.scanner
	}
	return p
}

// checkParams validates the params member the scanner left unchecked, for
// the frames no typed decoder takes. A guess cannot be checked this way
// (errGuessedParams): the line is to be scanned again.
func (rd *reader) checkParams() error {
	err := rd.params().malformed()
	rd.env.ParamsUnchecked = false
	return err
}

// malformed returns why raw is not valid JSON, or nil when it is (or was
// validated with the line); errGuessedParams when raw is only a guess.
func (p paramsIn) malformed() error {
	if p.toEnd {
		return errGuessedParams
	}
	if p.unchecked == nil {
		return nil
	}
	_, _, err := p.unchecked.Scan(p.raw, nil)
	return err
}

// errGuessedParams says that params that did not decode were only guessed
// to be the last member.
var errGuessedParams = errors.New("rpc: params guessed to end the frame did not decode")

// malformedParams is what a typed handler's decoder returns for params that
// are not valid JSON: the line is dropped as malformed (or, for guessed
// params, scanned again).
type malformedParams struct{ err error }

func (m malformedParams) Error() string { return m.err.Error() }

// Unwrap returns why the params are malformed (a *wire.SyntaxError), or
// errGuessedParams.
func (m malformedParams) Unwrap() error { return m.err }

// decodeParamsOf decodes the params of a frame into *p for a typed handler
// (or only validates them, when the method takes NoParams). It returns a
// malformedParams error when the params are not valid JSON, and the
// decoding error when they do not decode into P.
func decodeParamsOf[P any](params paramsIn, p *P, omit bool) error {
	var err error
	if !omit {
		err = decodeParams(params.raw, p)
	}
	if err != nil || omit {
		if bad := params.malformed(); bad != nil {
			return malformedParams{bad}
		}
	}
	return err
}

// describeParams returns the text of the CodeInvalidParams answer to
// params that do not decode: which member, what was expected and what
// came, without the Go names of the types, which are the program's
// business (the full error goes to OnDrop and Logger).
func describeParams(err error) string {
	var te *gojson.UnmarshalTypeError
	if !errors.As(err, &te) {
		return "invalid params"
	}
	b := []byte("invalid params: ")
	if te.Field != "" {
		b = append(b, "member "...)
		b = strconv.AppendQuote(b, te.Field)
		b = append(b, ": "...)
	}
	want := expectedKind(te.Type)
	if want == "" {
		return string(append(b, "not of the expected type"...))
	}
	b = append(b, "expected "...)
	b = append(b, want...)
	if got := gotKind(te.Value); got != "" {
		b = append(b, ", got "...)
		b = append(b, got...)
	}
	return string(b)
}

// expectedKind names the JSON kind that decodes into t.
func expectedKind(t reflect.Type) string {
	if t == nil {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return ""
}

// gotKind names the JSON kind the decoder saw, from its description of
// the value ("number -5", "array", ...).
func gotKind(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] == ' ' {
			v = v[:i]
			break
		}
	}
	switch v {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "a boolean"
	case "array":
		return "an array"
	case "object":
		return "an object"
	case "null":
		return "null"
	}
	return ""
}
