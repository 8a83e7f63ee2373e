package sdkproto

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/linerpc/linerpc/internal/wire"
)

// Message is a conversation message (packages/llm/llm/src/message.ts):
// the data of user/message, the entries of agent/inbox/spliced, and the
// message of assistant/message and tool/result. It keeps its bytes like
// every type of this package.
type Message struct {
	ID      string
	Role    string // system, user or assistant
	Content []ContentBlock
	Source  MessageSource
	k       keep
}

var messageFields = []field[Message]{
	reqString("id", func(m *Message) *string { return &m.ID }),
	reqString("role", func(m *Message) *string { return &m.Role }),
	blocksField("content", func(m *Message) *[]ContentBlock { return &m.Content }, false, func(*Message) bool { return true }),
	value("source", func(m *Message) *MessageSource { return &m.Source }, func(*Message) bool { return true }),
}

// UnmarshalJSON decodes a message leniently, keeping its bytes.
func (m *Message) UnmarshalJSON(data []byte) error {
	*m = Message{}
	return objectOnly(decodeFields(&m.k, data, messageFields, m, 0))
}

// decodeValid is UnmarshalJSON for a member's value (see validDecoder).
func (m *Message) decodeValid(r json.RawMessage) error {
	if kindOf(r) != kindObject {
		return errNotObject
	}
	*m = Message{}
	decodeValidFields(&m.k, r, messageFields, m, 0)
	return nil
}

func (m *Message) kept() *keep { return &m.k }

// MarshalJSON encodes m: id, role, content, source.
func (m Message) MarshalJSON() ([]byte, error) { return encodeFields(messageFields, &m) }

// MessageSource says where a message came from. Kind is user, plugin,
// model or tool upstream, and plugins add more; the members of other kinds
// are kept in the bytes (see Member).
type MessageSource struct {
	Kind     string
	Plugin   string          // kind plugin
	Form     string          // kind plugin: instructions, catalog, snapshot, notice, relay or recall
	Summary  string          // kind plugin, form notice
	Provider string          // kind model
	Model    string          // kind model
	CallID   string          // kind tool
	Replay   json.RawMessage // kind model: replayState, opaque adapter data
	k        keep
}

var sourceFields = []field[MessageSource]{
	reqString("kind", func(s *MessageSource) *string { return &s.Kind }),
	optString("plugin", func(s *MessageSource) *string { return &s.Plugin }),
	optString("form", func(s *MessageSource) *string { return &s.Form }),
	optString("summary", func(s *MessageSource) *string { return &s.Summary }),
	optString("provider", func(s *MessageSource) *string { return &s.Provider }),
	optString("model", func(s *MessageSource) *string { return &s.Model }),
	optString("callId", func(s *MessageSource) *string { return &s.CallID }),
	optRaw("replayState", func(s *MessageSource) *json.RawMessage { return &s.Replay }),
}

// UnmarshalJSON decodes a source leniently, keeping its bytes.
func (s *MessageSource) UnmarshalJSON(data []byte) error {
	*s = MessageSource{}
	return objectOnly(decodeFields(&s.k, data, sourceFields, s, 0))
}

// decodeValid is UnmarshalJSON for a member's value (see validDecoder).
func (s *MessageSource) decodeValid(r json.RawMessage) error {
	if kindOf(r) != kindObject {
		return errNotObject
	}
	*s = MessageSource{}
	decodeValidFields(&s.k, r, sourceFields, s, 0)
	return nil
}

func (s *MessageSource) kept() *keep { return &s.k }

// MarshalJSON encodes s, preserving decoded bytes.
func (s MessageSource) MarshalJSON() ([]byte, error) { return encodeFields(sourceFields, &s) }

// Member returns the raw JSON of the member key as received.
func (s MessageSource) Member(key string) json.RawMessage { return memberOf(s.k, key) }

// TokenUsage counts tokens of one model call; the counts are disjoint
// (cached input is not part of InputTokens).
type TokenUsage struct {
	InputTokens      int64  `json:"inputTokens"`
	OutputTokens     int64  `json:"outputTokens"`
	CacheReadTokens  *int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens *int64 `json:"cacheWriteTokens,omitempty"`
	ReasoningTokens  *int64 `json:"reasoningTokens,omitempty"`
}

// LLMFailure describes a failed model call (LlmFailure upstream).
type LLMFailure struct {
	Message              string   `json:"message"`
	Code                 string   `json:"code"`
	Status               *int     `json:"status,omitempty"`
	ProviderRetryAfterMs *float64 `json:"providerRetryAfterMs,omitempty"`
	RequestID            string   `json:"requestId,omitempty"`
}

