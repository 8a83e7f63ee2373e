package sdkproto

import (
	"encoding/json"
	"strconv"

	"github.com/linerpc/linerpc/openrpc"
)

// The JSON Schemas of the wire types (draft-07, as OpenRPC 1.3 uses), for
// the protocol's OpenRPC document (OpenRPCDocument) and for any document
// of another API that carries these types.
//
// Every type of this package that decodes and encodes itself (its Go
// fields are not its JSON members) gives its own schema through
// openrpc.Schemer. The params and result types give an object of their
// members, written in place, so that OpenRPC describes their members as
// the method's params by name. The types that are shared, or that occur
// inside each other (a content block, a message, an event), are described
// once, in the components of OpenRPCDocument, and their schemas refer to
// them there: "#/components/schemas/<name>". A document of another API
// that uses them must carry those components too (copy
// OpenRPCDocument().Components.Schemas).
//
// What the schemas say is docs/wire.md §3 and §4 and the checks of
// validate.go, wherever JSON Schema can say it: required members, enums,
// constants, patterns, minimum sizes and unions discriminated by a
// member ("type" of a content block, an event or a stream chunk, "kind"
// of a message source or a turn-end reason). They refuse nothing that a
// runtime or a client of the contract sends:
//
//   - every object allows members it does not name, as the TypeScript
//     types and every upstream reader do (§2.2, §8);
//   - the unions the runtime's output may extend stay open (§4, §8.6): a
//     content block, an event, a stream chunk, a message source or a
//     turn-end reason of an unknown type or kind passes, as an object
//     with a string tag; the closed ones (a prompt's content blocks, a
//     status, a role) are those the contract closes;
//   - the content of a tool-result block holds content blocks, which may
//     in turn be tool results: that recursion is described for two levels
//     (a tool result's blocks are described as top-level blocks are), and
//     below them a block is only required to be an object with a string
//     type, as run() checks content (§6.3). Recursive schemas are not
//     used: OpenRPC's reference tooling (@open-rpc/schema-utils-js)
//     cannot dereference them.

// componentRef refers to the component name of the document.
func componentRef(name string) *openrpc.Schema {
	return &openrpc.Schema{Ref: "#/components/schemas/" + name}
}

// rawJSON returns v as JSON, for const, enum and examples.
func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// enumOf returns the enum of the strings vals.
func enumOf(vals ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(vals))
	for i, v := range vals {
		out[i] = rawJSON(v)
	}
	return out
}

func schemaString(desc string) *openrpc.Schema {
	return &openrpc.Schema{Type: openrpc.Types{"string"}, Description: desc}
}

func schemaNonEmpty(desc string) *openrpc.Schema {
	return &openrpc.Schema{Type: openrpc.Types{"string"}, MinLength: intp(1), Description: desc}
}

func schemaStringEnum(desc string, vals ...string) *openrpc.Schema {
	return &openrpc.Schema{Type: openrpc.Types{"string"}, Enum: enumOf(vals...), Description: desc}
}

func schemaConst(v any) *openrpc.Schema { return &openrpc.Schema{Const: rawJSON(v)} }

func schemaInteger(desc string) *openrpc.Schema {
	return &openrpc.Schema{Type: openrpc.Types{"integer"}, Description: desc}
}

func schemaCount(desc string) *openrpc.Schema {
	return &openrpc.Schema{Type: openrpc.Types{"integer"}, Minimum: floatp(0), Description: desc}
}

func schemaBoolean(desc string) *openrpc.Schema {
	return &openrpc.Schema{Type: openrpc.Types{"boolean"}, Description: desc}
}

func schemaArray(items *openrpc.Schema, desc string) *openrpc.Schema {
	return &openrpc.Schema{Type: openrpc.Types{"array"}, Items: items, Description: desc}
}

// schemaAny is any JSON value, described.
func schemaAny(desc string) *openrpc.Schema { return &openrpc.Schema{Description: desc} }

// schemaObject is an object with the members props, of which required
// are required; other members are allowed.
func schemaObject(desc string, required []string, props map[string]*openrpc.Schema) *openrpc.Schema {
	return &openrpc.Schema{Type: openrpc.Types{"object"}, Description: desc, Required: required, Properties: props}
}

// tagged is an object whose member tag is the string value: one arm of a
// union discriminated by tag, titled title, with the members props of
// which required are required besides the tag.
func tagged(title, tag, value string, required []string, props map[string]*openrpc.Schema) *openrpc.Schema {
	all := map[string]*openrpc.Schema{tag: schemaConst(value)}
	for k, v := range props {
		all[k] = v
	}
	return &openrpc.Schema{Title: title, Type: openrpc.Types{"object"}, Required: append([]string{tag}, required...), Properties: all}
}

// otherTag is the arm of an open union for the tags not among known: an
// object whose tag is any other string.
func otherTag(title, tag string, known []string) *openrpc.Schema {
	return &openrpc.Schema{
		Title: title, Type: openrpc.Types{"object"}, Required: []string{tag},
		Properties: map[string]*openrpc.Schema{tag: {Type: openrpc.Types{"string"}, Not: &openrpc.Schema{Enum: enumOf(known...)}}},
	}
}

