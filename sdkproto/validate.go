package sdkproto

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/linerpc/linerpc/internal/lines"
	"github.com/linerpc/linerpc/internal/wire"
)

// The messages of initialize's own checks (newer revisions; HEAD has only
// the maxTokens check and ignores reasoningEffort).
var (
	ErrReasoningEffort = errors.New("initialize reasoningEffort must be a non-empty string")
	ErrMaxTokens       = errors.New("initialize maxTokens must be a positive safe integer")
)

// Validate applies the runtime's parameter checks of initialize, in
// upstream order: (1) reasoningEffort, when present, must be a non-empty
// string (null, "", numbers, booleans, arrays and objects fail;
// whitespace passes), else ErrReasoningEffort; (2) maxTokens, when present,
// must satisfy JavaScript's Number.isSafeInteger(n) && n > 0 after JSON
// parsing (1.0 and 2e3 pass; 0, -0, negatives, 1.5, 2^53, 1e300, null,
// strings, booleans, arrays and objects fail), else ErrMaxTokens. The
// later steps (cwd resolution, adapter and route checks) belong to the
// server; Member gives it the raw values they need.
func (p InitializeParams) Validate() error {
	if p.ReasoningEffort.IsPresent() {
		if s, ok := p.ReasoningEffort.String(); !ok || s == "" {
			return ErrReasoningEffort
		}
	}
	if p.MaxTokens.IsPresent() {
		if n, ok := p.MaxTokens.Int64(); !ok || n <= 0 {
			return ErrMaxTokens
		}
	}
	return nil
}

// safeInteger is the JavaScript safe-integer rule of numeric params.
func safeInteger(raw json.RawMessage) (int64, bool) { return wire.SafeInteger(raw) }

// Interpolate renders a raw JSON value as JavaScript's String() (and so a
// template literal or Array.prototype.join) would after JSON.parse:
// "undefined" for nil (an absent member), "null", "true"/"false", a
// string's content, numbers in JavaScript's shortest form (1.0 gives "1",
// 1e21 gives "1e+21"), arrays joined with "," (null elements empty) and
// "[object Object]" for objects. Upstream messages interpolate values
// this way, e.g. "Image type undefined is not accepted by this deployment.".
func Interpolate(raw json.RawMessage) string {
	switch kindOf(raw) {
	case kindAbsent:
		return "undefined"
	case kindNull:
		return "null"
	case kindString:
		s, _ := asString(raw)
		return s
	case kindNumber:
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return string(raw)
		}
		return jsNumber(f)
	case kindArray:
		elems, _ := splitArray(raw)
		parts := make([]string, len(elems))
		for i, e := range elems {
			if kindOf(e) != kindNull {
				parts[i] = Interpolate(e)
			}
		}
		return strings.Join(parts, ",")
	case kindObject:
		return "[object Object]"
	}
	return strings.TrimSpace(string(raw)) // true, false
}

// jsNumber implements ECMAScript Number::toString for finite values.
func jsNumber(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	case f < 0:
		return "-" + jsNumber(-f)
	}
	// Shortest digits d1…dk and exponent n with value 0.d1…dk × 10^n.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expText, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expText)
	k, n := len(digits), exp+1
	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits
	}
	sign := "+"
	if n-1 < 0 {
		sign = "-"
	}
	m := digits[:1]
	if k > 1 {
		m += "." + digits[1:]
	}
	return m + "e" + sign + strconv.Itoa(int(math.Abs(float64(n-1))))
}

// DefaultMediaTypes are the image types a default attachment store accepts.
var DefaultMediaTypes = []string{"image/png", "image/jpeg", "image/webp", "image/gif"}

// The machine codes of ImageError (never sent on the wire).
const (
	CodeInvalidImageBase64   = "INVALID_IMAGE_BASE64"
	CodeUnsupportedImageType = "UNSUPPORTED_IMAGE_TYPE"
)

// ImageError is an image admission failure: Message is the exact upstream
// text (the only part the transport sends) and Code the attachment error
// code behind it.
type ImageError struct {
	Code, Message string
}

