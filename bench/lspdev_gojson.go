package bench

import (
	stdjson "encoding/json"

	gojson "github.com/goccy/go-json"
	lsp "go.lsp.dev/jsonrpc2"
)

// lspdev-gojson is go.lsp.dev/jsonrpc2 exactly as lspdev, with the payload
// codec swapped for goJSONCodec: the peer given the same JSON engine as
// linerpc and the floor, so that the comparison isolates the RPC machinery.

var lspdevGojsonContender = &contender{
	name:          "lspdev-gojson",
	serve:         func(rw *end, h *handlers) server { return startLspdev(rw, h, goJSONCodec{}) },
	dial:          func(rw *end, h *handlers) client { return startLspdev(rw, h, goJSONCodec{}) },
	diesOnGarbage: lspdevContender.diesOnGarbage,
}

// goJSONCodec is a go.lsp.dev/jsonrpc2 Codec backed by github.com/goccy/go-json,
// written against the public Codec interface and its contract:
//
//   - safe for concurrent use (it has no state);
//   - no HTML escaping ('<', '>', '&' are written as they are), like a
//     json.Encoder with SetEscapeHTML(false), which is what the default codec
//     produces;
//   - a jsonrpc2.RawMessage or encoding/json.RawMessage is passed through
//     verbatim on Marshal (nil is the null literal), and Unmarshal into a
//     *RawMessage copies the bytes into a slice the caller owns (a nil input
//     gives a nil RawMessage).
type goJSONCodec struct{}

var _ lsp.Codec = goJSONCodec{}

// Marshal implements lsp.Codec.
func (goJSONCodec) Marshal(v any) ([]byte, error) {
	switch m := v.(type) {
	case lsp.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	case stdjson.RawMessage:
		if m == nil {
			return []byte("null"), nil
		}
		return m, nil
	}
	return gojson.MarshalWithOption(v, gojson.DisableHTMLEscape())
}

// Unmarshal implements lsp.Codec.
func (goJSONCodec) Unmarshal(data []byte, v any) error {
	switch p := v.(type) {
	case *lsp.RawMessage:
		*p = cloneRaw(data)
		return nil
	case *stdjson.RawMessage:
		*p = cloneRaw(data)
		return nil
	}
	return gojson.Unmarshal(data, v)
}

func cloneRaw(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
