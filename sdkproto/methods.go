package sdkproto

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/linerpc/linerpc/rpc"
)

// ServerName and ServerVersion are the serverInfo the runtime reports in
// every revision (ServerVersion is a wire constant, not a package version).
const (
	ServerName    = "deepseek-harness-sdk-runtime"
	ServerVersion = "0.0.1"
)

// The request methods (client to server). Each carries its description
// (rpc.Doc) for OpenRPCDocument.
var (
	// Initialize sets the route (cwd, provider, model, caps) for sessions
	// created afterwards; it is the runtime's readiness barrier.
	Initialize = rpc.NewMethod[InitializeParams, InitializeResult]("initialize").Describe(initializeDoc)
	// SessionPrompt queues a user message on a session, creating the
	// session on first use, and returns the queued message's id.
	SessionPrompt = rpc.NewMethod[SessionPromptParams, SessionPromptResult]("session/prompt").Describe(sessionPromptDoc)
	// Shutdown stops the runtime. It takes no params: calls omit the params
	// member, as the Python client and the keyless smoke test do (the
	// TypeScript client sends {}; the runtime ignores params either way).
	Shutdown = rpc.NewMethod[rpc.NoParams, ShutdownResult]("shutdown").Describe(shutdownDoc)
)

// The notifications (server to client), described as the requests are.
var (
	// SessionEvent carries one session-log event of any session in the runtime.
	SessionEvent = rpc.NewNotification[SessionEventParams]("session.event").Describe(sessionEventDoc)
	// SessionStatus reports an agent entering running or idle.
	SessionStatus = rpc.NewNotification[SessionStatusParams]("session.status").Describe(sessionStatusDoc)
	// SubagentStarted reports a session created with a parent session.
	SubagentStarted = rpc.NewNotification[SubagentStartedParams]("subagent.started").Describe(subagentStartedDoc)
	// SubagentFinished reports the end of a local subagent run.
	SubagentFinished = rpc.NewNotification[SubagentFinishedParams]("subagent.finished").Describe(subagentFinishedDoc)
)

var errNotObject = errors.New("sdkproto: value is not a JSON object")

// All payload types below decode leniently and losslessly: a member of the
// wrong JSON type leaves its field at the zero value (it stays available
// through Member and is re-encoded untouched), unknown members are kept,
// and a decoded value that is encoded again without changes gives back its
// original bytes. Params that are not an object decode as an empty object,
// as the upstream transport normalises them. This lets a server answer
// malformed params with upstream's messages (see Validate) rather than with
// a decoding failure.

// InitializeParams are the params of initialize.
type InitializeParams struct {
	Cwd      string // workspace directory; the runtime resolves it like path.resolve
	Provider string // provider route, e.g. deepseek-official
	Model    string // model id for that route, e.g. deepseek-v4-flash
	// ReasoningEffort is the adapter-owned effort id (newer revisions);
	// absent keeps the model's default. Set it with Effort.
	ReasoningEffort OptionalString
	// MaxTokens is the output-token cap; absent lets the provider default
	// apply. Set it with Tokens.
	MaxTokens OptionalInt
	k         keep
}

var initializeFields = []field[InitializeParams]{
	reqString("cwd", func(p *InitializeParams) *string { return &p.Cwd }),
	reqString("provider", func(p *InitializeParams) *string { return &p.Provider }),
	reqString("model", func(p *InitializeParams) *string { return &p.Model }),
	value("reasoningEffort", func(p *InitializeParams) *OptionalString { return &p.ReasoningEffort },
		func(p *InitializeParams) bool { return p.ReasoningEffort.IsPresent() }),
	value("maxTokens", func(p *InitializeParams) *OptionalInt { return &p.MaxTokens },
		func(p *InitializeParams) bool { return p.MaxTokens.IsPresent() }),
}

// UnmarshalJSON decodes initialize params leniently (see the note above).
func (p *InitializeParams) UnmarshalJSON(data []byte) error {
	*p = InitializeParams{}
	return paramsObject(decodeFields(&p.k, data, initializeFields, p, 0))
}

func (p *InitializeParams) kept() *keep { return &p.k }