// union is an object with a string member tag whose value decides which
// of arms it must match: exactly one (oneOf), since each arm takes its own
// values of tag.
func union(desc, tag string, arms ...*openrpc.Schema) *openrpc.Schema {
	return &openrpc.Schema{
		Type: openrpc.Types{"object"}, Description: desc, Required: []string{tag},
		Properties: map[string]*openrpc.Schema{tag: {Type: openrpc.Types{"string"}}},
		OneOf:      arms,
	}
}

func intp(n int) *int { return &n }

func floatp(f float64) *float64 { return &f }

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, 2^53-1, exact as
// a float64.
const maxSafeInteger = 1<<53 - 1

// The patterns of the schemas. They use the syntax that ECMAScript
// (ajv) and Go's regexp (the openrpc Validator) read alike.
const (
	// absolutePathPattern is an absolute path: POSIX /..., Windows C:\...
	// or C:/..., or a UNC path \\server\....
	absolutePathPattern = `^(/|[A-Za-z]:[\\/]|\\\\)`
	// canonicalBase64Pattern is canonical standard base64 (RFC 4648 §4,
	// padded, no white space): groups of four, then the last group with
	// its padding, whose unused bits are zero, so that decoding and
	// encoding again gives the same text. The empty string matches too;
	// minLength refuses it.
	canonicalBase64Pattern = `^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$`
)

// The known tags of the unions.
var (
	blockTypes = []string{BlockTypeText, BlockTypeReasoning, BlockTypeImage, BlockTypeToolCall, BlockTypeToolResult}
	chunkTypes = []string{string(ChunkBlockStart), string(ChunkTextDelta), string(ChunkReasoningDelta),
		string(ChunkToolCallDelta), string(ChunkBlockEnd), string(ChunkUsage), string(ChunkFinish)}
	sourceKinds  = []string{"user", "plugin", "model", "tool"}
	turnEndKinds = []string{string(TurnCompleted), string(TurnMaxTokens), string(TurnError), string(TurnAborted),
		string(TurnBlocked), string(TurnInterrupted)}
)

// The components' names.
const (
	compContentBlock        = "ContentBlock"
	compNestedContentBlock  = "NestedContentBlock"
	compPromptContentBlock  = "SdkPromptContentBlock"
	compImageAttachmentRef  = "ImageAttachmentRef"
	compDimensions          = "Dimensions"
	compMessage             = "Message"
	compMessageSource       = "MessageSource"
	compSessionEvent        = "SessionEvent"
	compSurfaceOp           = "SurfaceOp"
	compStreamChunk         = "StreamChunk"
	compTokenUsage          = "TokenUsage"
	compLLMFailure          = "LlmFailure"
	compFinishReason        = "FinishReason"
	compTurnEndReason       = "TurnEndReason"
	compInboxSplicedData    = "AgentInboxSplicedData"
	compTurnStartData       = "TurnStartData"
	compStepData            = "StepData"
	compAssistantChunkData  = "AssistantChunkData"
	compAssistantMessage    = "AssistantMessageData"
	compToolCallData        = "ToolCallData"
	compToolResultData      = "ToolResultData"
	compTurnEndData         = "TurnEndData"
	compRequestHeaderData   = "RequestHeaderData"
	compRequestContextData  = "RequestContextData"
	compTodoWriteData       = "TodoWriteData"
	compSessionTitleData    = "SessionTitleData"
	compSubagentDescriptor  = "SubagentDescriptorData"
	compLLMRetryData        = "LlmRetryData"
	compLLMRetryStartedData = "LlmRetryStartedData"
)

// eventData names the component that describes the data of each event
// type whose data the contract describes (docs/wire.md §4.5) and
// validate.go checks; the data of the other types is an object.
var eventData = []struct {
	typ  EventType
	comp string
}{
	{EventAgentInboxSpliced, compInboxSplicedData},
	{EventTurnStart, compTurnStartData},
	{EventStepStart, compStepData},
	{EventStepEnd, compStepData},
	{EventUserMessage, compMessage},
	{EventAssistantChunk, compAssistantChunkData},
	{EventAssistantMessage, compAssistantMessage},
	{EventToolCall, compToolCallData},
	{EventToolResult, compToolResultData},
	{EventTurnEnd, compTurnEndData},
	{EventRequestHeader, compRequestHeaderData},
	{EventRequestContext, compRequestContextData},
	{EventTodoWrite, compTodoWriteData},
	{EventSessionTitle, compSessionTitleData},
	{EventSubagentDescriptor, compSubagentDescriptor},
	{EventLLMRetry, compLLMRetryData},
	{EventLLMRetryStarted, compLLMRetryStartedData},
}