// FinishKind is FinishReason.Kind.
type FinishKind string

// The values of FinishKind.
const (
	FinishStop      FinishKind = "stop"
	FinishToolCalls FinishKind = "tool-calls"
	FinishMaxTokens FinishKind = "max-tokens"
	FinishAborted   FinishKind = "aborted" // with Failure
	FinishError     FinishKind = "error"   // with Failure
)

// FinishReason ends a model stream (the finish chunk).
type FinishReason struct {
	Kind    FinishKind  `json:"kind"`
	Failure *LLMFailure `json:"failure,omitempty"`
}

// TurnEndKind is TurnEndReason.Kind; the set is open (merge-extensible).
type TurnEndKind string

// The known values of TurnEndKind.
const (
	TurnCompleted   TurnEndKind = "completed"
	TurnMaxTokens   TurnEndKind = "max-tokens" // at least one step hit its output cap
	TurnError       TurnEndKind = "error"      // with Error
	TurnAborted     TurnEndKind = "aborted"    // with Reason
	TurnBlocked     TurnEndKind = "blocked"
	TurnInterrupted TurnEndKind = "interrupted" // a crash-orphaned turn closed by persistence
)

// TurnEndReason is why a turn ended. Note the member names: error (not
// failure, as in FinishReason) and, for aborted, a nested reason.
type TurnEndReason struct {
	Kind   TurnEndKind  `json:"kind"`
	Error  *LLMFailure  `json:"error,omitempty"`
	Reason *AbortReason `json:"reason,omitempty"`
}

// AbortReason is who aborted a turn: Kind user, parent, hook (with
// Reason), disposed or legacy.
type AbortReason struct {
	Kind   string `json:"kind"`
	Reason string `json:"reason,omitempty"`
}

// ChunkType is the type of a StreamChunk.
type ChunkType string

// The values of ChunkType. Unknown chunk types should be skipped.
const (
	ChunkBlockStart     ChunkType = "block-start"
	ChunkTextDelta      ChunkType = "text-delta"
	ChunkReasoningDelta ChunkType = "reasoning-delta"
	ChunkToolCallDelta  ChunkType = "tool-call-delta"
	ChunkBlockEnd       ChunkType = "block-end"
	ChunkUsage          ChunkType = "usage"
	ChunkFinish         ChunkType = "finish"
)

// StreamChunk is one piece of a model stream; Type selects the members.
type StreamChunk struct {
	Type           ChunkType       `json:"type"`
	Index          int64           `json:"index"`                    // block-start, deltas, block-end
	BlockType      string          `json:"blockType,omitempty"`      // block-start
	Text           string          `json:"text,omitempty"`           // text-delta, reasoning-delta
	ID             string          `json:"id,omitempty"`             // tool-call-delta
	Name           *string         `json:"name,omitempty"`           // tool-call-delta, optional
	ArgumentsDelta string          `json:"argumentsDelta,omitempty"` // tool-call-delta
	Block          *ContentBlock   `json:"block,omitempty"`          // block-end: the assembled block
	Usage          *TokenUsage     `json:"usage,omitempty"`          // usage
	Reason         *FinishReason   `json:"reason,omitempty"`         // finish
	ReplayState    json.RawMessage `json:"replayState,omitempty"`    // finish, opaque
}

// InboxSplicedData is the data of agent/inbox/spliced.
type InboxSplicedData struct {
	Target       string    `json:"target"` // next-turn or next-step
	Start        int64     `json:"start"`
	RemovedCount *int64    `json:"removedCount,omitempty"`
	Inserted     []Message `json:"inserted"`
	Outcome      string    `json:"outcome,omitempty"` // "canceled"
}

// TurnData is the data of turn/start.
type TurnData struct {
	Turn int64 `json:"turn"`
}

// StepData is the data of step/start and step/end.
type StepData struct {
	Turn int64 `json:"turn"`
	Step int64 `json:"step"`
}

// AssistantChunkData is the data of assistant/chunk.
type AssistantChunkData struct {
	Turn  int64       `json:"turn"`
	Step  int64       `json:"step"`
	Chunk StreamChunk `json:"chunk"`
}

// AssistantMessageData is the data of assistant/message.
type AssistantMessageData struct {
	Turn        int64       `json:"turn"`
	Step        int64       `json:"step"`
	Message     Message     `json:"message"`
	Usage       *TokenUsage `json:"usage,omitempty"`
	Interrupted bool        `json:"interrupted,omitempty"` // the delivered prefix of a cancelled stream
}