// MarshalJSON encodes p: cwd, provider, model, then reasoningEffort and
// maxTokens when present.
func (p InitializeParams) MarshalJSON() ([]byte, error) {
	return encodeFields(initializeFields, &p)
}

// Member returns the raw JSON of the member key as received (nil when
// absent or when p was built in Go), so that a server can render a
// mistyped value in its messages (see Interpolate).
func (p InitializeParams) Member(key string) json.RawMessage { return memberOf(p.k, key) }

// OptionalInt is an optional JSON number that keeps its raw text, so that
// absent, null, 1.0 and 9007199254740992 stay distinguishable. The zero
// value is absent.
type OptionalInt struct{ raw json.RawMessage }

// Tokens returns the OptionalInt holding n.
func Tokens(n int64) OptionalInt { return OptionalInt{marshal(n)} }

// IsPresent reports whether the member was present (null counts as present).
func (o OptionalInt) IsPresent() bool { return o.raw != nil }

// Raw returns the member's raw JSON, nil when absent.
func (o OptionalInt) Raw() json.RawMessage { return o.raw }

// Int64 returns the value when it is a JSON number with an integral value
// of magnitude at most 2^53-1 (JavaScript's Number.isSafeInteger), and
// false otherwise (absent, null, a fraction, too large, or not a number).
func (o OptionalInt) Int64() (int64, bool) { return safeInteger(o.raw) }

// MarshalJSON returns the raw value (null when absent; containing types
// omit an absent member).
func (o OptionalInt) MarshalJSON() ([]byte, error) {
	if o.raw == nil {
		return []byte("null"), nil
	}
	return slices.Clone(compact(o.raw)), nil
}

// UnmarshalJSON keeps any JSON value as is.
func (o *OptionalInt) UnmarshalJSON(data []byte) error {
	if validate(data, maxDepth) != nil {
		return errors.New("sdkproto: invalid JSON")
	}
	o.raw = append(json.RawMessage(nil), data...)
	return nil
}

// OptionalString is an optional JSON string that keeps its raw value, so
// that absent, null, "" and a non-string stay distinguishable. The zero
// value is absent.
type OptionalString struct{ raw json.RawMessage }

// Effort returns the OptionalString holding s.
func Effort(s string) OptionalString { return OptionalString{marshal(s)} }

// IsPresent reports whether the member was present (null counts as present).
func (o OptionalString) IsPresent() bool { return o.raw != nil }

// Raw returns the member's raw JSON, nil when absent.
func (o OptionalString) Raw() json.RawMessage { return o.raw }

// String returns the value when it is a JSON string.
func (o OptionalString) String() (string, bool) { return asString(o.raw) }

// MarshalJSON returns the raw value (null when absent).
func (o OptionalString) MarshalJSON() ([]byte, error) {
	if o.raw == nil {
		return []byte("null"), nil
	}
	return slices.Clone(compact(o.raw)), nil
}

// UnmarshalJSON keeps any JSON value as is.
func (o *OptionalString) UnmarshalJSON(data []byte) error {
	if validate(data, maxDepth) != nil {
		return errors.New("sdkproto: invalid JSON")
	}
	o.raw = append(json.RawMessage(nil), data...)
	return nil
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	ServerInfo ServerInfo
	k          keep
}

// ServerInfo identifies the runtime.
type ServerInfo struct {
	Name, Version string
	k             keep
}

// DefaultInitializeResult returns the result the runtime sends:
// {"serverInfo":{"name":ServerName,"version":ServerVersion}}.
func DefaultInitializeResult() InitializeResult {
	return InitializeResult{ServerInfo: ServerInfo{Name: ServerName, Version: ServerVersion}}
}

var initializeResultFields = []field[InitializeResult]{
	value("serverInfo", func(r *InitializeResult) *ServerInfo { return &r.ServerInfo }, func(*InitializeResult) bool { return true }),
}

var serverInfoFields = []field[ServerInfo]{
	reqString("name", func(s *ServerInfo) *string { return &s.Name }),
	reqString("version", func(s *ServerInfo) *string { return &s.Version }),
}