// schemaComponents returns the schemas the wire types' schemas refer to,
// by name, each new.
func schemaComponents() map[string]*openrpc.Schema {
	c := map[string]*openrpc.Schema{
		compContentBlock: contentBlockSchema("ContentBlock (docs/wire.md §4.1): one element of message content, "+
			"a union by type. The runtime's output may carry block types this document does not know: "+
			"such a block is an object with a string type.", compNestedContentBlock),
		compNestedContentBlock: contentBlockSchema("A content block inside a tool-result block: as ContentBlock, "+
			"except that the blocks of a tool result at this level are only required to be objects with a "+
			"string type (the document describes two levels of nesting, not a recursive schema).", ""),
		compPromptContentBlock:  promptBlockSchema(),
		compImageAttachmentRef:  ImageAttachmentRef{}.schema(),
		compDimensions:          Dimensions{}.schema(),
		compMessage:             Message{}.schema(),
		compMessageSource:       MessageSource{}.schema(),
		compSessionEvent:        Event{}.schema(),
		compSurfaceOp:           SurfaceOp{}.schema(),
		compStreamChunk:         streamChunkSchema(),
		compTokenUsage:          tokenUsageSchema(),
		compLLMFailure:          llmFailureSchema(),
		compFinishReason:        finishReasonSchema(),
		compTurnEndReason:       turnEndReasonSchema(),
		compInboxSplicedData:    inboxSplicedSchema(),
		compTurnStartData:       schemaObject("The data of turn/start.", []string{"turn"}, map[string]*openrpc.Schema{"turn": schemaInteger("the turn's number")}),
		compStepData:            schemaObject("The data of step/start and step/end.", []string{"turn", "step"}, turnStep(nil)),
		compAssistantChunkData:  schemaObject("The data of assistant/chunk.", []string{"turn", "step", "chunk"}, turnStep(map[string]*openrpc.Schema{"chunk": componentRef(compStreamChunk)})),
		compAssistantMessage:    assistantMessageSchema(),
		compToolCallData:        toolCallSchema(),
		compToolResultData:      toolResultSchema(),
		compTurnEndData:         schemaObject("The data of turn/end.", []string{"turn", "reason"}, map[string]*openrpc.Schema{"turn": schemaInteger("the turn's number"), "reason": componentRef(compTurnEndReason)}),
		compRequestHeaderData:   requestHeaderSchema(),
		compRequestContextData:  requestContextSchema(),
		compTodoWriteData:       todoWriteSchema(),
		compSessionTitleData:    sessionTitleSchema(),
		compSubagentDescriptor:  subagentDescriptorSchema(),
		compLLMRetryData:        llmRetrySchema(),
		compLLMRetryStartedData: schemaObject("The data of llm/retry-started.", []string{"retryId", "turn", "step", "retry"}, turnStep(map[string]*openrpc.Schema{"retryId": schemaString(""), "retry": schemaInteger("")})),
	}
	return c
}

// contentBlockSchema is the union of the output content blocks: text,
// reasoning, a durable image, a tool call, a tool result (whose blocks are
// those of the component nested, or, for "", any object with a string
// type) and any other type.
func contentBlockSchema(desc, nested string) *openrpc.Schema {
	inner := schemaObject("a content block", []string{"type"}, map[string]*openrpc.Schema{"type": schemaString("")})
	if nested != "" {
		inner = componentRef(nested)
	}
	return union(desc, "type",
		textBlock(BlockTypeText, "TextBlock", "visible text"),
		textBlock(BlockTypeReasoning, "ReasoningBlock", "the model's thinking, kept apart from the visible text"),
		tagged("ImageBlock", "type", BlockTypeImage, []string{"attachment"}, map[string]*openrpc.Schema{
			"attachment": componentRef(compImageAttachmentRef),
		}),
		toolCallBlock(),
		toolResultBlock(inner),
		otherTag("another block type", "type", blockTypes),
	)
}

func textBlock(typ, title, desc string) *openrpc.Schema {
	return tagged(title, "type", typ, []string{"text"}, map[string]*openrpc.Schema{"text": schemaString(desc)})
}

func toolCallBlock() *openrpc.Schema {
	return tagged("ToolCallBlock", "type", BlockTypeToolCall, []string{"id", "name", "arguments"}, map[string]*openrpc.Schema{
		"id":        schemaString("the call id"),
		"name":      schemaString("the tool's name"),
		"arguments": schemaString("the JSON text the model produced, possibly invalid; never an object"),
	})
}

func toolResultBlock(blocks *openrpc.Schema) *openrpc.Schema {
	return tagged("ToolResultBlock", "type", BlockTypeToolResult, []string{"toolCallId", "content"}, map[string]*openrpc.Schema{
		"toolCallId": schemaString("the id of the tool call answered"),
		"content":    schemaArray(blocks, "the result's content blocks"),
		"isError":    schemaBoolean("absent means false"),
	})
}