// ToolCallData is the data of tool/call; Arguments is raw JSON text.
type ToolCallData struct {
	Turn      int64  `json:"turn"`
	Step      int64  `json:"step"`
	CallID    string `json:"callId"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolResultData is the data of tool/result.
type ToolResultData struct {
	Turn    int64           `json:"turn"`
	Step    int64           `json:"step"`
	Message Message         `json:"message"` // one tool-result block, source kind tool
	Error   *ToolError      `json:"error,omitempty"`
	Meta    json.RawMessage `json:"meta,omitempty"` // opaque
}

// ToolError identifies a tool failure.
type ToolError struct {
	Name string `json:"name"`
	Code string `json:"code"`
}

// TurnEndData is the data of turn/end.
type TurnEndData struct {
	Turn   int64         `json:"turn"`
	Reason TurnEndReason `json:"reason"`
}

// RequestHeaderData is the data of request/header.
type RequestHeaderData struct {
	Header struct {
		Config struct {
			Provider        string          `json:"provider"`
			Model           string          `json:"model"`
			ReasoningEffort string          `json:"reasoningEffort,omitempty"`
			Temperature     *float64        `json:"temperature,omitempty"`
			MaxTokens       *int64          `json:"maxTokens,omitempty"`
			Stop            json.RawMessage `json:"stop,omitempty"`
		} `json:"config"`
		AdapterDefaults *struct {
			ReasoningEffort bool `json:"reasoningEffort,omitempty"`
			MaxTokens       bool `json:"maxTokens,omitempty"`
		} `json:"adapterDefaults,omitempty"`
		System string `json:"system,omitempty"`
		Tools  []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters,omitempty"` // absent stays absent
		} `json:"tools,omitempty"`
	} `json:"header"`
	Reason string `json:"reason"` // initial, resume or change
}

// RequestContextData is the data of request/context.
type RequestContextData struct {
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	ContextWindow *int64 `json:"contextWindow,omitempty"`
}

// TodoWriteData is the data of todo/write.
type TodoWriteData struct {
	Todos []struct {
		Content string `json:"content"`
		Status  string `json:"status"` // pending, in_progress or completed
	} `json:"todos"`
}

// SessionTitleData is the data of session/title.
type SessionTitleData struct {
	Title       string  `json:"title"`
	MessageSeqs []int64 `json:"messageSeqs"`
	Source      struct {
		Kind string `json:"kind"`
	} `json:"source"`
}

// SubagentDescriptorData is the data of subagent/descriptor; further
// members stay in Event.Data.
type SubagentDescriptorData struct {
	Version  int64  `json:"version"`
	Mode     string `json:"mode"` // one-shot or continuable
	Provider string `json:"provider"`
	Label    string `json:"label,omitempty"`
}

// LLMRetryData is the data of llm/retry.
type LLMRetryData struct {
	RetryID    string     `json:"retryId"`
	Turn       int64      `json:"turn"`
	Step       int64      `json:"step"`
	Provider   string     `json:"provider"`
	Mode       string     `json:"mode"` // normal or always
	PolicyKey  string     `json:"policyKey"`
	Retry      int64      `json:"retry"`
	MaxRetries *int64     `json:"maxRetries,omitempty"`
	DelayMs    float64    `json:"delayMs"`
	Failure    LLMFailure `json:"failure"`
}

// LLMRetryStartedData is the data of llm/retry-started.
type LLMRetryStartedData struct {
	RetryID string `json:"retryId"`
	Turn    int64  `json:"turn"`
	Step    int64  `json:"step"`
	Retry   int64  `json:"retry"`
}

func typeMismatch(got, want EventType) error {
	return fmt.Errorf("%w: %q, want %q", ErrEventType, got, want)
}

// decodeData decodes e.Data into a T when e has type want. Accessor
// structs use encoding/json, which matches member names case-insensitively;
// messages and content blocks inside them match exactly.
func decodeData[T any](e Event, want EventType) (T, error) {
	var v T
	if e.Type != want {
		return v, typeMismatch(e.Type, want)
	}
	if e.Data == nil {
		return v, fmt.Errorf("sdkproto: %s event has no data", want)
	}
	if err := json.Unmarshal(e.Data, &v); err != nil {
		return v, fmt.Errorf("sdkproto: %s data: %w", want, err)
	}
	return v, nil
}

