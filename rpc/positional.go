package rpc

import (
	"encoding/json"
	"strconv"

	"github.com/linerpc/linerpc/internal/lines"
)

// UnmarshalParams decodes params given by name or by position (JSON-RPC
// 2.0 §4.2) into one Go type. An array is decoded element by element into
// positional, one pointer per element, in order; anything else (an
// object, null) is decoded into named. It is meant for a params type's
// UnmarshalJSON method:
//
//	type SubtractParams struct {
//		Minuend    int `json:"minuend"`
//		Subtrahend int `json:"subtrahend"`
//	}
//
//	// UnmarshalJSON accepts {"minuend":42,"subtrahend":23} and [42,23].
//	func (p *SubtractParams) UnmarshalJSON(data []byte) error {
//		type byName SubtractParams // without this method: decoded member by member
//		return rpc.UnmarshalParams(data, (*byName)(p), &p.Minuend, &p.Subtrahend)
//	}
//
// An array shorter than positional leaves the values it does not reach as
// they are, as an object that leaves members out does; a longer one is an
// error. The error of an element that does not decode names its position,
// and so does the CodeInvalidParams answer a Conn writes for it
// ("invalid params: position 1: expected an integer, got a string").
// Values are decoded with the package's JSON decoder, as params are.
func UnmarshalParams(data []byte, named any, positional ...any) error {
	data = lines.TrimSpace(data)
	if len(data) == 0 || data[0] != '[' {
		return decodeAny(data, named)
	}
	var elems []json.RawMessage
	if err := decodeAny(data, &elems); err != nil {
		return err
	}
	if len(elems) > len(positional) {
		return tooManyParams{got: len(elems), want: len(positional)}
	}
	for i, e := range elems {
		if err := decodeAny(e, positional[i]); err != nil {
			return &PositionError{Position: i, Err: err}
		}
	}
	return nil
}

// PositionError is the error of UnmarshalParams for an element of params
// given by position that does not decode: Position counts from 0.
type PositionError struct {
	Position int
	Err      error
}

// Error says which position and what went wrong.
func (e *PositionError) Error() string {
	return "params position " + strconv.Itoa(e.Position) + ": " + e.Err.Error()
}

// Unwrap returns what went wrong.
func (e *PositionError) Unwrap() error { return e.Err }

// tooManyParams is the error of UnmarshalParams for an array longer than
// its pointers.
type tooManyParams struct{ got, want int }

func (e tooManyParams) Error() string {
	return strconv.Itoa(e.got) + " params given by position, at most " + strconv.Itoa(e.want) + " expected"
}
