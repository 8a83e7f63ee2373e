package sdkproto

import (
	"encoding/json"
	"fmt"
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

func (m *Message) fields() []field {
	return []field{
		reqString("id", &m.ID),
		reqString("role", &m.Role),
		blocksField("content", &m.Content, 0, func() bool { return true }),
		value("source", &m.Source, func() bool { return true }),
	}
}

// UnmarshalJSON decodes a message leniently, keeping its bytes.
func (m *Message) UnmarshalJSON(data []byte) error {
	*m = Message{}
	return objectOnly(decodeFields(&m.k, data, m.fields()))
}

// MarshalJSON encodes m: id, role, content, source.
func (m Message) MarshalJSON() ([]byte, error) { return encodeFields(m.k, m.fields()) }

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

func (s *MessageSource) fields() []field {
	return []field{
		reqString("kind", &s.Kind),
		optString("plugin", &s.Plugin),
		optString("form", &s.Form),
		optString("summary", &s.Summary),
		optString("provider", &s.Provider),
		optString("model", &s.Model),
		optString("callId", &s.CallID),
		optRaw("replayState", &s.Replay),
	}
}

// UnmarshalJSON decodes a source leniently, keeping its bytes.
func (s *MessageSource) UnmarshalJSON(data []byte) error {
	*s = MessageSource{}
	return objectOnly(decodeFields(&s.k, data, s.fields()))
}

// MarshalJSON encodes s, preserving decoded bytes.
func (s MessageSource) MarshalJSON() ([]byte, error) { return encodeFields(s.k, s.fields()) }

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