// promptBlockSchema is SdkPromptContentBlock: the closed union of what a
// prompt may carry (docs/wire.md §3.2). An image block is either an
// upload (data and mimeType, no attachment) or a durable reference
// (attachment, no data): the runtime tells them apart by data.
func promptBlockSchema() *openrpc.Schema {
	s := union("SdkPromptContentBlock (docs/wire.md §3.2): a content block of a prompt, a closed union by type: "+
		"the five ContentBlock types, an image being either an encoded upload (SdkEncodedImageBlock) or a durable "+
		"reference, told apart by the presence of data, as the runtime tells them apart.", "type",
		textBlock(BlockTypeText, "TextBlock", "visible text"),
		textBlock(BlockTypeReasoning, "ReasoningBlock", "thinking"),
		tagged("SdkEncodedImageBlock", "type", BlockTypeImage, []string{"data", "mimeType"}, map[string]*openrpc.Schema{
			"data": {Type: openrpc.Types{"string"}, MinLength: intp(1), Pattern: canonicalBase64Pattern,
				Description: "the image's bytes as canonical standard base64: the RFC 4648 alphabet with padding, " +
					"no white space, no data: prefix, not empty; decoding and encoding again gives the same text"},
			"mimeType": schemaStringEnum("the image's type, lowercase, no parameters", DefaultMediaTypes...),
		}),
		tagged("ImageBlock", "type", BlockTypeImage, []string{"attachment"}, map[string]*openrpc.Schema{
			"attachment": componentRef(compImageAttachmentRef),
		}),
		toolCallBlock(),
		toolResultBlock(componentRef(compNestedContentBlock)),
	)
	s.Properties["type"].Enum = enumOf(blockTypes...)
	upload, ref := s.OneOf[2], s.OneOf[3]
	upload.Not = &openrpc.Schema{Type: openrpc.Types{"object"}, Required: []string{"attachment"}}
	ref.Not = &openrpc.Schema{Type: openrpc.Types{"object"}, Required: []string{"data"}}
	return s
}

// schema is the schema of the ImageAttachmentRef component.
func (ImageAttachmentRef) schema() *openrpc.Schema {
	return schemaObject("ImageAttachmentRef (docs/wire.md §4.1): a durable reference to a stored image.",
		[]string{"attachmentId", "mediaType", "bytes", "width", "height"}, map[string]*openrpc.Schema{
			"attachmentId":       schemaString("opaque; the local store writes sha256: and 64 lowercase hex digits"),
			"mediaType":          schemaStringEnum("the stored image's type", DefaultMediaTypes...),
			"bytes":              schemaCount("the stored size"),
			"width":              schemaCount(""),
			"height":             schemaCount(""),
			"name":               schemaString(""),
			"originalDimensions": componentRef(compDimensions),
		})
}

// schema is the schema of the Dimensions component.
func (Dimensions) schema() *openrpc.Schema {
	return schemaObject("The dimensions of an image before it was scaled down.", []string{"width", "height"},
		map[string]*openrpc.Schema{"width": schemaCount(""), "height": schemaCount("")})
}

// schema is the schema of the Message component.
func (Message) schema() *openrpc.Schema {
	return schemaObject("Message (docs/wire.md §4.2): a conversation message.", []string{"id", "role", "content", "source"},
		map[string]*openrpc.Schema{
			"id":      schemaString(""),
			"role":    schemaStringEnum("", "system", "user", "assistant"),
			"content": schemaArray(componentRef(compContentBlock), ""),
			"source":  componentRef(compMessageSource),
		})
}

// schema is the schema of the MessageSource component, open on kind.
func (MessageSource) schema() *openrpc.Schema {
	return union("MessageSource (docs/wire.md §4.2): where a message came from, a union by kind; plugins add kinds.", "kind",
		tagged("user", "kind", "user", nil, nil),
		tagged("plugin", "kind", "plugin", []string{"plugin"}, map[string]*openrpc.Schema{
			"plugin": schemaString("the plugin that injected the message"),
			"form":   schemaStringEnum("", "instructions", "catalog", "snapshot", "notice", "relay", "recall"),
			"sections": schemaArray(schemaObject("", []string{"name", "text"}, map[string]*openrpc.Schema{
				"name": schemaString(""), "text": schemaString(""),
			}), "form snapshot"),
			"summary": schemaString("form notice"),
		}),
		tagged("model", "kind", "model", []string{"provider", "model"}, map[string]*openrpc.Schema{
			"provider":    schemaString(""),
			"model":       schemaString(""),
			"replayState": schemaAny("opaque adapter data"),
		}),
		tagged("tool", "kind", "tool", []string{"callId"}, map[string]*openrpc.Schema{"callId": schemaString("the tool call answered")}),
		otherTag("another kind", "kind", sourceKinds),
	)
}

// schema is the schema of the SessionEvent component: the envelope, and
// the data of each event type the contract describes.
func (Event) schema() *openrpc.Schema {
	arms := make([]*openrpc.Schema, 0, len(eventData)+1)
	known := make([]string, 0, len(eventData))
	for _, d := range eventData {
		arms = append(arms, tagged(string(d.typ), "type", string(d.typ), nil, map[string]*openrpc.Schema{"data": componentRef(d.comp)}))
		known = append(known, string(d.typ))
	}
	arms = append(arms, otherTag("another event type (its data an object)", "type", known))
	s := union("SessionEvent (docs/wire.md §4.5): a session-log event, as the session log stores it; type decides "+
		"the shape of data. Event types this document does not describe, the runtime's plugins' among them, pass "+
		"with any object as data.", "type", arms...)
	s.Required = []string{"type", "seq", "time", "data"}
	s.Properties["type"].Description = "the event type"
	s.Properties["seq"] = &openrpc.Schema{Type: openrpc.Types{"integer"}, Minimum: floatp(0),
		Description: "the event's place in its session's log, contiguous from 0"}
	s.Properties["time"] = schemaInteger("Unix time in milliseconds")
	s.Properties["data"] = &openrpc.Schema{Type: openrpc.Types{"object"}, Description: "the payload of the type"}
	s.Properties["ignorable"] = &openrpc.Schema{Const: rawJSON(true), Description: "set, to true, only on purely informational events"}
	s.Properties["sourceEventSeqs"] = schemaArray(schemaCount(""), "surface events: the seqs this event was built from or replaces")
	s.Properties["surfaceOp"] = componentRef(compSurfaceOp)
	return s
}

