package scripted

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/linerpc/linerpc/sdkproto"
)

// This file plays a turn: the events the real runtime sends for it, in its
// order (testdata/transcripts/README.md, facts 3, 4, 6 to 9).

// now is the clock of the events the Runtime stamps itself (a child's);
// the Emitter stamps the others with the same clock, time.Now, which is
// the fake one inside a testing/synctest bubble.
func now() int64 { return time.Now().UnixMilli() }

// turnRun plays the actions of one turn of a session. An emit that fails
// (shutdown began, the connection ended) stops the turn: every later
// event is skipped.
type turnRun struct {
	p    *Runtime
	em   *sdkproto.Emitter
	s    *session
	turn int64
	step int64
	err  error

	msg   message // the model message in progress
	calls int     // tool calls so far, for their ids
}

// message is the model message of the step in progress.
type message struct {
	blocks    []block
	deltas    int64
	chunkSeqs []int64
	usage     *sdkproto.TokenUsage
}

// block is one content block being streamed.
type block struct {
	kind  string // text, reasoning or tool-call
	text  strings.Builder
	final sdkproto.ContentBlock // a tool call's, complete at once
}

// The data of assistant/chunk; each chunk type has its members in the
// order the runtime writes them.
type (
	chunkData struct {
		Turn  int64 `json:"turn"`
		Step  int64 `json:"step"`
		Chunk any   `json:"chunk"`
	}
	chunkStart struct {
		Type      sdkproto.ChunkType `json:"type"`
		Index     int                `json:"index"`
		BlockType string             `json:"blockType"`
	}
	chunkDelta struct {
		Type  sdkproto.ChunkType `json:"type"`
		Index int                `json:"index"`
		Text  string             `json:"text"`
	}
	chunkToolDelta struct {
		Type           sdkproto.ChunkType `json:"type"`
		Index          int                `json:"index"`
		ID             string             `json:"id"`
		Name           string             `json:"name"`
		ArgumentsDelta string             `json:"argumentsDelta"`
	}
	chunkEnd struct {
		Type  sdkproto.ChunkType    `json:"type"`
		Index int                   `json:"index"`
		Block sdkproto.ContentBlock `json:"block"`
	}
	chunkUsage struct {
		Type  sdkproto.ChunkType  `json:"type"`
		Usage sdkproto.TokenUsage `json:"usage"`
	}
	chunkFinish struct {
		Type   sdkproto.ChunkType    `json:"type"`
		Reason sdkproto.FinishReason `json:"reason"`
	}
)

// play plays a turn of session s, whose number is s.turns and whose
// prompt is msg; it returns how the turn ended and the content of its
// last assistant message.
func (p *Runtime) play(em *sdkproto.Emitter, s *session, msg sdkproto.Message, actions []action) (sdkproto.TurnEndReason, []sdkproto.ContentBlock) {
	r := &turnRun{p: p, em: em, s: s, turn: s.turns, step: 1}
	r.emit(sdkproto.EventStepStart, sdkproto.StepData{Turn: r.turn, Step: 1})
	promptSeq := r.surface(event(sdkproto.EventUserMessage, msg), nil)
	if r.turn == 1 {
		r.context(msg, promptSeq)
	}
	var last []sdkproto.ContentBlock
	for _, a := range actions {
		switch a.Kind {
		case actText, actReasoning:
			r.stream(a.Kind, a.Parts)
		case actUsage:
			r.msg.usage = a.Usage
		case actTool:
			r.toolCall(*a.Tool)
		case actSubagent:
			r.subagent(a)
		case actModelError:
			r.chunk(chunkFinish{Type: sdkproto.ChunkFinish, Reason: sdkproto.FinishReason{Kind: sdkproto.FinishError, Failure: a.Failure}})
			r.emit(sdkproto.EventStepEnd, sdkproto.StepData{Turn: r.turn, Step: r.step})
			return r.end(sdkproto.TurnEndReason{Kind: sdkproto.TurnError, Error: a.Failure}), last
		case actMaxTokens:
			last = r.endMessage(sdkproto.FinishMaxTokens)
			r.emit(sdkproto.EventStepEnd, sdkproto.StepData{Turn: r.turn, Step: r.step})
			return r.end(sdkproto.TurnEndReason{Kind: sdkproto.TurnMaxTokens}), last
		case actPause:
			r.pause(a.Duration)
		case actAsk:
			r.ask(a.Method, a.Params)
		case actEvent:
			r.emit(a.Type, a.Data)
		}
	}
	last = r.endMessage(sdkproto.FinishStop)
	r.emit(sdkproto.EventStepEnd, sdkproto.StepData{Turn: r.turn, Step: r.step})
	return r.end(sdkproto.TurnEndReason{Kind: sdkproto.TurnCompleted}), last
}