// InboxSpliced decodes the data of an agent/inbox/spliced event.
func (e Event) InboxSpliced() (InboxSplicedData, error) {
	return decodeData[InboxSplicedData](e, EventAgentInboxSpliced)
}

// UserMessage decodes the data of a user/message event (the message itself).
func (e Event) UserMessage() (Message, error) { return decodeData[Message](e, EventUserMessage) }

// AssistantChunk decodes the data of an assistant/chunk event.
func (e Event) AssistantChunk() (AssistantChunkData, error) {
	return decodeData[AssistantChunkData](e, EventAssistantChunk)
}

// AssistantMessage decodes the data of an assistant/message event.
func (e Event) AssistantMessage() (AssistantMessageData, error) {
	return decodeData[AssistantMessageData](e, EventAssistantMessage)
}

// ToolCall decodes the data of a tool/call event.
func (e Event) ToolCall() (ToolCallData, error) { return decodeData[ToolCallData](e, EventToolCall) }

// ToolResult decodes the data of a tool/result event.
func (e Event) ToolResult() (ToolResultData, error) {
	return decodeData[ToolResultData](e, EventToolResult)
}

// TurnStart decodes the data of a turn/start event.
func (e Event) TurnStart() (TurnData, error) { return decodeData[TurnData](e, EventTurnStart) }

// TurnEnd decodes the data of a turn/end event.
func (e Event) TurnEnd() (TurnEndData, error) { return decodeData[TurnEndData](e, EventTurnEnd) }

// StepStart decodes the data of a step/start event.
func (e Event) StepStart() (StepData, error) { return decodeData[StepData](e, EventStepStart) }

// StepEnd decodes the data of a step/end event.
func (e Event) StepEnd() (StepData, error) { return decodeData[StepData](e, EventStepEnd) }

// RequestHeader decodes the data of a request/header event.
func (e Event) RequestHeader() (RequestHeaderData, error) {
	return decodeData[RequestHeaderData](e, EventRequestHeader)
}

// RequestContext decodes the data of a request/context event.
func (e Event) RequestContext() (RequestContextData, error) {
	return decodeData[RequestContextData](e, EventRequestContext)
}

// TodoWrite decodes the data of a todo/write event.
func (e Event) TodoWrite() (TodoWriteData, error) {
	return decodeData[TodoWriteData](e, EventTodoWrite)
}

// SessionTitle decodes the data of a session/title event.
func (e Event) SessionTitle() (SessionTitleData, error) {
	return decodeData[SessionTitleData](e, EventSessionTitle)
}

// SubagentDescriptor decodes the data of a subagent/descriptor event.
func (e Event) SubagentDescriptor() (SubagentDescriptorData, error) {
	return decodeData[SubagentDescriptorData](e, EventSubagentDescriptor)
}

// LLMRetry decodes the data of an llm/retry event.
func (e Event) LLMRetry() (LLMRetryData, error) { return decodeData[LLMRetryData](e, EventLLMRetry) }

// LLMRetryStarted decodes the data of an llm/retry-started event.
func (e Event) LLMRetryStarted() (LLMRetryStartedData, error) {
	return decodeData[LLMRetryStartedData](e, EventLLMRetryStarted)
}

// The checks of event data (Event.Check) want to know whether the data
// decodes, not what it holds: dataDecodes tells that from the JSON for the
// accessor structs, following encoding/json's rules, with a walk of the
// data where decoding builds every value (for request/header, tens of
// kilobytes of prompt and tool schemas, several times the cost). Where the
// rules below do not cover a type, or the data would fail, it answers
// false and the check decodes, for encoding/json's verdict and message.

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
)

// dataDecodes reports that json.Unmarshal(e.Data, new(T)) succeeds, for t
// the type T; false means that it fails, or that dataDecodes cannot tell.
func dataDecodes(t reflect.Type, e Event) bool {
	if len(bytes.TrimSpace(e.Data)) == 0 {
		return false // no value: encoding/json fails, and says why
	}
	// Data as decoded is a member of validated bytes: comparing costs less
	// than validating again.
	if !bytes.Equal(e.Data, e.Member("data")) && validate(e.Data, maxDepth) != nil {
		return false
	}
	return decodesAs(t, bytes.TrimSpace(e.Data))
}

