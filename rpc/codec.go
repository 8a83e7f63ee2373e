package rpc

import (
	"fmt"

	"github.com/goccy/go-json"
)

// decode decodes the JSON value data into *v with go-json. A panic inside
// the decoder (go-json has open reports of panics on malformed input) is
// contained and returned as an error, so that a peer's bytes never crash
// the process.
func decode[T any](data []byte, v *T) (err error) {
	defer containPanic(&err)
	return json.UnmarshalOf(data, v)
}

// decodeAny decodes data into v, a pointer, as decode does, for values
// whose type is known only at run time.
func decodeAny(data []byte, v any) (err error) {
	defer containPanic(&err)
	return json.Unmarshal(data, v)
}

// containPanic, deferred, turns a decoder panic into *err.
func containPanic(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("decoder panic: %v", p)
	}
}

// decodeParams decodes a params member into *p. An absent or null member
// leaves *p at its zero value, as an empty params object would.
func decodeParams[P any](params []byte, p *P) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	return decode(params, p)
}

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
