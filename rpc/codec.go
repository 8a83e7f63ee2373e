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
