package sdkproto

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/linerpc/linerpc/internal/wire"
)

// EventType is the type of a session-log event; it discriminates Data.
// The set is open: plugins add types, and unknown ones must be passed
// through.
type EventType string

// The 48 known event types (packages/core/session/src/known-event-types.ts).
const (
	EventAgentInboxSpliced           EventType = "agent/inbox/spliced" // prompt receipt / inbox claim
	EventTurnStart                   EventType = "turn/start"
	EventStepStart                   EventType = "step/start"
	EventStepEnd                     EventType = "step/end"
	EventUserMessage                 EventType = "user/message" // surface event
	EventAssistantChunk              EventType = "assistant/chunk"
	EventAssistantMessage            EventType = "assistant/message" // surface event
	EventToolCall                    EventType = "tool/call"
	EventToolResult                  EventType = "tool/result" // surface event
	EventTurnEnd                     EventType = "turn/end"
	EventRequestHeader               EventType = "request/header"
	EventRequestContext              EventType = "request/context"
	EventTodoWrite                   EventType = "todo/write"
	EventSessionEndSeed              EventType = "session/end-seed"
	EventSessionTitle                EventType = "session/title"
	EventSubagentDescriptor          EventType = "subagent/descriptor"
	EventLLMRetry                    EventType = "llm/retry"
	EventLLMRetryStarted             EventType = "llm/retry-started"
	EventCompactionStart             EventType = "compaction/start"
	EventCompactionSummary           EventType = "compaction/summary"
	EventCompactionPrune             EventType = "compaction/prune"
	EventCompactionEnd               EventType = "compaction/end"
	EventApprovalAsked               EventType = "approval/asked"
	EventApprovalDecided             EventType = "approval/decided"
	EventApprovalPolicy              EventType = "approval/policy"
	EventPermissionPreset            EventType = "permission/preset"
	EventSandboxMode                 EventType = "sandbox/mode"
	EventCommandRun                  EventType = "command/run"
	EventCommandDone                 EventType = "command/done"
	EventToolCodeDispatch            EventType = "tool/code-dispatch"
	EventToolCodeDispatchStart       EventType = "tool/code-dispatch-start"
	EventToolWorkflowRunStart        EventType = "tool-workflow/run-start"
	EventToolWorkflowRunEnd          EventType = "tool-workflow/run-end"
	EventToolWorkflowAgentStart      EventType = "tool-workflow/agent-start"
	EventToolWorkflowAgentEnd        EventType = "tool-workflow/agent-end"
	EventHookInvoked                 EventType = "hook/invoked"
	EventHookResult                  EventType = "hook/result"
	EventGoalChange                  EventType = "goal/change"
	EventPlanMode                    EventType = "plan/mode"
	EventScheduleChange              EventType = "schedule/change"
	EventFeedbackRecord              EventType = "feedback/record"
	EventAgentPresetSelected         EventType = "agent-preset/selected"
	EventSessionTitleLLMRequest      EventType = "session/title-llm-request"
	EventWebDeepseekSearchLLMRequest EventType = "web/deepseek-search-llm-request"
	EventTeamMember                  EventType = "team/member"
	EventTeamTask                    EventType = "team/task"
	EventTeamMessageQueued           EventType = "team/message/queued"
	EventTeamMessageDelivered        EventType = "team/message/delivered"
)

var knownEventTypes = []EventType{
	EventAgentInboxSpliced, EventTurnStart, EventStepStart, EventStepEnd, EventUserMessage,
	EventAssistantChunk, EventAssistantMessage, EventToolCall, EventToolResult, EventTurnEnd,
	EventRequestHeader, EventRequestContext, EventTodoWrite, EventSessionEndSeed, EventSessionTitle,
	EventSubagentDescriptor, EventLLMRetry, EventLLMRetryStarted, EventCompactionStart,
	EventCompactionSummary, EventCompactionPrune, EventCompactionEnd, EventApprovalAsked,
	EventApprovalDecided, EventApprovalPolicy, EventPermissionPreset, EventSandboxMode,
	EventCommandRun, EventCommandDone, EventToolCodeDispatch, EventToolCodeDispatchStart,
	EventToolWorkflowRunStart, EventToolWorkflowRunEnd, EventToolWorkflowAgentStart,
	EventToolWorkflowAgentEnd, EventHookInvoked, EventHookResult, EventGoalChange, EventPlanMode,
	EventScheduleChange, EventFeedbackRecord, EventAgentPresetSelected, EventSessionTitleLLMRequest,
	EventWebDeepseekSearchLLMRequest, EventTeamMember, EventTeamTask, EventTeamMessageQueued,
	EventTeamMessageDelivered,
}