// UnmarshalJSON decodes leniently; see Check.
func (r *InitializeResult) UnmarshalJSON(data []byte) error {
	*r = InitializeResult{}
	return paramsObject(decodeFields(&r.k, data, initializeResultFields, r, 0))
}

func (r *InitializeResult) kept() *keep { return &r.k }

// MarshalJSON encodes r, preserving decoded bytes.
func (r InitializeResult) MarshalJSON() ([]byte, error) {
	return encodeFields(initializeResultFields, &r)
}

// UnmarshalJSON decodes leniently.
func (s *ServerInfo) UnmarshalJSON(data []byte) error {
	*s = ServerInfo{}
	return objectOnly(decodeFields(&s.k, data, serverInfoFields, s, 0))
}

// decodeValid is UnmarshalJSON for a member's value (see validDecoder).
func (s *ServerInfo) decodeValid(r json.RawMessage) error {
	if kindOf(r) != kindObject {
		return errNotObject
	}
	*s = ServerInfo{}
	decodeValidFields(&s.k, r, serverInfoFields, s, 0)
	return nil
}

func (s *ServerInfo) kept() *keep { return &s.k }

// MarshalJSON encodes s, preserving decoded bytes.
func (s ServerInfo) MarshalJSON() ([]byte, error) { return encodeFields(serverInfoFields, &s) }

// Check applies the TypeScript client's test of an initialize result:
// serverInfo.name and serverInfo.version must be strings. It returns a
// *ProtocolError "initialize returned no server identity: <json>".
func (r InitializeResult) Check() error {
	info := memberOf(r.k, "serverInfo")
	if r.k.raw == nil || (kindOf(memberOf(r.ServerInfo.k, "name")) == kindString &&
		kindOf(memberOf(r.ServerInfo.k, "version")) == kindString && kindOf(info) == kindObject) {
		return nil
	}
	return &ProtocolError{"initialize returned no server identity: " + string(compact(r.k.raw))}
}

// SessionPromptParams are the params of session/prompt.
type SessionPromptParams struct {
	SessionID string // client-chosen session id; unknown ids create a session
	// ContentBlocks is the user message content, which may include encoded
	// image uploads (newer). nil when the member is absent or not an array
	// (see Validate).
	ContentBlocks []ContentBlock
	k             keep
}

var promptFields = []field[SessionPromptParams]{
	reqString("sessionId", func(p *SessionPromptParams) *string { return &p.SessionID }),
	blocksField("contentBlocks", func(p *SessionPromptParams) *[]ContentBlock { return &p.ContentBlocks }, false,
		func(*SessionPromptParams) bool { return true }),
}

// UnmarshalJSON decodes leniently (see the note above InitializeParams).
func (p *SessionPromptParams) UnmarshalJSON(data []byte) error {
	*p = SessionPromptParams{}
	return paramsObject(decodeFields(&p.k, data, promptFields, p, 0))
}

func (p *SessionPromptParams) kept() *keep { return &p.k }

// MarshalJSON encodes p, preserving decoded bytes.
func (p SessionPromptParams) MarshalJSON() ([]byte, error) {
	return encodeFields(promptFields, &p)
}

// Member returns the raw JSON of the member key as received.
func (p SessionPromptParams) Member(key string) json.RawMessage { return memberOf(p.k, key) }

// SessionPromptResult is the result of session/prompt: the id of the
// queued user message (not of a reply or a turn).
type SessionPromptResult struct {
	MessageID string
	k         keep
}

var promptResultFields = []field[SessionPromptResult]{
	reqString("messageId", func(r *SessionPromptResult) *string { return &r.MessageID }),
}

// UnmarshalJSON decodes leniently; see Check.
func (r *SessionPromptResult) UnmarshalJSON(data []byte) error {
	*r = SessionPromptResult{}
	return paramsObject(decodeFields(&r.k, data, promptResultFields, r, 0))
}

func (r *SessionPromptResult) kept() *keep { return &r.k }

// MarshalJSON encodes r, preserving decoded bytes.
func (r SessionPromptResult) MarshalJSON() ([]byte, error) {
	return encodeFields(promptResultFields, &r)
}

