package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/linerpc/linerpc/sdkproto"
)

// Script says what the runtime does for each prompt it receives.
//
// A Script has a JSON form (MarshalJSON, UnmarshalJSON, LoadScript), for
// scripts written by hand in any language and served by `dshrpc
// serve-script FILE`, and in which sdktest.Runtime.Command hands the
// script to its process: an object whose one member, turns, lists the turns, each a
// list of actions; an action is an object whose member kind names the
// builder method it stands for, and whose other members are that
// method's arguments:
//
//	{"turns": [
//	  [{"kind": "text", "parts": ["Hel", "lo"]},
//	   {"kind": "usage", "usage": {"inputTokens": 12, "outputTokens": 2}}],
//	  [{"kind": "tool-call", "name": "bash", "arguments": {"command": "date"}, "output": "Mon\n"},
//	   {"kind": "text", "parts": ["It is Monday."]}],
//	  [{"kind": "refuse", "message": "no"}]
//	]}
//
// The kinds, with their members besides kind and the method each stands
// for; a member left out, or null, has the zero value of its argument
// (params and data aside: they are sent as written, {} when left out):
//
//	text         parts: the deltas, a list of strings (Turn.Text)
//	reasoning    parts (Turn.Reasoning)
//	usage        usage: a TokenUsage as the wire writes it, {"inputTokens",
//	             "outputTokens", "cacheReadTokens", "cacheWriteTokens",
//	             "reasoningTokens"} (Turn.Usage)
//	tool-call    id, name, arguments, output, isError, error: the fields of
//	             ToolCall, error as the wire writes it, {"name", "code"};
//	             arguments is the JSON text of the arguments, as a string,
//	             or the arguments themselves, an object or a list, whose
//	             text is then their compact form (Turn.ToolCall)
//	subagent     label, prompt, child: the child's turn, a list of actions
//	             (Turn.Subagent)
//	model-error  failure: an LLMFailure as the wire writes it, {"message",
//	             "code", "status", "providerRetryAfterMs", "requestId"}
//	             (Turn.ModelError)
//	max-tokens   (Turn.MaxTokens)
//	refuse       message; the only action of its turn (Refuse)
//	pause        duration: a Go duration string, "1.5s", "250ms"; a number
//	             is refused, not read as nanoseconds (Turn.Pause)
//	ask          method, params: any JSON value (Turn.Ask)
//	event        type, data: any JSON value (Turn.Event)
//
// The members nested as the wire writes them (usage, failure, error) are
// the protocol's objects, so that they can be copied from a transcript.
// Reading is strict: a member or a kind the form does not have (keys are
// matched exactly, those of usage, failure and error too), a member
// written twice, a member of the wrong type (a null among parts
// included), and whatever the builder methods refuse (an action after
// max-tokens, a child turn that refuses) are errors that say where, as in
// `turns[1][2]: unknown kind "txt"` or `turns[0][1]: member "parts"
// twice`.
type Script struct {
	// Turns are played in the order the prompts arrive, whatever their
	// sessions: the first prompt plays Turns[0], the second Turns[1], and
	// so on. Prompts sent at once may be served in any order; a test that
	// sends them so scripts them with Reply instead.
	Turns []*Turn
	// Reply, when set, returns the turn of each prompt past Turns. It runs
	// on the goroutine serving the prompt, before any event of it is
	// sent. A script with Reply has no JSON form, so it cannot be
	// written to a file nor cross to a process (sdktest.Runtime.Command).
	Reply func(p Prompt) *Turn
}

// Prompt is a session/prompt request as the runtime received it, for
// Script.Reply.
type Prompt struct {
	// N is its place among the prompts received, from 0 (Turns[N] is its
	// turn); messages number prompts from 1, as prompt N+1.
	N         int
	SessionID string // the session prompted
	// Content is the user message content (image uploads already
	// replaced by durable references).
	Content []sdkproto.ContentBlock
	Text    string // the text of its text blocks (sdkproto.FinalText)
}

// ToolCall is a tool call that a turn's model message makes, and the
// result the runtime sends back (see Turn.ToolCall).
type ToolCall struct {
	// ID is the call id; "" means call-1, call-2, ... in the order of the
	// turn's tool calls.
	ID string
	// Name is the tool's name and Arguments the JSON text of its
	// arguments, streamed in one tool-call-delta.
	Name, Arguments string
	// Output is the text of the result's one text block.
	Output string
	// IsError marks the result as a failure (isError true in the
	// tool-result block); Error, when set, is the error member of the
	// tool/result event (the runtime's ToolArgsError INVALID_ARGS, say).
	IsError bool
	Error   *sdkproto.ToolError
}