// KnownEventTypes returns a new slice of the 48 known event types, in the
// order docs/wire.md §4.5 lists them.
func KnownEventTypes() []EventType { return slices.Clone(knownEventTypes) }

// IsKnown reports whether t is one of the 48 known event types.
func (t EventType) IsKnown() bool { return slices.Contains(knownEventTypes, t) }

// Event is the SessionEvent envelope, exactly as the session log persists
// it. Decoding requires an object with a string type (the test upstream
// run() applies); every other member is decoded leniently (a mistyped seq
// leaves Seq zero, as upstream clients do not check it) and, like every
// type of this package, the envelope keeps its bytes: encoding an
// unmodified Event returns them, unknown members included.
type Event struct {
	Type EventType
	Seq  int64 // contiguous per session, from 0
	Time int64 // Unix epoch milliseconds
	// Data is the type-specific payload, raw; the typed accessors
	// (AssistantMessage, TurnEnd, ...) decode it. nil when absent.
	Data json.RawMessage
	// Ignorable marks a purely informational event; written only when true.
	Ignorable bool
	// SourceEventSeqs lists the seqs a surface event was built from; nil
	// when absent (a non-nil empty slice encodes as []).
	SourceEventSeqs []int64
	// SurfaceOp is set on surface events (user/message, assistant/message,
	// tool/result); nil when absent.
	SurfaceOp *SurfaceOp
	k         keep
}

var eventFields = []field[Event]{
	reqString("type", func(e *Event) *string { return (*string)(&e.Type) }),
	reqInt("seq", func(e *Event) *int64 { return &e.Seq }),
	reqInt("time", func(e *Event) *int64 { return &e.Time }),
	optRaw("data", func(e *Event) *json.RawMessage { return &e.Data }),
	optBool("ignorable", func(e *Event) *bool { return &e.Ignorable }),
	{key: "sourceEventSeqs", dec: func(e *Event, r json.RawMessage, _ int) held {
		s, ok := int64s(r)
		if !ok {
			return heldBefore
		}
		e.SourceEventSeqs = s
		return heldOther
	}, enc: func(e *Event) (json.RawMessage, bool) {
		return present(e.SourceEventSeqs != nil, func() json.RawMessage { return marshal(e.SourceEventSeqs) })
	}},
	optValue("surfaceOp", func(e *Event) **SurfaceOp { return &e.SurfaceOp }),
}

// int64s decodes r, a value taken from a validated object, as
// encoding/json decodes an array into a []int64 (a null element is 0; an
// element that is not an integer within int64 fails it); ok is false when
// r is not such an array. An empty array gives a non-nil empty slice.
func int64s(r json.RawMessage) (s []int64, ok bool) {
	if kindOf(r) != kindArray {
		return nil, false
	}
	if s, plain := plainInt64s(bytes.TrimSpace(r)); plain {
		return s, s != nil
	}
	n := 0 // counted first, so that the slice is allocated once, at its length
	wire.Elements(r, func([]byte) bool { n++; return true })
	s, ok = make([]int64, 0, n), true
	wire.Elements(r, func(e []byte) bool {
		var n int64
		switch kindOf(e) {
		case kindNull:
		case kindNumber:
			var err error
			n, err = strconv.ParseInt(string(e), 10, 64)
			ok = err == nil
		default:
			ok = false
		}
		s = append(s, n)
		return ok
	})
	return s, ok
}

