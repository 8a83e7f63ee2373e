package demo

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/sdkproto"
)

// This file is the turn script: what one turn of a session emits, for a
// plain prompt and for each command.

// FailureCode is the sdkproto.LLMFailure code of a /fail turn.
const FailureCode = "DEMO_FAILURE"

// runTurn plays the script of msg as turn number turn and returns the
// content of the last assistant message.
func (d *Runtime) runTurn(s *session, em *sdkproto.Emitter, msg sdkproto.Message, turn int64) []sdkproto.ContentBlock {
	t := &turnRun{d: d, s: s, em: em, turn: turn, step: 1}
	t.emit(sdkproto.EventStepStart, sdkproto.StepData{Turn: turn, Step: 1})
	t.emitSurface(sdkproto.Event{Type: sdkproto.EventUserMessage}, msg)
	if turn == 1 {
		t.emit(sdkproto.EventRequestHeader, requestHeader(s.route))
	}
	cmd, arg := parseCommand(sdkproto.FinalText(msg.Content))
	reason := sdkproto.TurnEndReason{Kind: sdkproto.TurnCompleted}
	switch cmd {
	case "/fail":
		failure := &sdkproto.LLMFailure{Message: arg, Code: FailureCode}
		t.chunk(map[string]any{"type": sdkproto.ChunkFinish, "reason": sdkproto.FinishReason{Kind: sdkproto.FinishError, Failure: failure}})
		t.emit(sdkproto.EventStepEnd, sdkproto.StepData{Turn: turn, Step: t.step})
		reason = sdkproto.TurnEndReason{Kind: sdkproto.TurnError, Error: failure}
	case "/tool":
		t.toolStep("echo", marshal(map[string]string{"text": arg}), func() string { return arg })
		t.answer("", "tool said: "+arg, d.opts.Delay)
	case "/subagent":
		var answer string
		t.toolStep("subagent", marshal(map[string]string{"prompt": arg}), func() string {
			answer = d.runChild(s, em, arg)
			return answer
		})
		t.answer("", "subagent said: "+answer, d.opts.Delay)
	case "/think":
		t.answer("Thinking about: "+arg, arg, d.opts.Delay)
	case "/slow":
		t.answer("", arg, d.opts.SlowDelay)
	default:
		t.answer("", arg, d.opts.Delay)
	}
	t.emit(sdkproto.EventTurnEnd, sdkproto.TurnEndData{Turn: turn, Reason: reason})
	return t.last
}

// runChild runs prompt as a subagent of parent, between subagent.started
// and subagent.finished, and returns the child's answer.
func (d *Runtime) runChild(parent *session, em *sdkproto.Emitter, prompt string) string {
	child := d.sessionOf(newUUID(), parent.route)
	em.SubagentStarted(d.ctx, parent.id, child.id)
	child.mu.Lock()
	child.receive(d.ctx, em, userMessage([]sdkproto.ContentBlock{sdkproto.TextBlock(prompt)}))
	child.running = true
	em.Status(d.ctx, child.id, sdkproto.StatusRunning)
	msg := child.claim(d.ctx, em)
	child.mu.Unlock()

	last := d.runTurn(child, em, msg, child.turn)

	child.mu.Lock()
	child.running = false
	em.Status(d.ctx, child.id, sdkproto.StatusIdle)
	child.mu.Unlock()
	em.SubagentFinished(d.ctx, sdkproto.SubagentFinishedParams{
		Provider: "spawn", AgentID: child.id, ParentSessionID: parent.id, ChildSessionID: child.id,
		Status: sdkproto.RunOK, StopReason: sdkproto.StopCompleted, LastAssistantMessage: last,
	})
	return sdkproto.FinalText(last)
}

// turnRun emits the events of one turn. Emit errors (shutdown began, the
// connection closed) stop the script: every later emit is skipped.
type turnRun struct {
	d          *Runtime
	s          *session
	em         *sdkproto.Emitter
	turn, step int64
	chunkSeqs  []int64 // of the current step
	last       []sdkproto.ContentBlock
	err        error
}

func (t *turnRun) emit(typ sdkproto.EventType, data any) {
	t.emitSurface(sdkproto.Event{Type: typ}, data)
}

// emitSurface appends ev with data and returns its seq (-1 when skipped).
func (t *turnRun) emitSurface(ev sdkproto.Event, data any) int64 {
	if t.err != nil {
		return -1
	}
	ev.Data = marshal(data)
	if ev.Type == sdkproto.EventUserMessage || ev.Type == sdkproto.EventAssistantMessage || ev.Type == sdkproto.EventToolResult {
		ev.SurfaceOp = sdkproto.AppendOp()
	}
	ev, t.err = t.em.AppendEvent(t.d.ctx, t.s.id, ev)
	return ev.Seq
}

func (t *turnRun) chunk(c map[string]any) {
	seq := t.emitSurface(sdkproto.Event{Type: sdkproto.EventAssistantChunk}, map[string]any{"turn": t.turn, "step": t.step, "chunk": c})
	t.chunkSeqs = append(t.chunkSeqs, seq)
}