// schema is the schema of the SurfaceOp component.
func (SurfaceOp) schema() *openrpc.Schema {
	return &openrpc.Schema{
		Description: "How a surface event (user/message, assistant/message, tool/result) changes the visible transcript.",
		OneOf: []*openrpc.Schema{
			{Title: "append", Type: openrpc.Types{"string"}, Const: rawJSON(SurfaceAppend)},
			tagged("replace", "op", SurfaceReplace, []string{"start", "end"}, map[string]*openrpc.Schema{
				"start": schemaInteger(""), "end": schemaInteger(""),
			}),
		},
	}
}

// turnStep returns props with the members turn and step added.
func turnStep(props map[string]*openrpc.Schema) map[string]*openrpc.Schema {
	if props == nil {
		props = map[string]*openrpc.Schema{}
	}
	props["turn"] = schemaInteger("the turn's number")
	props["step"] = schemaInteger("the step's number in its turn")
	return props
}

func streamChunkSchema() *openrpc.Schema {
	index := func() *openrpc.Schema { return schemaCount("the block's index in the message") }
	return union("StreamChunk (docs/wire.md §4.3): a piece of a model stream, a union by type; unknown chunk types are skipped by readers.", "type",
		tagged(string(ChunkBlockStart), "type", string(ChunkBlockStart), []string{"index", "blockType"}, map[string]*openrpc.Schema{
			"index": index(), "blockType": schemaString("a content block type"),
		}),
		tagged(string(ChunkTextDelta), "type", string(ChunkTextDelta), []string{"index", "text"}, map[string]*openrpc.Schema{
			"index": index(), "text": schemaString(""),
		}),
		tagged(string(ChunkReasoningDelta), "type", string(ChunkReasoningDelta), []string{"index", "text"}, map[string]*openrpc.Schema{
			"index": index(), "text": schemaString(""),
		}),
		tagged(string(ChunkToolCallDelta), "type", string(ChunkToolCallDelta), []string{"index", "id", "argumentsDelta"}, map[string]*openrpc.Schema{
			"index": index(), "id": schemaString(""), "name": schemaString(""), "argumentsDelta": schemaString(""),
		}),
		tagged(string(ChunkBlockEnd), "type", string(ChunkBlockEnd), []string{"index", "block"}, map[string]*openrpc.Schema{
			"index": index(), "block": componentRef(compContentBlock),
		}),
		tagged(string(ChunkUsage), "type", string(ChunkUsage), []string{"usage"}, map[string]*openrpc.Schema{
			"usage": componentRef(compTokenUsage),
		}),
		tagged(string(ChunkFinish), "type", string(ChunkFinish), []string{"reason"}, map[string]*openrpc.Schema{
			"reason": componentRef(compFinishReason), "replayState": schemaAny("opaque adapter data"),
		}),
		otherTag("another chunk type", "type", chunkTypes),
	)
}

func tokenUsageSchema() *openrpc.Schema {
	return schemaObject("TokenUsage (docs/wire.md §4.3): the tokens of one model call; the counts do not overlap.",
		[]string{"inputTokens", "outputTokens"}, map[string]*openrpc.Schema{
			"inputTokens":      schemaCount("input tokens, cached input not included"),
			"outputTokens":     schemaCount(""),
			"cacheReadTokens":  schemaCount(""),
			"cacheWriteTokens": schemaCount(""),
			"reasoningTokens":  schemaCount(""),
		})
}

func llmFailureSchema() *openrpc.Schema {
	return schemaObject("LlmFailure (docs/wire.md §4.3): a failed model call.", []string{"message", "code"}, map[string]*openrpc.Schema{
		"message":              schemaString(""),
		"code":                 schemaString("the adapter's class of failure, e.g. INVALID_REQUEST"),
		"status":               schemaInteger("the HTTP status"),
		"providerRetryAfterMs": {Type: openrpc.Types{"number"}},
		"requestId":            schemaString(""),
	})
}

func finishReasonSchema() *openrpc.Schema {
	plain := func(kind FinishKind) *openrpc.Schema { return tagged(string(kind), "kind", string(kind), nil, nil) }
	failed := func(kind FinishKind) *openrpc.Schema {
		return tagged(string(kind), "kind", string(kind), []string{"failure"}, map[string]*openrpc.Schema{"failure": componentRef(compLLMFailure)})
	}
	s := union("FinishReason (docs/wire.md §4.3): why a model stream ended; aborted and error carry the failure.", "kind",
		plain(FinishStop), plain(FinishToolCalls), plain(FinishMaxTokens), failed(FinishAborted), failed(FinishError))
	return s
}