// end sends turn/end with reason and returns it.
func (r *turnRun) end(reason sdkproto.TurnEndReason) sdkproto.TurnEndReason {
	r.emit(sdkproto.EventTurnEnd, sdkproto.TurnEndData{Turn: r.turn, Reason: reason})
	return reason
}

// emit appends an event of type typ with data; it returns its seq.
func (r *turnRun) emit(typ sdkproto.EventType, data any) int64 {
	return r.send(event(typ, data))
}

// surface appends a surface event (user/message, assistant/message,
// tool/result): surfaceOp append, and sourceEventSeqs when given.
func (r *turnRun) surface(ev sdkproto.Event, sources []int64) int64 {
	ev.SurfaceOp = sdkproto.AppendOp()
	ev.SourceEventSeqs = sources
	return r.send(ev)
}

func (r *turnRun) send(ev sdkproto.Event) int64 {
	if r.err != nil {
		return -1
	}
	var seq int64
	seq, r.err = r.p.append(r.p.ctx, r.em, r.s, ev)
	return seq
}

// context sends what the first turn of a session logs before its first
// model call: the runtime-context snapshot, the session title, the
// request header and context.
func (r *turnRun) context(prompt sdkproto.Message, promptSeq int64) {
	sections := []map[string]string{
		{"name": "sandbox:policy", "text": "Current DSH file policy: danger-full-access. The DSH file sandbox does not restrict file modifications by available operations."},
		{"name": "approval:policy", "text": "Approval prompts are disabled in this session: actions that require approval are rejected automatically — do not request sandbox escalation (do not set `sandbox_permissions`)."},
	}
	if r.s.child {
		sections = append(sections, map[string]string{"name": "subagent:delegation", "text": "You are a delegated subagent: your permission scope was fixed when you were started and cannot be widened from inside this session — operations that require approval are rejected automatically. When the task needs access beyond that scope, do not retry the denied operation; state the limitation in your reply so the delegating agent can handle it."})
	}
	text := "Current runtime context. This snapshot supersedes earlier runtime-context snapshots."
	for _, s := range sections {
		text += "\n\n" + s["text"]
	}
	snapshot := map[string]any{
		"id": newUUID(), "role": "user",
		"content": []sdkproto.ContentBlock{sdkproto.TextBlock(text)},
		"source":  map[string]any{"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt", "form": "snapshot", "sections": sections},
	}
	r.surface(event(sdkproto.EventUserMessage, snapshot), nil)
	title := sdkproto.SessionTitleData{Title: sdkproto.FinalText(prompt.Content), MessageSeqs: []int64{promptSeq}}
	title.Source.Kind = "fallback"
	r.emit(sdkproto.EventSessionTitle, title)
	route := r.s.route
	var h sdkproto.RequestHeaderData
	h.Header.Config.Provider, h.Header.Config.Model = route.Provider, route.Model
	if route.MaxTokens > 0 {
		h.Header.Config.MaxTokens = &route.MaxTokens
	}
	h.Header.Config.ReasoningEffort = route.ReasoningEffort
	if route.ReasoningEffort == "" {
		h.Header.Config.ReasoningEffort = "high" // the adapter's default
		h.Header.AdapterDefaults = &struct {
			ReasoningEffort bool `json:"reasoningEffort,omitempty"`
			MaxTokens       bool `json:"maxTokens,omitempty"`
		}{ReasoningEffort: true}
	}
	h.Header.System = fmt.Sprintf("You are an AI agent powered by DeepSeek Harness.\n\nYou are a coding agent powered by the %s model. Your working directory is %s.", route.Model, route.Cwd)
	h.Reason = "initial"
	r.emit(sdkproto.EventRequestHeader, h)
	window := int64(1000000)
	r.emit(sdkproto.EventRequestContext, sdkproto.RequestContextData{Provider: route.Provider, Model: route.Model, ContextWindow: &window})
}

// chunk sends an assistant/chunk of the step in progress.
func (r *turnRun) chunk(c any) {
	seq := r.emit(sdkproto.EventAssistantChunk, chunkData{Turn: r.turn, Step: r.step, Chunk: c})
	r.msg.chunkSeqs = append(r.msg.chunkSeqs, seq)
}