// Error returns the message.
func (e *ImageError) Error() string { return e.Message }

// ErrNoAttachmentStore is the prompt error when an image is uploaded to a
// runtime without an attachment store.
var ErrNoAttachmentStore = errors.New("SDK image prompt requires an attachment store")

// ImagePolicy configures the image checks of ValidatePromptBlocks. The
// zero value is a runtime with an attachment store that accepts
// DefaultMediaTypes and has no batch limits.
type ImagePolicy struct {
	// NoAttachmentStore makes any upload fail with ErrNoAttachmentStore.
	NoAttachmentStore bool
	// AcceptedMediaTypes lists the accepted mime types, compared exactly;
	// nil means DefaultMediaTypes.
	AcceptedMediaTypes []string
	// CheckBatch, when set, runs after every upload's base64 check and
	// before the media type checks, as the store's batch limits (count,
	// total size) do upstream; its error is returned as is.
	CheckBatch func(uploads []Upload) error
}

// Upload is an encoded image found in prompt content.
type Upload struct {
	Index    int    // position in the content blocks
	MimeType string // as sent ("" when missing or not a string)
	Data     []byte // the decoded bytes
}

// ValidatePromptBlocks applies the newer runtime's checks to prompt content
// and returns the uploads it holds (blocks with type "image" and a data
// member, see ContentBlock.IsUpload), decoded, in order. Nothing else is
// validated: unknown types, missing members and non-object blocks pass, as
// upstream queues them verbatim. Order of checks:
//
//  1. a null block: "Cannot read properties of null (reading 'type')";
//  2. if there is an upload and policy.NoAttachmentStore: ErrNoAttachmentStore;
//  3. every upload's data must be non-empty canonical standard base64
//     (RFC 4648 alphabet, padded, no whitespace or prefix; decoding then
//     re-encoding reproduces it); a data member that is not a string fails
//     the same way: *ImageError "Image upload is not canonical base64.";
//  4. policy.CheckBatch;
//  5. every upload's mimeType must be accepted: *ImageError
//     "Image type <mimeType> is not accepted by this deployment." (a missing
//     mimeType prints as undefined).
//
// Decoding the image itself (type sniffing, size and pixel limits) is the
// attachment store's job and follows these checks.
func ValidatePromptBlocks(blocks []ContentBlock, policy ImagePolicy) ([]Upload, error) {
	var uploads []Upload
	var mimeRaw []json.RawMessage
	for i, b := range blocks {
		if b.k.raw != nil && kindOf(b.k.raw) == kindNull {
			return nil, errors.New("Cannot read properties of null (reading 'type')")
		}
		if b.IsUpload() {
			uploads = append(uploads, Upload{Index: i, MimeType: b.MimeType})
			raw := b.Member("mimeType")
			if b.k.raw == nil {
				raw = marshal(b.MimeType)
			}
			mimeRaw = append(mimeRaw, raw)
		}
	}
	if len(uploads) == 0 {
		return nil, nil
	}
	if policy.NoAttachmentStore {
		return nil, ErrNoAttachmentStore
	}
	for i := range uploads {
		b := blocks[uploads[i].Index]
		data, ok := canonicalBase64(b)
		if !ok {
			return nil, &ImageError{CodeInvalidImageBase64, "Image upload is not canonical base64."}
		}
		uploads[i].Data = data
	}
	if policy.CheckBatch != nil {
		if err := policy.CheckBatch(uploads); err != nil {
			return nil, err
		}
	}
	accepted := policy.AcceptedMediaTypes
	if accepted == nil {
		accepted = DefaultMediaTypes
	}
	for i, u := range uploads {
		if kindOf(mimeRaw[i]) != kindString || !slices.Contains(accepted, u.MimeType) {
			return nil, &ImageError{CodeUnsupportedImageType,
				"Image type " + Interpolate(mimeRaw[i]) + " is not accepted by this deployment."}
		}
	}
	return uploads, nil
}