// answer streams a model reply with an optional reasoning block and a
// text block, and ends the step.
func (t *turnRun) answer(reasoning, text string, delay time.Duration) {
	if text == "" {
		text = "(empty prompt)" // a model reply without content is an error upstream
	}
	var content []sdkproto.ContentBlock
	index := 0
	if reasoning != "" {
		t.stream(index, "reasoning", sdkproto.ChunkReasoningDelta, reasoning, delay)
		content = append(content, sdkproto.ReasoningBlock(reasoning))
		index++
	}
	t.stream(index, "text", sdkproto.ChunkTextDelta, text, delay)
	content = append(content, sdkproto.TextBlock(text))
	for i, b := range content { // all block-ends follow all deltas, as upstream
		t.chunk(map[string]any{"type": sdkproto.ChunkBlockEnd, "index": i, "block": b})
	}
	t.finishStep(content, sdkproto.FinishStop)
}

// stream sends block-start and the deltas of one block, delay apart.
func (t *turnRun) stream(index int, blockType string, delta sdkproto.ChunkType, text string, delay time.Duration) {
	t.chunk(map[string]any{"type": sdkproto.ChunkBlockStart, "index": index, "blockType": blockType})
	for _, part := range strings.SplitAfter(text, " ") {
		if delay > 0 {
			select {
			case <-t.d.ctx.Done():
				t.err = t.d.ctx.Err()
			case <-time.After(delay):
			}
		}
		t.chunk(map[string]any{"type": delta, "index": index, "text": part})
	}
}

// finishStep sends usage, finish and the assistant message, then step/end.
func (t *turnRun) finishStep(content []sdkproto.ContentBlock, kind sdkproto.FinishKind) {
	usage := sdkproto.TokenUsage{InputTokens: 10, OutputTokens: int64(len(t.chunkSeqs))}
	t.chunk(map[string]any{"type": sdkproto.ChunkUsage, "usage": usage})
	t.chunk(map[string]any{"type": sdkproto.ChunkFinish, "reason": sdkproto.FinishReason{Kind: kind}})
	msg := sdkproto.Message{ID: newUUID(), Role: "assistant", Content: content,
		Source: sdkproto.MessageSource{Kind: "model", Provider: t.s.route.Provider, Model: t.s.route.Model}}
	t.emitSurface(sdkproto.Event{Type: sdkproto.EventAssistantMessage, SourceEventSeqs: t.chunkSeqs},
		sdkproto.AssistantMessageData{Turn: t.turn, Step: t.step, Message: msg, Usage: &usage})
	t.last, t.chunkSeqs = content, nil
	if kind != sdkproto.FinishToolCalls {
		t.emit(sdkproto.EventStepEnd, sdkproto.StepData{Turn: t.turn, Step: t.step})
	}
}

// toolStep streams a call of tool name with args, runs it (run returns
// its output text), sends tool/call and tool/result, and starts the next
// step.
func (t *turnRun) toolStep(name string, args json.RawMessage, run func() string) {
	id := "call-" + newUUID()[:8]
	t.chunk(map[string]any{"type": sdkproto.ChunkBlockStart, "index": 0, "blockType": sdkproto.BlockTypeToolCall})
	t.chunk(map[string]any{"type": sdkproto.ChunkToolCallDelta, "index": 0, "id": id, "name": name, "argumentsDelta": string(args)})
	call := sdkproto.ToolCallBlock(id, name, string(args))
	t.chunk(map[string]any{"type": sdkproto.ChunkBlockEnd, "index": 0, "block": call})
	t.finishStep([]sdkproto.ContentBlock{call}, sdkproto.FinishToolCalls)
	t.emit(sdkproto.EventToolCall, sdkproto.ToolCallData{Turn: t.turn, Step: t.step, CallID: id, Name: name, Arguments: string(args)})
	out := ""
	if t.err == nil {
		out = run()
	}
	result := sdkproto.Message{ID: newUUID(), Role: "user",
		Content: []sdkproto.ContentBlock{sdkproto.ToolResultBlock(id, []sdkproto.ContentBlock{sdkproto.TextBlock(out)}, false)},
		Source:  sdkproto.MessageSource{Kind: "tool", CallID: id}}
	t.emitSurface(sdkproto.Event{Type: sdkproto.EventToolResult}, sdkproto.ToolResultData{Turn: t.turn, Step: t.step, Message: result})
	t.emit(sdkproto.EventStepEnd, sdkproto.StepData{Turn: t.turn, Step: t.step})
	t.step++
	t.emit(sdkproto.EventStepStart, sdkproto.StepData{Turn: t.turn, Step: t.step})
}

// requestHeader is the data of request/header for route.
func requestHeader(r sdkproto.Route) map[string]any {
	config := map[string]any{"provider": r.Provider, "model": r.Model}
	if r.ReasoningEffort != "" {
		config["reasoningEffort"] = r.ReasoningEffort
	}
	if r.MaxTokens > 0 {
		config["maxTokens"] = r.MaxTokens
	}
	return map[string]any{"header": map[string]any{"config": config}, "reason": "initial"}
}

// parseCommand splits "/cmd rest" into the command and its argument; text
// without a known command is all argument.
func parseCommand(text string) (cmd, arg string) {
	for _, c := range []string{"/think", "/tool", "/subagent", "/fail", "/slow"} {
		if text == c || strings.HasPrefix(text, c+" ") {
			return c, strings.TrimPrefix(text[len(c):], " ")
		}
	}
	return "", text
}

// marshal encodes v compactly without HTML escaping, as JSON.stringify
// does, for the event data the script builds (which cannot fail to encode).
func marshal(v any) json.RawMessage {
	b, err := wire.Stringify(v)
	if err != nil {
		panic("demo: " + err.Error())
	}
	return b
}