// Turn is what the runtime does for one prompt: a list of actions played
// in order by the session's agent once the prompt is claimed, with the
// events of the real runtime around them (docs/wire.md §5.3): turn/start
// and the claim, step/start, the user message, the first turn's context
// events, then what the actions stream, then step/end, turn/end and, when
// nothing else is queued, the idle status.
//
// A turn is built with NewTurn and its methods, each of which appends an
// action and returns the Turn, or with Refuse. Text and Reasoning stream
// the blocks of the model message in progress; ToolCall and Subagent end
// that message with a tool call and start the next step; ModelError and
// MaxTokens end the turn; at the end of the actions the message in
// progress ends (finish stop) and the turn completes. A Turn may be
// played by several prompts; a misuse of its methods (an action after the
// turn ended, params that do not encode) is reported by Script.Err, and
// so by NewRuntime and Serve.
type Turn struct {
	actions []action
	ended   bool
	err     error
}

// action is one step of a Turn, as the runtime plays it. Its JSON form
// is the Script's (script_json.go).
type action struct {
	Kind     string
	Parts    []string             // text, reasoning
	Usage    *sdkproto.TokenUsage // usage
	Tool     *ToolCall            // tool-call
	Label    string               // subagent
	Prompt   string               // subagent
	Child    []action             // subagent
	Failure  *sdkproto.LLMFailure // model-error
	Message  string               // refuse
	Duration time.Duration        // pause
	Method   string               // ask
	Params   json.RawMessage      // ask
	Type     sdkproto.EventType   // event
	Data     json.RawMessage      // event
}

// The kinds of actions, as the JSON form of a Script names them.
const (
	actText       = "text"
	actReasoning  = "reasoning"
	actUsage      = "usage"
	actTool       = "tool-call"
	actSubagent   = "subagent"
	actModelError = "model-error"
	actMaxTokens  = "max-tokens"
	actRefuse     = "refuse"
	actPause      = "pause"
	actAsk        = "ask"
	actEvent      = "event"
)

// NewTurn returns a Turn without actions: played as it is, its model
// message is empty and the turn completes.
func NewTurn() *Turn { return &Turn{} }

// Refuse returns a Turn that refuses its prompt: the runtime answers
// session/prompt with -32603 and message, as it answers a session it
// cannot create, and sends nothing else for it.
func Refuse(message string) *Turn {
	return &Turn{actions: []action{{Kind: actRefuse, Message: message}}, ended: true}
}

// add appends a, unless the turn has ended.
func (t *Turn) add(a action) *Turn {
	switch {
	case t.err != nil:
	case t.ended:
		t.err = fmt.Errorf("scripted: %s after the turn ended (Refuse, ModelError and MaxTokens end it)", a.Kind)
	default:
		t.actions = append(t.actions, a)
	}
	return t
}

// fail records a misuse of the builder.
func (t *Turn) fail(err error) *Turn {
	if t.err == nil {
		t.err = err
	}
	return t
}

// Text streams a text block of the model message in progress, one
// text-delta per part. A Text right after another Text (Pause, Ask and
// Event between them aside) goes on with the same block.
func (t *Turn) Text(parts ...string) *Turn {
	return t.add(action{Kind: actText, Parts: parts})
}

// Reasoning streams a reasoning block of the model message in progress,
// one reasoning-delta per part, as Text streams a text block.
func (t *Turn) Reasoning(parts ...string) *Turn {
	return t.add(action{Kind: actReasoning, Parts: parts})
}

// Usage sets the token usage that the model message in progress reports
// (its usage chunk and its assistant/message). Without it, a message
// reports 10 input tokens and one output token per delta streamed.
func (t *Turn) Usage(u sdkproto.TokenUsage) *Turn {
	return t.add(action{Kind: actUsage, Usage: &u})
}

// ToolCall ends the model message in progress with a call of a tool
// (finish tool-calls), then sends tool/call and, as the tool's result,
// tool/result, ends the step and starts the next one, as the real
// runtime runs a tool.
func (t *Turn) ToolCall(c ToolCall) *Turn {
	return t.add(action{Kind: actTool, Tool: &c})
}