// canonicalBase64 decodes the data of an upload when it is a non-empty
// string of canonical standard base64.
func canonicalBase64(b ContentBlock) ([]byte, bool) {
	if b.k.raw != nil && kindOf(b.Member("data")) != kindString {
		return nil, false
	}
	if b.Data == "" {
		return nil, false
	}
	data, err := base64.StdEncoding.Strict().DecodeString(b.Data)
	if err != nil || base64.StdEncoding.EncodeToString(data) != b.Data {
		return nil, false
	}
	return data, true
}

// Validate applies the newer runtime's content checks to session/prompt
// params: a missing contentBlocks gives "Cannot read properties of
// undefined (reading 'filter')", null gives the same with null, any other
// non-array gives "blocks.filter is not a function"; then
// ValidatePromptBlocks. Upstream runs these after the session exists;
// sessionId is not validated.
func (p SessionPromptParams) Validate(policy ImagePolicy) ([]Upload, error) {
	if p.k.raw != nil {
		switch raw := p.Member("contentBlocks"); {
		case raw == nil:
			return nil, errors.New("Cannot read properties of undefined (reading 'filter')")
		case kindOf(raw) == kindNull:
			return nil, errors.New("Cannot read properties of null (reading 'filter')")
		case kindOf(raw) != kindArray:
			return nil, errors.New("blocks.filter is not a function")
		}
	}
	return ValidatePromptBlocks(p.ContentBlocks, policy)
}

// The rules below are what the params of the runtime's notifications must
// hold (docs/wire.md §4), for params decoded from the wire: each Check
// returns every rule the params break (joined, see errors.Join), or nil.

// Check reports a session.status whose sessionId is not a string or whose
// status is neither "running" nor "idle" (the first of the two only).
func (p SessionStatusParams) Check() error {
	switch {
	case kindOf(p.Member("sessionId")) != kindString:
		return fmt.Errorf("session.status: sessionId must be a string, got %s", kindOf(p.Member("sessionId")).Phrase())
	case p.Status != StatusRunning && p.Status != StatusIdle:
		return fmt.Errorf("session.status: status must be \"running\" or \"idle\", got %s", orAbsent(p.Member("status")))
	}
	return nil
}

// Check reports each of parentSessionId and childSessionId of a
// subagent.started that is not a non-empty string.
func (p SubagentStartedParams) Check() error {
	var errs []error
	for _, k := range []string{"parentSessionId", "childSessionId"} {
		if m := p.Member(k); kindOf(m) != kindString || string(m) == `""` {
			errs = append(errs, fmt.Errorf("subagent.started: %s must be a non-empty string, got %s", k, orAbsent(m)))
		}
	}
	return errors.Join(errs...)
}

// Check reports each string member of a subagent.finished that is not a
// string, a status other than "ok" or "error", and a lastAssistantMessage
// (when present) that is not an array of content blocks.
func (p SubagentFinishedParams) Check() error {
	var errs []error
	for _, k := range []string{"provider", "agentId", "parentSessionId", "childSessionId", "stopReason"} {
		if m := p.Member(k); kindOf(m) != kindString {
			errs = append(errs, fmt.Errorf("subagent.finished: %s must be a string, got %s", k, orAbsent(m)))
		}
	}
	if p.Status != RunOK && p.Status != RunError {
		errs = append(errs, fmt.Errorf("subagent.finished: status must be \"ok\" or \"error\", got %s", orAbsent(p.Member("status"))))
	}
	if m := p.Member("lastAssistantMessage"); m != nil && !contentBlocks(m) {
		errs = append(errs, fmt.Errorf("subagent.finished: lastAssistantMessage must be an array of content blocks, got %s", lines.Excerpt(m)))
	}
	return errors.Join(errs...)
}

// contentBlocks reports an array of objects with a string type (or null,
// which decodes as no blocks).
func contentBlocks(m json.RawMessage) bool {
	switch {
	case validate(m, maxDepth) != nil:
		return false
	case kindOf(m) == kindNull:
		return true
	}
	blocks := elements(m)
	for _, b := range blocks {
		if kindOf(get(b, "type")) != kindString { // nil when b is no object
			return false
		}
	}
	return blocks != nil
}