// Check applies the TypeScript client's test: messageId must be a string.
// It returns a *ProtocolError "session/prompt returned no message id: <json>".
func (r SessionPromptResult) Check() error {
	if r.k.raw == nil || kindOf(memberOf(r.k, "messageId")) == kindString {
		return nil
	}
	return &ProtocolError{"session/prompt returned no message id: " + string(compact(r.k.raw))}
}

// ShutdownResult is the result of shutdown; it encodes as {} and clients
// ignore its content.
type ShutdownResult struct{}

// Status is the state an agent entered, in session.status.
type Status string

// The values of Status.
const (
	StatusRunning Status = "running"
	StatusIdle    Status = "idle"
)

// RunStatus is the outcome of a subagent run (SdkRunStatus).
type RunStatus string

// The values of RunStatus.
const (
	RunOK    RunStatus = "ok"
	RunError RunStatus = "error"
)

// StopReason is why a subagent run stopped (SubagentStopReason). Plugins
// add values: treat it as an open set.
type StopReason string

// The known values of StopReason.
const (
	StopCompleted StopReason = "completed"
	StopAborted   StopReason = "aborted"
	StopError     StopReason = "error"
	StopMaxTokens StopReason = "max-tokens"
	StopRefusal   StopReason = "refusal"
)

// SessionEventParams are the params of session.event.
type SessionEventParams struct {
	SessionID string // the session the event belongs to (any session)
	// Event is the session-log envelope. When the event member is missing
	// or is not an object with a string type, Event is zero and
	// CheckEnvelope reports it.
	Event Event
	k     keep
}

var sessionEventFields = []field[SessionEventParams]{
	reqString("sessionId", func(p *SessionEventParams) *string { return &p.SessionID }),
	value("event", func(p *SessionEventParams) *Event { return &p.Event }, func(*SessionEventParams) bool { return true }),
}

// UnmarshalJSON decodes leniently (see the note above InitializeParams).
func (p *SessionEventParams) UnmarshalJSON(data []byte) error {
	*p = SessionEventParams{}
	return paramsObject(decodeFields(&p.k, data, sessionEventFields, p, 0))
}

// decodeValid is UnmarshalJSON for params a Client received (see
// Notification.received).
func (p *SessionEventParams) decodeValid(r json.RawMessage) error {
	*p = SessionEventParams{}
	decodeValidFields(&p.k, r, sessionEventFields, p, 0)
	return nil
}

func (p *SessionEventParams) kept() *keep { return &p.k }

// MarshalJSON encodes p, preserving decoded bytes.
func (p SessionEventParams) MarshalJSON() ([]byte, error) {
	return encodeFields(sessionEventFields, &p)
}

// Member returns the raw JSON of the member key as received.
func (p SessionEventParams) Member(key string) json.RawMessage { return memberOf(p.k, key) }

// SessionStatusParams are the params of session.status.
type SessionStatusParams struct {
	SessionID string
	Status    Status
	k         keep
}

var sessionStatusFields = []field[SessionStatusParams]{
	reqString("sessionId", func(p *SessionStatusParams) *string { return &p.SessionID }),
	reqString("status", func(p *SessionStatusParams) *string { return (*string)(&p.Status) }),
}

// UnmarshalJSON decodes leniently.
func (p *SessionStatusParams) UnmarshalJSON(data []byte) error {
	*p = SessionStatusParams{}
	return paramsObject(decodeFields(&p.k, data, sessionStatusFields, p, 0))
}

// decodeValid is UnmarshalJSON for params a Client received (see
// Notification.received).
func (p *SessionStatusParams) decodeValid(r json.RawMessage) error {
	*p = SessionStatusParams{}
	decodeValidFields(&p.k, r, sessionStatusFields, p, 0)
	return nil
}

func (p *SessionStatusParams) kept() *keep { return &p.k }

// MarshalJSON encodes p, preserving decoded bytes.
func (p SessionStatusParams) MarshalJSON() ([]byte, error) {
	return encodeFields(sessionStatusFields, &p)
}

// Member returns the raw JSON of the member key as received.
func (p SessionStatusParams) Member(key string) json.RawMessage { return memberOf(p.k, key) }