func turnEndReasonSchema() *openrpc.Schema {
	plain := func(kind TurnEndKind) *openrpc.Schema { return tagged(string(kind), "kind", string(kind), nil, nil) }
	return union("TurnEndReason (docs/wire.md §4.5): why a turn ended, a union by kind; the set is open. "+
		"Mind the names: error carries error (not failure), aborted a nested reason.", "kind",
		plain(TurnCompleted), plain(TurnMaxTokens), plain(TurnBlocked), plain(TurnInterrupted),
		tagged(string(TurnError), "kind", string(TurnError), []string{"error"}, map[string]*openrpc.Schema{"error": componentRef(compLLMFailure)}),
		tagged(string(TurnAborted), "kind", string(TurnAborted), []string{"reason"}, map[string]*openrpc.Schema{
			"reason": schemaObject("who aborted the turn: kind user, parent, hook (with a reason), disposed or legacy",
				[]string{"kind"}, map[string]*openrpc.Schema{"kind": schemaString(""), "reason": schemaString("")}),
		}),
		otherTag("another kind", "kind", turnEndKinds),
	)
}

func inboxSplicedSchema() *openrpc.Schema {
	return schemaObject("The data of agent/inbox/spliced: the receipt of a prompt (inserted holds the message whose id "+
		"session/prompt returned), or the loop taking queued messages (removedCount, inserted empty).",
		[]string{"target", "start", "inserted"}, map[string]*openrpc.Schema{
			"target":       schemaStringEnum("", "next-turn", "next-step"),
			"start":        schemaInteger(""),
			"removedCount": schemaCount(""),
			"inserted":     schemaArray(componentRef(compMessage), "the user messages inserted"),
			"outcome":      schemaStringEnum("", "canceled"),
		})
}

func assistantMessageSchema() *openrpc.Schema {
	return schemaObject("The data of assistant/message.", []string{"turn", "step", "message"}, turnStep(map[string]*openrpc.Schema{
		"message":     componentRef(compMessage),
		"usage":       componentRef(compTokenUsage),
		"interrupted": &openrpc.Schema{Const: rawJSON(true), Description: "the delivered prefix of a cancelled stream"},
	}))
}

func toolCallSchema() *openrpc.Schema {
	return schemaObject("The data of tool/call.", []string{"turn", "step", "callId", "name", "arguments"}, turnStep(map[string]*openrpc.Schema{
		"callId":    schemaString(""),
		"name":      schemaString(""),
		"arguments": schemaString("the raw JSON text of the arguments"),
	}))
}

func toolResultSchema() *openrpc.Schema {
	return schemaObject("The data of tool/result.", []string{"turn", "step", "message"}, turnStep(map[string]*openrpc.Schema{
		"message": componentRef(compMessage),
		"error": schemaObject("the tool's failure", []string{"name", "code"}, map[string]*openrpc.Schema{
			"name": schemaString(""), "code": schemaString(""),
		}),
		"meta": schemaAny("any JSON"),
	}))
}

func requestHeaderSchema() *openrpc.Schema {
	config := schemaObject("", []string{"provider", "model"}, map[string]*openrpc.Schema{
		"provider":        schemaString(""),
		"model":           schemaString(""),
		"reasoningEffort": schemaString(""),
		"temperature":     {Type: openrpc.Types{"number"}},
		"maxTokens":       schemaInteger(""),
		"stop":            schemaAny(""),
	})
	defaults := schemaObject("the members of config the adapter defaulted", nil, map[string]*openrpc.Schema{
		"reasoningEffort": schemaConst(true), "maxTokens": schemaConst(true),
	})
	tool := schemaObject("", []string{"name"}, map[string]*openrpc.Schema{
		"name": schemaString(""), "description": schemaString(""), "parameters": schemaAny("a JSON Schema"),
	})
	header := schemaObject("", []string{"config"}, map[string]*openrpc.Schema{
		"config": config, "adapterDefaults": defaults, "system": schemaString(""), "tools": schemaArray(tool, ""),
	})
	return schemaObject("The data of request/header.", []string{"header", "reason"}, map[string]*openrpc.Schema{
		"header": header,
		"reason": schemaStringEnum("", "initial", "resume", "change"),
	})
}

func requestContextSchema() *openrpc.Schema {
	return schemaObject("The data of request/context.", []string{"provider", "model"}, map[string]*openrpc.Schema{
		"provider": schemaString(""), "model": schemaString(""), "contextWindow": schemaCount(""),
	})
}

func todoWriteSchema() *openrpc.Schema {
	todo := schemaObject("", []string{"content", "status"}, map[string]*openrpc.Schema{
		"content": schemaString(""), "status": schemaStringEnum("", "pending", "in_progress", "completed"),
	})
	return schemaObject("The data of todo/write.", []string{"todos"}, map[string]*openrpc.Schema{"todos": schemaArray(todo, "")})
}