// orAbsent quotes a member's raw value for a message.
func orAbsent(m json.RawMessage) string {
	if m == nil {
		return wire.Absent.Phrase()
	}
	return lines.Excerpt(m)
}

// eventDecoders are the typed accessors of the known event types whose
// data this package decodes: data that fails them breaks the contract.
var eventDecoders = map[EventType]func(Event) error{
	EventAgentInboxSpliced: dataCheck(EventAgentInboxSpliced, Event.InboxSpliced),
	EventUserMessage:       dataCheck(EventUserMessage, Event.UserMessage),
	EventAssistantChunk:    dataCheck(EventAssistantChunk, Event.AssistantChunk),
	EventAssistantMessage:  dataCheck(EventAssistantMessage, Event.AssistantMessage),
	EventToolCall:          dataCheck(EventToolCall, Event.ToolCall),
	EventToolResult:        dataCheck(EventToolResult, Event.ToolResult),
	EventTurnStart:         dataCheck(EventTurnStart, Event.TurnStart),
	EventTurnEnd: func(e Event) error {
		if err := dataCheck(EventTurnEnd, Event.TurnEnd)(e); err != nil {
			return err
		}
		_, err := e.TurnEndReasonKind()
		return err
	},
	EventStepStart:          dataCheck(EventStepStart, Event.StepStart),
	EventStepEnd:            dataCheck(EventStepEnd, Event.StepEnd),
	EventRequestHeader:      dataCheck(EventRequestHeader, Event.RequestHeader),
	EventRequestContext:     dataCheck(EventRequestContext, Event.RequestContext),
	EventTodoWrite:          dataCheck(EventTodoWrite, Event.TodoWrite),
	EventSessionTitle:       dataCheck(EventSessionTitle, Event.SessionTitle),
	EventSubagentDescriptor: dataCheck(EventSubagentDescriptor, Event.SubagentDescriptor),
	EventLLMRetry:           dataCheck(EventLLMRetry, Event.LLMRetry),
	EventLLMRetryStarted:    dataCheck(EventLLMRetryStarted, Event.LLMRetryStarted),
}

// dataCheck is the check that the data of an event of type want decodes
// with accessor: nil when dataDecodes can tell so from the JSON, else the
// accessor's error, if any.
func dataCheck[T any](want EventType, accessor func(Event) (T, error)) func(Event) error {
	t := reflect.TypeFor[T]()
	return func(e Event) error {
		if e.Type == want && e.Data != nil && dataDecodes(t, e) {
			return nil
		}
		_, err := accessor(e)
		return err
	}
}

// Check reports what an event decoded from a session.event breaks, after
// its envelope passed SessionEventParams.CheckEnvelope: seq and time must
// be integers (read exactly, within int64), data an object that the typed
// accessor of a known type decodes, and assistant content must hold
// (CheckAssistantContent). Seq order across events is the checker's.
func (e Event) Check() error {
	label := fmt.Sprintf("session.event %s", e.Type)
	var errs []error
	if _, ok := wire.NumberInt64(e.Member("seq")); !ok {
		errs = append(errs, fmt.Errorf("%s: seq must be an integer, got %s", label, orAbsent(e.Member("seq"))))
	}
	if _, ok := wire.NumberInt64(e.Member("time")); !ok {
		errs = append(errs, fmt.Errorf("%s: time must be an integer (epoch ms), got %s", label, orAbsent(e.Member("time"))))
	}
	if d := e.Member("data"); kindOf(d) != kindObject {
		errs = append(errs, fmt.Errorf("%s: data must be an object, got %s", label, orAbsent(d)))
	} else if dec := eventDecoders[e.Type]; dec != nil {
		if err := dec(e); err != nil {
			errs = append(errs, fmt.Errorf("%s: data does not decode: %v", label, err))
		}
	}
	if err := e.CheckAssistantContent(); err != nil {
		errs = append(errs, errors.New(lines.Excerpt([]byte(err.Error()))))
	}
	return errors.Join(errs...)
}