// stream sends the deltas of a text or reasoning block, going on with the
// last block when it is of the same kind.
func (r *turnRun) stream(kind string, parts []string) {
	blocks := r.msg.blocks
	if len(blocks) == 0 || blocks[len(blocks)-1].kind != kind {
		r.msg.blocks = append(r.msg.blocks, block{kind: kind})
		r.chunk(chunkStart{Type: sdkproto.ChunkBlockStart, Index: len(r.msg.blocks) - 1, BlockType: kind})
	}
	index := len(r.msg.blocks) - 1
	delta := sdkproto.ChunkTextDelta
	if kind == actReasoning {
		delta = sdkproto.ChunkReasoningDelta
	}
	for _, part := range parts {
		r.msg.blocks[index].text.WriteString(part)
		r.msg.deltas++
		r.chunk(chunkDelta{Type: delta, Index: index, Text: part})
	}
}

// callBlock streams a tool-call block: block-start and one delta with all
// of its arguments.
func (r *turnRun) callBlock(id, name, arguments string) {
	index := len(r.msg.blocks)
	r.msg.blocks = append(r.msg.blocks, block{kind: sdkproto.BlockTypeToolCall, final: sdkproto.ToolCallBlock(id, name, arguments)})
	r.chunk(chunkStart{Type: sdkproto.ChunkBlockStart, Index: index, BlockType: sdkproto.BlockTypeToolCall})
	r.msg.deltas++
	r.chunk(chunkToolDelta{Type: sdkproto.ChunkToolCallDelta, Index: index, ID: id, Name: name, ArgumentsDelta: arguments})
}

// endMessage ends the model message in progress: every block-end (after
// all the deltas, as the runtime sends them), usage, finish, then the
// assistant/message whose sourceEventSeqs are the chunks'. It returns the
// message's content.
func (r *turnRun) endMessage(kind sdkproto.FinishKind) []sdkproto.ContentBlock {
	content := []sdkproto.ContentBlock{}
	for i := range r.msg.blocks {
		b := &r.msg.blocks[i]
		cb := b.final
		switch b.kind {
		case actText:
			cb = sdkproto.TextBlock(b.text.String())
		case actReasoning:
			cb = sdkproto.ReasoningBlock(b.text.String())
		}
		content = append(content, cb)
		r.chunk(chunkEnd{Type: sdkproto.ChunkBlockEnd, Index: i, Block: cb})
	}
	usage := sdkproto.TokenUsage{InputTokens: 10, OutputTokens: r.msg.deltas}
	if r.msg.usage != nil {
		usage = *r.msg.usage
	}
	r.chunk(chunkUsage{Type: sdkproto.ChunkUsage, Usage: usage})
	r.chunk(chunkFinish{Type: sdkproto.ChunkFinish, Reason: sdkproto.FinishReason{Kind: kind}})
	route := r.s.route
	reply := sdkproto.Message{ID: newUUID(), Role: "assistant", Content: content,
		Source: sdkproto.MessageSource{Kind: "model", Provider: route.Provider, Model: route.Model}}
	r.surface(event(sdkproto.EventAssistantMessage, sdkproto.AssistantMessageData{Turn: r.turn, Step: r.step, Message: reply, Usage: &usage}), r.msg.chunkSeqs)
	r.msg = message{}
	return content
}

// nextCallID returns the id of the turn's next tool call.
func (r *turnRun) nextCallID(id string) string {
	r.calls++
	if id == "" {
		id = fmt.Sprintf("call-%d", r.calls)
	}
	return id
}

// toolCall ends the message with a call of c and runs it.
func (r *turnRun) toolCall(c ToolCall) {
	id := r.nextCallID(c.ID)
	r.callBlock(id, c.Name, c.Arguments)
	r.endMessage(sdkproto.FinishToolCalls)
	callSeq := r.emit(sdkproto.EventToolCall, sdkproto.ToolCallData{Turn: r.turn, Step: r.step, CallID: id, Name: c.Name, Arguments: c.Arguments})
	r.toolResult(id, callSeq, c.Output, c.IsError, c.Error)
}

// toolResult sends the result of the call id (whose tool/call had seq
// callSeq), ends the step and starts the next.
func (r *turnRun) toolResult(id string, callSeq int64, output string, isError bool, toolErr *sdkproto.ToolError) {
	b := sdkproto.ToolResultBlock(id, []sdkproto.ContentBlock{sdkproto.TextBlock(output)}, isError)
	b.IsError = &isError
	result := sdkproto.Message{ID: newUUID(), Role: "user", Content: []sdkproto.ContentBlock{b},
		Source: sdkproto.MessageSource{Kind: "tool", CallID: id}}
	r.surface(event(sdkproto.EventToolResult, sdkproto.ToolResultData{Turn: r.turn, Step: r.step, Message: result, Error: toolErr}), []int64{callSeq})
	r.emit(sdkproto.EventStepEnd, sdkproto.StepData{Turn: r.turn, Step: r.step})
	r.step++
	r.emit(sdkproto.EventStepStart, sdkproto.StepData{Turn: r.turn, Step: r.step})
}