func sessionTitleSchema() *openrpc.Schema {
	return schemaObject("The data of session/title.", []string{"title", "messageSeqs", "source"}, map[string]*openrpc.Schema{
		"title":       schemaString(""),
		"messageSeqs": schemaArray(schemaCount(""), ""),
		"source":      schemaObject("", []string{"kind"}, map[string]*openrpc.Schema{"kind": schemaString("")}),
	})
}

func subagentDescriptorSchema() *openrpc.Schema {
	return schemaObject("The data of subagent/descriptor.", []string{"version", "mode", "provider"}, map[string]*openrpc.Schema{
		"version":  schemaInteger(""),
		"mode":     schemaStringEnum("", "one-shot", "continuable"),
		"provider": schemaString(""),
		"label":    schemaString(""),
	})
}

func llmRetrySchema() *openrpc.Schema {
	return schemaObject("The data of llm/retry.",
		[]string{"retryId", "turn", "step", "provider", "mode", "policyKey", "retry", "delayMs", "failure"},
		turnStep(map[string]*openrpc.Schema{
			"retryId":    schemaString(""),
			"provider":   schemaString(""),
			"mode":       schemaStringEnum("", "normal", "always"),
			"policyKey":  schemaString(""),
			"retry":      schemaInteger(""),
			"maxRetries": schemaInteger(""),
			"delayMs":    {Type: openrpc.Types{"number"}},
			"failure":    componentRef(compLLMFailure),
		}))
}

// The schemas the wire types give (openrpc.Schemer). The params and
// results are objects of their members, in place; the others refer to
// their components.

// JSONSchema describes initialize's params (docs/wire.md §3.1), with the
// runtime's checks of Validate: reasoningEffort a non-empty string,
// maxTokens a positive safe integer (1.0 and 2e3 are integers to JSON
// Schema, as to JavaScript), and cwd an absolute path, as both upstream
// clients send it.
func (InitializeParams) JSONSchema() *openrpc.Schema {
	return schemaObject("InitializeParams (docs/wire.md §3.1).", []string{"cwd", "provider", "model"}, map[string]*openrpc.Schema{
		"cwd": {Type: openrpc.Types{"string"}, MinLength: intp(1), Pattern: absolutePathPattern,
			Description: "the workspace directory of the sessions the SDK creates, an absolute path (both upstream clients " +
				"send one; the runtime resolves a relative one against its own working directory)"},
		"provider": schemaString("the provider route, e.g. deepseek-official"),
		"model":    schemaString("the model id on that route, e.g. deepseek-v4-flash"),
		"reasoningEffort": {Type: openrpc.Types{"string"}, MinLength: intp(1),
			Description: "an effort id of the adapter (off, low, high, max for DeepSeek's); absent keeps the model's default"},
		"maxTokens": {Type: openrpc.Types{"integer"}, Minimum: floatp(1), Maximum: floatp(maxSafeInteger),
			Description: "the output-token cap of each model request, a positive safe integer (1 to 2^53-1); absent, the provider's default applies"},
	})
}

// JSONSchema describes initialize's result: serverInfo with a string name
// and version, what InitializeResult.Check requires.
func (InitializeResult) JSONSchema() *openrpc.Schema {
	return schemaObject("InitializeResult (docs/wire.md §3.1).", []string{"serverInfo"}, map[string]*openrpc.Schema{
		"serverInfo": ServerInfo{}.JSONSchema(),
	})
}

// JSONSchema describes serverInfo: a string name and version.
func (ServerInfo) JSONSchema() *openrpc.Schema {
	s := schemaObject("The runtime's identity: name "+strconv.Quote(ServerName)+" and version "+strconv.Quote(ServerVersion)+
		" in every revision; clients check only that both are strings.", []string{"name", "version"}, map[string]*openrpc.Schema{
		"name": schemaString(""), "version": schemaString(""),
	})
	s.Properties["name"].Examples = []json.RawMessage{rawJSON(ServerName)}
	s.Properties["version"].Examples = []json.RawMessage{rawJSON(ServerVersion)}
	return s
}

// JSONSchema describes session/prompt's params (docs/wire.md §3.2):
// at least one content block (ErrEmptyPrompt), each an
// SdkPromptContentBlock.
func (SessionPromptParams) JSONSchema() *openrpc.Schema {
	return schemaObject("SessionPromptParams (docs/wire.md §3.2).", []string{"sessionId", "contentBlocks"}, map[string]*openrpc.Schema{
		"sessionId": schemaString("chosen by the client; an unknown id creates a session"),
		"contentBlocks": {Type: openrpc.Types{"array"}, MinItems: intp(1), Items: componentRef(compPromptContentBlock),
			Description: "the content of the user message: at least one block"},
	})
}

// JSONSchema describes session/prompt's result: a string messageId, what
// SessionPromptResult.Check requires.
func (SessionPromptResult) JSONSchema() *openrpc.Schema {
	return schemaObject("SessionPromptResult (docs/wire.md §3.2).", []string{"messageId"}, map[string]*openrpc.Schema{
		"messageId": schemaString("the id of the queued user message (the runtime's is a random UUID)"),
	})
}

