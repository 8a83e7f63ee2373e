package wire

import (
	"bytes"
	"encoding/json"
)

// Stringify encodes v as JavaScript's JSON.stringify does for the values
// the module's wire types hold: compact, and without HTML escaping (<, >
// and & stay as they are, where encoding/json would write \u003c and so
// on). Encoding errors are those of encoding/json.
func Stringify(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