// decodesAs reports that encoding/json decodes v, a valid JSON value,
// into a value of type t without an error (false: with one, or unknown).
func decodesAs(t reflect.Type, v []byte) bool {
	null := v[0] == 'n'
	switch {
	case t == rawMessageType:
		return true
	case t.Kind() == reflect.Pointer:
		// null sets the pointer to nil; anything else is decoded into
		// the value it points to.
		return null || decodesAs(t.Elem(), v)
	case reflect.PointerTo(t).Implements(jsonUnmarshalerType):
		// The type decodes itself, null included.
		x := reflect.New(t).Interface()
		if d, ok := x.(validChecker); ok {
			return d.decodesValid(v)
		}
		return decodeMember(x.(json.Unmarshaler), v) == nil
	case reflect.PointerTo(t).Implements(textUnmarshalerType):
		return false // not covered
	case null:
		return true // null leaves any other value as it is
	}
	switch c := v[0]; t.Kind() {
	case reflect.String:
		return c == '"'
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err := strconv.ParseInt(string(v), 10, t.Bits())
		return err == nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, err := strconv.ParseUint(string(v), 10, t.Bits())
		return err == nil
	case reflect.Float32, reflect.Float64:
		_, err := strconv.ParseFloat(string(v), t.Bits())
		return err == nil && c != '"' && c != '[' && c != '{' && c != 't' && c != 'f'
	case reflect.Bool:
		return c == 't' || c == 'f'
	case reflect.Interface:
		return t.NumMethod() == 0
	case reflect.Slice:
		if c != '[' || t.Elem().Kind() == reflect.Uint8 {
			return false // []byte is base64: not covered
		}
		ok := true
		wire.Elements(v, func(e []byte) bool {
			ok = decodesAs(t.Elem(), e)
			return ok
		})
		return ok
	case reflect.Struct:
		fields, covered := structFieldsOf(t)
		if c != '{' || !covered {
			return false
		}
		ok := true
		wire.Members(v, func(key, value []byte) bool {
			f, known := fields.find(key)
			if !known {
				ok = false // a key that might match a field by Unicode folding
			} else if f != nil {
				ok = decodesAs(f.Type, value)
			}
			return ok
		})
		return ok
	}
	return false // maps, arrays and the rest: not covered
}

// validChecker is a type of this package that tells whether it decodes a
// value taken from a validated object without decoding it.
type validChecker interface {
	decodesValid(r json.RawMessage) bool
}

// decodesValid reports that decodeValid succeeds: on any object.
func (*Message) decodesValid(r json.RawMessage) bool { return kindOf(r) == kindObject }

// decodesValid reports that decodeValid succeeds: on any object.
func (*MessageSource) decodesValid(r json.RawMessage) bool { return kindOf(r) == kindObject }

// decodesValid reports that decodeValid succeeds: on any value, since a
// block that is not an object is kept as it is.
func (*ContentBlock) decodesValid(json.RawMessage) bool { return true }

// structFields are the members a struct decodes, as encoding/json names
// them: exact, and upper-cased for the case-insensitive match it falls
// back on.
type structFields struct {
	exact, folded map[string]*reflect.StructField
}

// find returns the field key decodes into (nil for none); known is false
// when encoding/json's Unicode folding could match it to a field that the
// ASCII comparison here does not.
func (s structFields) find(key []byte) (f *reflect.StructField, known bool) {
	if f := s.exact[string(key)]; f != nil {
		return f, true
	}
	var buf [32]byte
	folded := buf[:0]
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return nil, false
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		folded = append(folded, c)
	}
	return s.folded[string(folded)], true
}

var structFieldCache sync.Map // reflect.Type -> structFieldsEntry

type structFieldsEntry struct {
	fields  structFields
	covered bool
}

// structFieldsOf returns the fields of t and whether decodesAs covers it:
// exported fields named by their json tag or Go name, none embedded, none
// with the string option, no two with the same name.
func structFieldsOf(t reflect.Type) (structFields, bool) {
	if e, ok := structFieldCache.Load(t); ok {
		return e.(structFieldsEntry).fields, e.(structFieldsEntry).covered
	}
	s := structFields{exact: map[string]*reflect.StructField{}, folded: map[string]*reflect.StructField{}}
	covered := true
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			covered = false
			break
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		upper := strings.ToUpper(name) // encoding/json's folding, for ASCII
		if strings.Contains(","+opts+",", ",string,") || !plainName(name) || s.exact[name] != nil || s.folded[upper] != nil {
			covered = false
			break
		}
		s.exact[name], s.folded[upper] = &f, &f
	}
	structFieldCache.Store(t, structFieldsEntry{s, covered})
	return s, covered
}

// plainName reports a name of ASCII letters, digits, '_' and '-': a name
// encoding/json takes as it is, and folds as ASCII.
func plainName(name string) bool {
	for _, c := range []byte(name) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
