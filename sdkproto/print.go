package sdkproto

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/linerpc/linerpc/internal/wire"
)

// This file makes the values a program prints or logs show what they mean.
// Without it, fmt shows the insides of the lossless layer: the kept bytes
// of every decoded value as lists of numbers, and the addresses of
// optional members. So each wire type prints as its JSON text, compact,
// exactly as it encodes (String serves %v, %+v and %s); OptionalInt and
// OptionalString print their raw JSON, or absent. %#v still shows the Go
// value of the others as it is.

// jsonText returns the compact JSON text of v, or why v does not encode
// (a json.RawMessage member set in Go to invalid JSON).
func jsonText(v any) string {
	b, err := wire.Stringify(v)
	if err != nil {
		return "<invalid: " + err.Error() + ">"
	}
	return string(b)
}

// formatRaw prints the raw JSON of an optional member as fmt prints a
// string with verb, "absent" when the member was.
func formatRaw(f fmt.State, verb rune, raw json.RawMessage) {
	text := "absent"
	if raw != nil {
		text = string(compact(raw))
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), text)
}

// Format prints the member's raw JSON ("absent" when it was), as fmt
// prints a string; verbs for integers print its value when Int64 has one.
func (o OptionalInt) Format(f fmt.State, verb rune) {
	if n, ok := o.Int64(); ok {
		switch verb {
		case 'd', 'b', 'o', 'O', 'x', 'X':
			fmt.Fprintf(f, fmt.FormatString(f, verb), n)
			return
		}
	}
	formatRaw(f, verb, o.raw)
}

// Format prints the member's raw JSON ("absent" when it was), as fmt
// prints a string: a JSON string keeps its quotes, so that "" and null
// stay apart.
func (o OptionalString) Format(f fmt.State, verb rune) { formatRaw(f, verb, o.raw) }

// String returns the notification as "#<Index> <method> <params>", the
// params as compact JSON text; "#<Index> " is left out when Index is 0.
func (n Notification) String() string {
	s := n.Method + " " + string(compact(n.Params))
	if n.Params == nil {
		s = n.Method
	}
	if n.Index == 0 {
		return s
	}
	return "#" + strconv.FormatUint(n.Index, 10) + " " + s
}

// String returns "<mime type>, <n> bytes (block <Index>)", not the bytes.
func (u Upload) String() string {
	return u.MimeType + ", " + strconv.Itoa(len(u.Data)) + " bytes (block " + strconv.Itoa(u.Index) + ")"
}

// The params and results of the methods and notifications.

// String returns the JSON text of p, compact.
func (p InitializeParams) String() string { return jsonText(p) }

// String returns the JSON text of r, compact.
func (r InitializeResult) String() string { return jsonText(r) }

// String returns the JSON text of s, compact.
func (s ServerInfo) String() string { return jsonText(s) }

// String returns the JSON text of p, compact.
func (p SessionPromptParams) String() string { return jsonText(p) }

// String returns the JSON text of r, compact.
func (r SessionPromptResult) String() string { return jsonText(r) }

// String returns the JSON text of r: {}.
func (r ShutdownResult) String() string { return "{}" }

// String returns the JSON text of p, compact.
func (p SessionEventParams) String() string { return jsonText(p) }

// String returns the JSON text of p, compact.
func (p SessionStatusParams) String() string { return jsonText(p) }

// String returns the JSON text of p, compact.
func (p SubagentStartedParams) String() string { return jsonText(p) }

// String returns the JSON text of p, compact.
func (p SubagentFinishedParams) String() string { return jsonText(p) }

// Content blocks, events and messages.

// String returns the JSON text of b, compact.
func (b ContentBlock) String() string { return jsonText(b) }

// String returns the JSON text of r, compact.
func (r ImageAttachmentRef) String() string { return jsonText(r) }

// String returns the JSON text of d, compact.
func (d Dimensions) String() string { return jsonText(d) }

// String returns the JSON text of e, compact.
func (e Event) String() string { return jsonText(e) }

// String returns the JSON text of s, compact: "append", or an object.
func (s SurfaceOp) String() string { return jsonText(s) }

// String returns the JSON text of m, compact.
func (m Message) String() string { return jsonText(m) }

// String returns the JSON text of s, compact.
func (s MessageSource) String() string { return jsonText(s) }

// The data of events and what it holds.

// String returns the JSON text of u.
func (u TokenUsage) String() string { return jsonText(u) }

// String returns the JSON text of f.
func (f LLMFailure) String() string { return jsonText(f) }

// String returns the JSON text of r.
func (r FinishReason) String() string { return jsonText(r) }

// String returns the JSON text of r.
func (r TurnEndReason) String() string { return jsonText(r) }

// String returns the JSON text of r.
func (r AbortReason) String() string { return jsonText(r) }

// String returns the JSON text of c.
func (c StreamChunk) String() string { return jsonText(c) }

// String returns the JSON text of d.
func (d InboxSplicedData) String() string { return jsonText(d) }

// String returns the JSON text of d.
func (d TurnData) String() string { return jsonText(d) }

// String returns the JSON text of d.
func (d StepData) String() string { return jsonText(d) }

// String returns the JSON text of d.
func (d AssistantChunkData) String() string { return jsonText(d) }

// String returns the JSON text of d.
func (d AssistantMessageData) String() string { return jsonText(d) }

// String returns the JSON text of d.
func (d ToolCallData) String() string { return jsonText(d) }

// String returns the JSON text of d.
func (d ToolResultData) String() string { return jsonText(d) }

// String returns the JSON text of e.
func (e ToolError) String() string { return jsonText(e) }

// String returns the JSON text of d.
func (d TurnEndData) String() string { return jsonText(d) }

// String returns the JSON text of d.
func (d RequestHeaderData) String() string { return jsonText(d) }

// String returns the JSON text of d.
func (d RequestContextData) String() string { return jsonText(d) }

// String returns the JSON text of d.
func (d TodoWriteData) String() string { return jsonText(d) }

// String returns the JSON text of d.
func (d SessionTitleData) String() string { return jsonText(d) }

// String returns the JSON text of d.
func (d SubagentDescriptorData) String() string { return jsonText(d) }

// String returns the JSON text of d.
func (d LLMRetryData) String() string { return jsonText(d) }

// String returns the JSON text of d.
func (d LLMRetryStartedData) String() string { return jsonText(d) }