// subagent ends the message with a call of the tool subagent and runs the
// child turn in a child session.
func (r *turnRun) subagent(a action) {
	id := r.nextCallID("")
	args, _ := encode(map[string]any{"description": a.Label, "prompt": a.Prompt, "run_in_background": false})
	r.callBlock(id, "subagent", string(args))
	r.endMessage(sdkproto.FinishToolCalls)
	callSeq := r.emit(sdkproto.EventToolCall, sdkproto.ToolCallData{Turn: r.turn, Step: r.step, CallID: id, Name: "subagent", Arguments: string(args)})
	if r.err != nil {
		return
	}
	answer, ok := r.child(a)
	if r.err != nil {
		return
	}
	r.toolResult(id, callSeq, answer, !ok, nil)
}

// child runs a's child turn in a new child session, between
// subagent.started and subagent.finished, and returns its answer and
// whether it completed.
func (r *turnRun) child(a action) (answer string, ok bool) {
	ctx, em := r.p.ctx, r.em
	c := &session{id: newUUID(), route: r.s.route, child: true, next: 2, turns: 1, opened: true}
	if r.err = em.SubagentStarted(ctx, r.s.id, c.id); r.err != nil {
		return "", false
	}
	cr := &turnRun{p: r.p, em: em, s: c}
	msg := userMessage([]sdkproto.ContentBlock{sdkproto.TextBlock(a.Prompt)})
	removed := int64(1)
	cr.emit(sdkproto.EventPermissionPreset, map[string]string{"preset": "danger-full-access"})
	cr.send(event(sdkproto.EventAgentInboxSpliced, sdkproto.InboxSplicedData{Target: "next-turn", Start: 0, Inserted: []sdkproto.Message{msg}}))
	if cr.err == nil {
		cr.err = em.Status(ctx, c.id, sdkproto.StatusRunning)
	}
	cr.emit(sdkproto.EventTurnStart, sdkproto.TurnData{Turn: 1})
	cr.emit(sdkproto.EventAgentInboxSpliced, sdkproto.InboxSplicedData{Target: "next-turn", Start: 0, RemovedCount: &removed, Inserted: []sdkproto.Message{}})
	cr.emit(sdkproto.EventSubagentDescriptor, sdkproto.SubagentDescriptorData{Version: 2, Mode: "one-shot", Provider: "spawn", Label: a.Label})
	if r.err = cr.err; r.err != nil {
		return "", false
	}
	reason, last := r.p.play(em, c, msg, a.Child)
	if r.err = em.Status(ctx, c.id, sdkproto.StatusIdle); r.err != nil {
		return "", false
	}
	stop, status := sdkproto.StopReason(reason.Kind), sdkproto.RunOK
	if reason.Kind != sdkproto.TurnCompleted {
		status = sdkproto.RunError
	}
	if len(last) == 0 {
		last = nil // left out, never [] (docs/wire.md §3.7)
	}
	r.err = em.SubagentFinished(ctx, sdkproto.SubagentFinishedParams{
		Provider: "spawn", AgentID: c.id, ParentSessionID: r.s.id, ChildSessionID: c.id,
		Status: status, StopReason: stop, LastAssistantMessage: last,
	})
	answer = sdkproto.FinalText(last)
	if answer == "" && reason.Error != nil {
		answer = reason.Error.Message
	}
	return answer, status == sdkproto.RunOK
}

// pause waits d, or until Shutdown.
func (r *turnRun) pause(d time.Duration) {
	if r.err != nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.p.ctx.Done():
		r.err = r.p.ctx.Err()
	}
}

// ask sends the client a request and waits for its answer, which the
// frames record; a failure of the call itself (the connection ended)
// stops the turn.
func (r *turnRun) ask(method string, params json.RawMessage) {
	conn := r.p.conn.Load()
	if r.err != nil || conn == nil {
		return
	}
	var result json.RawMessage
	err := conn.Call(r.p.ctx, method, params, &result)
	if r.p.ctx.Err() != nil || conn.Err() != nil {
		r.err = fmt.Errorf("scripted: Ask(%q): %w", method, err)
	}
}