// JSONSchema describes shutdown's result, {}.
func (ShutdownResult) JSONSchema() *openrpc.Schema {
	return schemaObject("{} (docs/wire.md §3.3); clients do not inspect it.", nil, nil)
}

// JSONSchema describes session.event's params (docs/wire.md §3.4).
func (SessionEventParams) JSONSchema() *openrpc.Schema {
	return schemaObject("SessionEventNotification (docs/wire.md §3.4).", []string{"sessionId", "event"}, map[string]*openrpc.Schema{
		"sessionId": schemaString("the session the event belongs to: any session of the runtime"),
		"event":     componentRef(compSessionEvent),
	})
}

// JSONSchema describes session.status's params (docs/wire.md §3.5), as
// SessionStatusParams.Check checks them.
func (SessionStatusParams) JSONSchema() *openrpc.Schema {
	return schemaObject("SessionStatusNotification (docs/wire.md §3.5).", []string{"sessionId", "status"}, map[string]*openrpc.Schema{
		"sessionId": schemaString("the session of the agent"),
		"status":    Status("").JSONSchema(),
	})
}

// JSONSchema describes subagent.started's params (docs/wire.md §3.6), as
// SubagentStartedParams.Check checks them.
func (SubagentStartedParams) JSONSchema() *openrpc.Schema {
	return schemaObject("SubagentStartedNotification (docs/wire.md §3.6).", []string{"parentSessionId", "childSessionId"},
		map[string]*openrpc.Schema{
			"parentSessionId": schemaNonEmpty("the session named as parent in the child's header"),
			"childSessionId":  schemaNonEmpty("the session created"),
		})
}

// JSONSchema describes subagent.finished's params (docs/wire.md §3.7),
// as SubagentFinishedParams.Check checks them.
func (SubagentFinishedParams) JSONSchema() *openrpc.Schema {
	reason := schemaString("SubagentStopReason: completed, aborted, error, max-tokens, refusal, or a value a plugin added")
	reason.Examples = []json.RawMessage{rawJSON(StopCompleted), rawJSON(StopAborted), rawJSON(StopError), rawJSON(StopMaxTokens), rawJSON(StopRefusal)}
	return schemaObject("SubagentFinishedNotification (docs/wire.md §3.7).",
		[]string{"provider", "agentId", "parentSessionId", "childSessionId", "status", "stopReason"}, map[string]*openrpc.Schema{
			"provider":        schemaString("the subagent provider, e.g. spawn"),
			"agentId":         schemaString("the child agent's id"),
			"parentSessionId": schemaString("the session of the agent that delegated"),
			"childSessionId":  schemaString("the child's session"),
			"status":          RunStatus("").JSONSchema(),
			"stopReason":      reason,
			"lastAssistantMessage": schemaArray(componentRef(compContentBlock),
				"the child's last non-empty assistant message content, else the text it accumulated; left out when there is neither"),
		})
}

// JSONSchema describes a Status: "running" or "idle".
func (Status) JSONSchema() *openrpc.Schema {
	return schemaStringEnum("the state the agent has just entered", string(StatusRunning), string(StatusIdle))
}

// JSONSchema describes a RunStatus: "ok" or "error".
func (RunStatus) JSONSchema() *openrpc.Schema {
	return schemaStringEnum("ok when stopReason is completed (or max-tokens, when the runtime counts it a success), else error",
		string(RunOK), string(RunError))
}

// JSONSchema refers to the component ContentBlock of OpenRPCDocument:
// the open union of the blocks of message content.
func (ContentBlock) JSONSchema() *openrpc.Schema { return componentRef(compContentBlock) }

// JSONSchema refers to the component ImageAttachmentRef of
// OpenRPCDocument.
func (ImageAttachmentRef) JSONSchema() *openrpc.Schema { return componentRef(compImageAttachmentRef) }

// JSONSchema refers to the component Dimensions of OpenRPCDocument.
func (Dimensions) JSONSchema() *openrpc.Schema { return componentRef(compDimensions) }

// JSONSchema refers to the component Message of OpenRPCDocument.
func (Message) JSONSchema() *openrpc.Schema { return componentRef(compMessage) }

// JSONSchema refers to the component MessageSource of OpenRPCDocument.
func (MessageSource) JSONSchema() *openrpc.Schema { return componentRef(compMessageSource) }

// JSONSchema refers to the component SessionEvent of OpenRPCDocument: the
// envelope and the union of the data of the described event types.
func (Event) JSONSchema() *openrpc.Schema { return componentRef(compSessionEvent) }

// JSONSchema refers to the component SurfaceOp of OpenRPCDocument.
func (SurfaceOp) JSONSchema() *openrpc.Schema { return componentRef(compSurfaceOp) }

// JSONSchema describes an OptionalInt as the integer it holds when
// present (a containing type leaves it out when absent).
func (OptionalInt) JSONSchema() *openrpc.Schema { return schemaInteger("") }

// JSONSchema describes an OptionalString as the string it holds when
// present (a containing type leaves it out when absent).
func (OptionalString) JSONSchema() *openrpc.Schema { return schemaString("") }