// plainInt64s is int64s for the array r (valid, trimmed) when it holds
// only integers written plainly, as sourceEventSeqs always does: counted by
// their commas and parsed in one pass. plain is false for any other array
// (strings, nulls, fractions), which int64s reads element by element; s is
// nil when an integer does not fit.
func plainInt64s(r []byte) (s []int64, plain bool) {
	body := r[1 : len(r)-1]
	commas := 0
	for _, c := range body {
		switch {
		case '0' <= c && c <= '9', c == '-', c == ' ', c == '\t', c == '\n', c == '\r':
		case c == ',':
			commas++
		default:
			return nil, false
		}
	}
	s = make([]int64, 0, commas+1)
	for len(body) > 0 {
		field := body
		if i := bytes.IndexByte(body, ','); i >= 0 {
			field, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		if field = bytes.TrimSpace(field); len(field) == 0 {
			break // the empty array
		}
		n, err := strconv.ParseInt(string(field), 10, 64)
		if err != nil {
			return nil, true
		}
		s = append(s, n)
	}
	return s, true
}

// dataAt returns the value at the end of keys in e.Data, as dig does. The
// data as decoded, a member of validated bytes, is not validated again.
func (e Event) dataAt(keys ...string) json.RawMessage {
	if !bytes.Equal(e.Data, e.Member("data")) {
		return dig(e.Data, keys...)
	}
	v := e.Data
	if kindOf(v) != kindObject {
		return nil
	}
	for _, k := range keys {
		if v = get(v, k); v == nil {
			return nil
		}
	}
	return v
}

// UnmarshalJSON decodes an envelope; it fails with ErrNoEnvelope when data
// is not an object with a string type.
func (e *Event) UnmarshalJSON(data []byte) error {
	raw := append(json.RawMessage(nil), bytes.TrimSpace(data)...)
	ms, ok, err := parseObject(raw)
	if err != nil {
		return err
	}
	if !ok || kindOf(lookup(raw, ms, "type")) != kindString {
		return ErrNoEnvelope
	}
	*e = Event{}
	decodeMembers(&e.k, raw, ms, eventFields, e, 0)
	return nil
}

// decodeValid is UnmarshalJSON for a member's value (see validDecoder).
func (e *Event) decodeValid(r json.RawMessage) error {
	if kindOf(r) != kindObject {
		return ErrNoEnvelope
	}
	_, err := e.decodeAt(r)
	return err
}

// decodeAt is decodeValid for the object at the start of obj, which goes
// on past it (see prefixDecoder).
func (e *Event) decodeAt(obj []byte) (n int, err error) {
	before := *e
	*e = Event{}
	n = decodeWalk(&e.k, obj, eventFields, e, 0)
	if kindOf(lookup(e.k.raw, e.k.ms, "type")) != kindString {
		*e = before
		return n, ErrNoEnvelope
	}
	return n, nil
}

func (e *Event) kept() *keep { return &e.k }

// MarshalJSON encodes e: type, seq, time, data, then ignorable,
// sourceEventSeqs and surfaceOp when set; a decoded Event keeps its bytes.
func (e Event) MarshalJSON() ([]byte, error) { return encodeFields(eventFields, &e) }

// Member returns the raw JSON of the envelope member key as received.
func (e Event) Member(key string) json.RawMessage { return memberOf(e.k, key) }

// IsSurface reports whether the event carries a surfaceOp.
func (e Event) IsSurface() bool { return e.SurfaceOp != nil || memberOf(e.k, "surfaceOp") != nil }

// SurfaceOp says how a surface event changes the visible transcript:
// "append", or {"op":"replace","start":S,"end":E} (compaction).
type SurfaceOp struct {
	Op         string // SurfaceAppend or SurfaceReplace (or an unknown op, kept)
	Start, End int64  // the replaced seq range, for replace
	strOp      string // the op as decoded from the string form
	k          keep
}

// The operations of SurfaceOp.
const (
	SurfaceAppend  = "append"
	SurfaceReplace = "replace"
)

// AppendOp returns the "append" surface operation.
func AppendOp() *SurfaceOp { return &SurfaceOp{Op: SurfaceAppend} }

// ReplaceOp returns the replace operation for the seq range start..end.
func ReplaceOp(start, end int64) *SurfaceOp {
	return &SurfaceOp{Op: SurfaceReplace, Start: start, End: end}
}

var surfaceOpFields = []field[SurfaceOp]{
	reqString("op", func(s *SurfaceOp) *string { return &s.Op }),
	reqInt("start", func(s *SurfaceOp) *int64 { return &s.Start }),
	reqInt("end", func(s *SurfaceOp) *int64 { return &s.End }),
}

// decodeValid is UnmarshalJSON for a member's value (see validDecoder).
func (s *SurfaceOp) decodeValid(r json.RawMessage) error {
	switch kindOf(r) {
	case kindString:
		*s = SurfaceOp{k: keep{raw: r}}
		s.Op, _ = memberString(r)
		s.strOp = s.Op
		return nil
	case kindObject:
		*s = SurfaceOp{}
		decodeValidFields(&s.k, r, surfaceOpFields, s, 0)
		return nil
	}
	return errNotObject
}

// UnmarshalJSON accepts the string form (Op = the string) and the object form.
func (s *SurfaceOp) UnmarshalJSON(data []byte) error {
	*s = SurfaceOp{}
	if op, ok := asString(data); ok {
		s.Op, s.strOp = op, op
		s.k = keep{raw: append(json.RawMessage(nil), data...)}
		return nil
	}
	return objectOnly(decodeFields(&s.k, data, surfaceOpFields, s, 0))
}

func (s *SurfaceOp) kept() *keep { return &s.k }

// MarshalJSON writes "append" as a string and other ops as objects; a
// decoded value keeps its bytes (and its form while Op is unchanged).
func (s SurfaceOp) MarshalJSON() ([]byte, error) {
	if kindOf(s.k.raw) == kindString {
		if s.Op == s.strOp {
			return s.k.raw, nil
		}
		s.k = keep{}
	}
	if s.k.raw == nil && s.Op == SurfaceAppend {
		return marshal(s.Op), nil
	}
	return encodeFields(surfaceOpFields, &s)
}

// CheckEnvelope applies the TypeScript run() test to a root-session event:
// the event member must be an object with a string type. It returns a
// *ProtocolError "session.event carried no event envelope: <json>" (the
// JSON is the member's compact text, "undefined" when it is missing).
func (p SessionEventParams) CheckEnvelope() error {
	raw := p.Member("event")
	if p.k.raw == nil && raw == nil && p.Event.Type != "" {
		return nil // built in Go
	}
	ms := p.Event.k.ms
	if !sameBytes(raw, p.Event.k.raw) {
		ms = nil
		if kindOf(raw) == kindObject {
			ms = splitObject(raw)
		}
	}
	if kindOf(lookup(raw, ms, "type")) == kindString {
		return nil
	}
	text := "undefined"
	if raw != nil {
		text = string(compact(raw))
	}
	return &ProtocolError{"session.event carried no event envelope: " + text}
}

// CheckRunEvent is everything run() checks on a root-session event after
// the receipt: CheckEnvelope, then, for assistant/message,
// Event.CheckAssistantContent.
func (p SessionEventParams) CheckRunEvent() error {
	if err := p.CheckEnvelope(); err != nil {
		return err
	}
	if p.Event.Type == EventAssistantMessage {
		return p.Event.CheckAssistantContent()
	}
	return nil
}

// CheckAssistantContent applies run()'s test to an assistant/message
// event: data.message.content must be an array of objects each with a
// string type. It returns a *ProtocolError
// "assistant/message event carried malformed content: <event json>".
// Events of other types pass.
func (e Event) CheckAssistantContent() error {
	if e.Type != EventAssistantMessage {
		return nil
	}
	content := e.dataAt("message", "content")
	ok := kindOf(content) == kindArray
	if ok {
		wire.Elements(content, func(b []byte) bool {
			ok = kindOf(get(b, "type")) == kindString // nil when b is no object
			return ok
		})
	}
	if ok {
		return nil
	}
	text, _ := e.MarshalJSON()
	return &ProtocolError{"assistant/message event carried malformed content: " + string(compact(text))}
}

// ReceiptFor reports whether e is the durable receipt of the prompt whose
// session/prompt reply was messageID: an agent/inbox/spliced event whose
// data.inserted array holds an object with that id. Malformed candidates
// are simply not receipts.
func (e Event) ReceiptFor(messageID string) bool {
	return slices.Contains(e.ReceiptIDs(), messageID)
}

// ReceiptIDs returns the string ids of the messages an agent/inbox/spliced
// event inserts (empty for a claim, a cancel or any other event).
func (e Event) ReceiptIDs() []string {
	if e.Type != EventAgentInboxSpliced {
		return nil
	}
	var ids []string
	for _, m := range elements(e.dataAt("inserted")) {
		if id, ok := memberString(get(m, "id")); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// TurnEndReasonKind returns data.reason.kind of a turn/end event, the
// Python RunResult.finish_reason. It fails with a *ProtocolError
// "turn/end event requires a string data.reason.kind" when that is not a
// string, and with ErrEventType for other events.
func (e Event) TurnEndReasonKind() (TurnEndKind, error) {
	if e.Type != EventTurnEnd {
		return "", typeMismatch(e.Type, EventTurnEnd)
	}
	kind, ok := memberString(e.dataAt("reason", "kind"))
	if !ok {
		return "", &ProtocolError{"turn/end event requires a string data.reason.kind"}
	}
	return TurnEndKind(kind), nil
}

// ChunkType returns data.chunk.type of an assistant/chunk event; ok is
// false for other events or when it is not a string.
func (e Event) ChunkType() (t ChunkType, ok bool) {
	if e.Type != EventAssistantChunk {
		return "", false
	}
	s, ok := memberString(e.dataAt("chunk", "type"))
	return ChunkType(s), ok
}