// SubagentStartedParams are the params of subagent.started.
type SubagentStartedParams struct {
	ParentSessionID, ChildSessionID string
	k                               keep
}

var subagentStartedFields = []field[SubagentStartedParams]{
	reqString("parentSessionId", func(p *SubagentStartedParams) *string { return &p.ParentSessionID }),
	reqString("childSessionId", func(p *SubagentStartedParams) *string { return &p.ChildSessionID }),
}

// UnmarshalJSON decodes leniently.
func (p *SubagentStartedParams) UnmarshalJSON(data []byte) error {
	*p = SubagentStartedParams{}
	return paramsObject(decodeFields(&p.k, data, subagentStartedFields, p, 0))
}

// decodeValid is UnmarshalJSON for params a Client received (see
// Notification.received).
func (p *SubagentStartedParams) decodeValid(r json.RawMessage) error {
	*p = SubagentStartedParams{}
	decodeValidFields(&p.k, r, subagentStartedFields, p, 0)
	return nil
}

func (p *SubagentStartedParams) kept() *keep { return &p.k }

// MarshalJSON encodes p, preserving decoded bytes.
func (p SubagentStartedParams) MarshalJSON() ([]byte, error) {
	return encodeFields(subagentStartedFields, &p)
}

// Member returns the raw JSON of the member key as received.
func (p SubagentStartedParams) Member(key string) json.RawMessage { return memberOf(p.k, key) }

// SubagentFinishedParams are the params of subagent.finished.
type SubagentFinishedParams struct {
	Provider        string // subagent provider, e.g. spawn
	AgentID         string // child agent id
	ParentSessionID string
	ChildSessionID  string
	Status          RunStatus
	StopReason      StopReason
	// LastAssistantMessage is the child's selected output. nil means the
	// member is absent (upstream omits it when there is none); a non-nil
	// empty slice encodes as [].
	LastAssistantMessage []ContentBlock
	k                    keep
}

var subagentFinishedFields = []field[SubagentFinishedParams]{
	reqString("provider", func(p *SubagentFinishedParams) *string { return &p.Provider }),
	reqString("agentId", func(p *SubagentFinishedParams) *string { return &p.AgentID }),
	reqString("parentSessionId", func(p *SubagentFinishedParams) *string { return &p.ParentSessionID }),
	reqString("childSessionId", func(p *SubagentFinishedParams) *string { return &p.ChildSessionID }),
	reqString("status", func(p *SubagentFinishedParams) *string { return (*string)(&p.Status) }),
	reqString("stopReason", func(p *SubagentFinishedParams) *string { return (*string)(&p.StopReason) }),
	blocksField("lastAssistantMessage", func(p *SubagentFinishedParams) *[]ContentBlock { return &p.LastAssistantMessage }, false,
		func(p *SubagentFinishedParams) bool { return p.LastAssistantMessage != nil }),
}

// UnmarshalJSON decodes leniently.
func (p *SubagentFinishedParams) UnmarshalJSON(data []byte) error {
	*p = SubagentFinishedParams{}
	return paramsObject(decodeFields(&p.k, data, subagentFinishedFields, p, 0))
}

// decodeValid is UnmarshalJSON for params a Client received (see
// Notification.received).
func (p *SubagentFinishedParams) decodeValid(r json.RawMessage) error {
	*p = SubagentFinishedParams{}
	decodeValidFields(&p.k, r, subagentFinishedFields, p, 0)
	return nil
}

func (p *SubagentFinishedParams) kept() *keep { return &p.k }

// MarshalJSON encodes p, preserving decoded bytes.
func (p SubagentFinishedParams) MarshalJSON() ([]byte, error) {
	return encodeFields(subagentFinishedFields, &p)
}

// Member returns the raw JSON of the member key as received.
func (p SubagentFinishedParams) Member(key string) json.RawMessage { return memberOf(p.k, key) }

// paramsObject treats a non-object as an empty object, as the upstream
// transport normalises params.
func paramsObject(isObject bool, err error) error { return err }

// memberOf returns the raw value of the member key of the object k keeps
// (the last, when duplicated), or nil.
func memberOf(k keep, key string) json.RawMessage { return lookup(k.raw, k.ms, key) }