// Subagent ends the model message in progress with a call of the tool
// subagent ({"description":label,"prompt":prompt,"run_in_background":
// false}), then runs child in a new child session, as the real runtime
// runs a one-shot subagent: subagent.started, the child's events (its
// seqs start at 2, the first two being the delegated policy that the
// runtime does not forward), its running and idle statuses,
// subagent.finished with the child's last assistant message, and the
// parent's tool/result holding the child's answer; then the parent's next
// step starts. child is copied: changing it afterwards changes nothing.
func (t *Turn) Subagent(label, prompt string, child *Turn) *Turn {
	if child == nil {
		child = NewTurn()
	}
	switch {
	case child.err != nil:
		return t.fail(fmt.Errorf("scripted: the child turn of Subagent: %w", child.err))
	case len(child.actions) > 0 && child.actions[0].Kind == actRefuse:
		return t.fail(errors.New("scripted: a Subagent's child turn cannot Refuse: the runtime starts children itself"))
	}
	return t.add(action{Kind: actSubagent, Label: label, Prompt: prompt, Child: append([]action(nil), child.actions...)})
}

// ModelError ends the turn with a failed model call, as the real runtime
// reports an error of the provider: after what the step streamed so far,
// a finish chunk of kind error with failure, no assistant/message,
// step/end, and turn/end of kind error with failure as its error. No
// action may follow it.
func (t *Turn) ModelError(failure sdkproto.LLMFailure) *Turn {
	t.add(action{Kind: actModelError, Failure: &failure})
	t.ended = true
	return t
}

// MaxTokens ends the turn as a model message cut at its output cap does:
// the message in progress ends with finish max-tokens and is sent as the
// assistant/message, then step/end and turn/end of kind max-tokens. No
// action may follow it.
func (t *Turn) MaxTokens() *Turn {
	t.add(action{Kind: actMaxTokens})
	t.ended = true
	return t
}

// Pause waits d before the next action, on a timer of the runtime's
// goroutine: inside a testing/synctest bubble the wait is on the
// bubble's fake clock, so it takes no real time. Shutdown cuts a pause
// short, and the turn with it.
func (t *Turn) Pause(d time.Duration) *Turn {
	if d < 0 {
		return t.fail(fmt.Errorf("scripted: Pause(%v): negative", d))
	}
	return t.add(action{Kind: actPause, Duration: d})
}

// Ask sends the client a request for method with params (encoded with
// encoding/json; nil sends {}) and waits for the answer before the next
// action. Whatever the answer, the turn goes on; the frames record it
// (sdktest.Runtime.Answers reads them). The runtimes of the revisions
// read send no request, so a transcript with one is not one of theirs
// (dshrpc check and sdktest.Runtime.Check say so).
func (t *Turn) Ask(method string, params any) *Turn {
	raw, err := encode(params)
	if err != nil {
		return t.fail(fmt.Errorf("scripted: Ask(%q): the params do not encode: %w", method, err))
	}
	return t.add(action{Kind: actAsk, Method: method, Params: raw})
}

// Event appends an event of type typ with data (encoded with
// encoding/json) to the session's log at this point of the turn, for
// events the other actions do not make (todo/write, llm/retry, ...).
func (t *Turn) Event(typ sdkproto.EventType, data any) *Turn {
	raw, err := encode(data)
	if err != nil {
		return t.fail(fmt.Errorf("scripted: Event(%q): the data do not encode: %w", typ, err))
	}
	return t.add(action{Kind: actEvent, Type: typ, Data: raw})
}

// encode encodes v as JSON.stringify would (no HTML escaping); nil
// encodes as {}.
func encode(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage(`{}`), nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		if !json.Valid(raw) {
			return nil, errors.New("invalid JSON")
		}
		return raw, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Err returns the first misuse of a Turn of s (a nil Turn, an action
// after the turn ended, params that do not encode), naming the turn, or
// nil when there is none: NewRuntime, Serve and MarshalJSON refuse s with
// it, and sdktest.NewRuntime fails its test with it.
func (s Script) Err() error {
	for i, t := range s.Turns {
		switch {
		case t == nil:
			return fmt.Errorf("scripted: Script.Turns[%d] is nil", i)
		case t.err != nil:
			return fmt.Errorf("Script.Turns[%d]: %w", i, t.err)
		}
	}
	return nil
}
