// Package fakemodel is a scripted, OpenAI-compatible chat-completions server
// for tests that drive a real DeepSeek Harness runtime without a model key.
//
// A Server listens on 127.0.0.1 and answers POST /chat/completions with a
// text/event-stream of "data: {chat.completion.chunk}" events ending in
// "data: [DONE]" (docs/wire.md §7). Each request is answered by the next
// Reply of the script, or by a Chooser that looks at the request. Every
// request is recorded, decoded, for later assertions.
//
//	srv := fakemodel.New(fakemodel.ToolCall("call-1", "bash", `{"command":"echo hi"}`), fakemodel.Text("done"))
//	defer srv.Close()
//	// start the runtime with DEEPSEEK_BASE_URL=srv.URL()
//
// The package uses the standard library only.
package fakemodel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Created is the fixed "created" timestamp (Unix seconds) written into every
// chunk, so that replies are deterministic.
const Created = 1767225600

// Finish reasons written by the replies of this package.
const (
	FinishStop      = "stop"
	FinishLength    = "length"
	FinishToolCalls = "tool_calls"
)

// Usage is the token accounting sent with the final chunk of a reply. Zero
// optional members are omitted from the wire.
type Usage struct {
	// PromptTokens is usage.prompt_tokens (cache hits included).
	PromptTokens int
	// CompletionTokens is usage.completion_tokens.
	CompletionTokens int
	// ReasoningTokens, when non-zero, is sent as
	// usage.completion_tokens_details.reasoning_tokens.
	ReasoningTokens int
	// CachedTokens, when non-zero, is sent as usage.prompt_cache_hit_tokens.
	CachedTokens int
}

func (u Usage) wire() map[string]any {
	m := map[string]any{
		"prompt_tokens":     u.PromptTokens,
		"completion_tokens": u.CompletionTokens,
		"total_tokens":      u.PromptTokens + u.CompletionTokens,
	}
	if u.ReasoningTokens != 0 {
		m["completion_tokens_details"] = map[string]any{"reasoning_tokens": u.ReasoningTokens}
	}
	if u.CachedTokens != 0 {
		m["prompt_cache_hit_tokens"] = u.CachedTokens
		m["prompt_cache_miss_tokens"] = u.PromptTokens - u.CachedTokens
	}
	return m
}

// Reply is one scripted answer to a chat-completions request. Build it with
// Text, Reasoning, ToolCall, MaxTokens or Error and refine it with the With*
// methods; a Reply is a value and the methods return modified copies.
type Reply struct {
	status       int // non-zero: an HTTP error reply
	errMessage   string
	errCode      string
	reasoning    []string
	content      []string
	toolCalls    []toolCall
	finishReason string
	usage        *Usage
	release      <-chan struct{}
}

type toolCall struct {
	id, name, arguments string
}

// Text is a reply whose content is s, streamed as a few content deltas, with
// finish_reason "stop".
func Text(s string) Reply {
	return Reply{content: split(s), finishReason: FinishStop}
}

// Reasoning is a reply that streams thinking as reasoning_content deltas,
// then text as content deltas, with finish_reason "stop".
func Reasoning(thinking, text string) Reply {
	return Reply{reasoning: split(thinking), content: split(text), finishReason: FinishStop}
}

// ToolCall is a reply that calls one tool: a tool_calls delta carrying id,
// function name and the complete argumentsJSON string, then finish_reason
// "tool_calls". Add more calls with WithToolCall.
func ToolCall(id, name, argumentsJSON string) Reply {
	return Reply{toolCalls: []toolCall{{id, name, argumentsJSON}}, finishReason: FinishToolCalls}
}

// MaxTokens is a reply that streams text and stops with finish_reason
// "length", as a model does when it reaches max_tokens.
func MaxTokens(text string) Reply {
	return Reply{content: split(text), finishReason: FinishLength}
}

// Error is an HTTP error reply: status httpStatus with the OpenAI-style body
// {"error":{"message":message,"type":"invalid_request_error","param":null,"code":code}}.
func Error(httpStatus int, message, code string) Reply {
	return Reply{status: httpStatus, errMessage: message, errCode: code}
}

// WithUsage returns a copy of r whose final chunk carries u instead of the
// default usage (prompt_tokens 10, completion_tokens = number of deltas).
func (r Reply) WithUsage(u Usage) Reply {
	r.usage = &u
	return r
}

// WithToolCall returns a copy of r with one more tool call appended (index
// increasing) and finish_reason "tool_calls".
func (r Reply) WithToolCall(id, name, argumentsJSON string) Reply {
	r.toolCalls = append(append([]toolCall(nil), r.toolCalls...), toolCall{id, name, argumentsJSON})
	r.finishReason = FinishToolCalls
	return r
}

// WithFinishReason returns a copy of r that ends with the given
// finish_reason (any string, e.g. "content_filter").
func (r Reply) WithFinishReason(reason string) Reply {
	r.finishReason = reason
	return r
}

// StallUntil returns a copy of r that sends its response headers and first
// delta, then blocks until release is closed (or the client goes away, or
// the Server is closed) before sending the rest. Use it to keep a turn in
// flight, e.g. to shut a runtime down mid-turn.
func (r Reply) StallUntil(release <-chan struct{}) Reply {
	r.release = release
	return r
}

// split cuts s into up to three pieces on rune boundaries.
func split(s string) []string {
	runes := []rune(s)
	if len(runes) < 3 {
		if s == "" {
			return nil
		}
		return []string{s}
	}
	n := len(runes)
	a, b := n/3, 2*n/3
	return []string{string(runes[:a]), string(runes[a:b]), string(runes[b:])}
}

// Request is one recorded chat-completions request.
type Request struct {
	// Index is the 0-based arrival order.
	Index int
	// Method and Path are the HTTP method and URL path.
	Method, Path string
	// Header is a copy of the request headers.
	Header http.Header
	// Raw is the request body as received.
	Raw []byte
	// Body is Raw decoded as a generic JSON object (nil if it was not one).
	Body map[string]any
	// Chat is Raw decoded into the chat-completions request shape.
	Chat ChatRequest
}

// ChatRequest is the decoded body of a chat-completions request. Members
// that may be absent are pointers or nil slices.
type ChatRequest struct {
	// Model is "model".
	Model string `json:"model"`
	// Messages is "messages"; messages[0] is the system prompt.
	Messages []Message `json:"messages"`
	// Stream is "stream".
	Stream bool `json:"stream"`
	// MaxTokens is "max_tokens" (nil when absent).
	MaxTokens *int64 `json:"max_tokens"`
	// Tools is "tools".
	Tools []Tool `json:"tools"`
}

// Message is one entry of ChatRequest.Messages.
type Message struct {
	// Role is "system", "user", "assistant" or "tool".
	Role string `json:"role"`
	// Content is the raw "content" member: a string, an array of parts, or null.
	Content json.RawMessage `json:"content"`
	// ReasoningContent is "reasoning_content" of assistant messages.
	ReasoningContent string `json:"reasoning_content"`
	// ToolCalls is "tool_calls" of assistant messages.
	ToolCalls []MessageToolCall `json:"tool_calls"`
	// ToolCallID is "tool_call_id" of tool messages.
	ToolCallID string `json:"tool_call_id"`
}

// MessageToolCall is one tool call inside an assistant message.
type MessageToolCall struct {
	// ID is "id".
	ID string `json:"id"`
	// Type is "type" ("function").
	Type string `json:"type"`
	// Function holds the called function's name and JSON arguments.
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is one entry of ChatRequest.Tools.
type Tool struct {
	// Type is "type" ("function").
	Type string `json:"type"`
	// Function describes the tool.
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// Text returns the message content as text: the string itself, or the
// concatenated "text" members of an array of parts.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// LastMessage returns the last message of the request (zero if none).
func (c ChatRequest) LastMessage() Message {
	if len(c.Messages) == 0 {
		return Message{}
	}
	return c.Messages[len(c.Messages)-1]
}

// UserTexts returns the texts of all messages with role "user", in order.
// Note that the real runtime appends a runtime-context snapshot as a user
// message after the prompt, so the prompt is not necessarily the last one.
func (c ChatRequest) UserTexts() []string {
	var out []string
	for _, m := range c.Messages {
		if m.Role == "user" {
			out = append(out, m.Text())
		}
	}
	return out
}

// HasUserText reports whether any user message contains substr.
func (c ChatRequest) HasUserText(substr string) bool {
	for _, s := range c.UserTexts() {
		if strings.Contains(s, substr) {
			return true
		}
	}
	return false
}

// LastUserText returns the text of the last message with role "user" (see
// UserTexts for why that may not be the prompt).
func (c ChatRequest) LastUserText() string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == "user" {
			return c.Messages[i].Text()
		}
	}
	return ""
}

// ToolNames returns the function names of the offered tools, in order.
func (c ChatRequest) ToolNames() []string {
	names := make([]string, 0, len(c.Tools))
	for _, t := range c.Tools {
		names = append(names, t.Function.Name)
	}
	return names
}

// Chooser picks the reply for a request. It is called once per request,
// serially, with the recorded request.
type Chooser func(req Request) Reply

// Server is a running fake model. Its methods are safe for concurrent use.
type Server struct {
	srv     *httptest.Server
	choose  Chooser
	closing chan struct{}

	mu       sync.Mutex
	script   []Reply
	requests []Request
	arrived  chan struct{} // closed and replaced on every request
	closed   bool
}

// New starts a Server whose requests are answered by script, in request
// order. A request arriving after the script is used up gets an HTTP 500
// error reply ("fakemodel: script exhausted").
func New(script ...Reply) *Server {
	s := newServer()
	s.script = append([]Reply(nil), script...)
	return s
}

// NewChooser starts a Server whose requests are answered by choose.
func NewChooser(choose Chooser) *Server {
	s := newServer()
	s.choose = choose
	return s
}

func newServer() *Server {
	s := &Server{closing: make(chan struct{}), arrived: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve)) // listens on 127.0.0.1:0
	return s
}

// URL returns the base URL, "http://127.0.0.1:<port>" without a trailing
// slash: the value for DEEPSEEK_BASE_URL.
func (s *Server) URL() string { return s.srv.URL }

// Close releases stalled replies, stops the server and waits for its
// handlers to return. It is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Requests returns a copy of the requests recorded so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// WaitRequests blocks until at least n requests have arrived or ctx ends,
// and returns the recorded requests.
func (s *Server) WaitRequests(ctx context.Context, n int) ([]Request, error) {
	for {
		s.mu.Lock()
		if len(s.requests) >= n {
			reqs := append([]Request(nil), s.requests...)
			s.mu.Unlock()
			return reqs, nil
		}
		ch := s.arrived
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return s.Requests(), fmt.Errorf("fakemodel: waiting for %d requests: %w", n, ctx.Err())
		}
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: raw}
	_ = json.Unmarshal(raw, &req.Body)
	_ = json.Unmarshal(raw, &req.Chat)

	s.mu.Lock()
	req.Index = len(s.requests)
	s.requests = append(s.requests, req)
	close(s.arrived)
	s.arrived = make(chan struct{})
	var reply Reply
	switch {
	case r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions"):
		reply = Error(http.StatusNotFound, "fakemodel: only POST /chat/completions is served", "not_found")
	case s.choose != nil:
		reply = s.choose(req)
	case len(s.script) > 0:
		reply = s.script[0]
		s.script = s.script[1:]
	default:
		reply = Error(http.StatusInternalServerError, "fakemodel: script exhausted", "script_exhausted")
	}
	s.mu.Unlock()

	if reply.status != 0 {
		writeError(w, reply)
		return
	}
	s.stream(w, r, req, reply)
}

func writeError(w http.ResponseWriter, reply Reply) {
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": reply.errMessage,
		"type":    "invalid_request_error",
		"param":   nil,
		"code":    reply.errCode,
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(reply.status)
	_, _ = w.Write(body)
}

// stream writes the SSE answer of a success reply.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req Request, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)

	id := fmt.Sprintf("chatcmpl-fake-%d", req.Index)
	model := req.Chat.Model
	if model == "" {
		model = "fake-model"
	}
	chunk := func(delta map[string]any, finish any, usage map[string]any) []byte {
		c := map[string]any{
			"id":      id,
			"object":  "chat.completion.chunk",
			"created": Created,
			"model":   model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
		if usage != nil {
			c["usage"] = usage
		}
		b, _ := json.Marshal(c)
		return b
	}

	var events [][]byte
	events = append(events, chunk(map[string]any{"role": "assistant", "content": nil, "reasoning_content": ""}, nil, nil))
	deltas := 0
	for _, t := range reply.reasoning {
		events = append(events, chunk(map[string]any{"reasoning_content": t}, nil, nil))
		deltas++
	}
	for _, t := range reply.content {
		events = append(events, chunk(map[string]any{"content": t}, nil, nil))
		deltas++
	}
	for i, tc := range reply.toolCalls {
		events = append(events, chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index":    i,
			"id":       tc.id,
			"type":     "function",
			"function": map[string]any{"name": tc.name, "arguments": tc.arguments},
		}}}, nil, nil))
		deltas++
	}
	usage := Usage{PromptTokens: 10, CompletionTokens: deltas}
	if reply.usage != nil {
		usage = *reply.usage
	}
	events = append(events, chunk(map[string]any{"content": ""}, reply.finishReason, usage.wire()))
	events = append(events, []byte("[DONE]"))

	for i, e := range events {
		var buf bytes.Buffer
		buf.WriteString("data: ")
		buf.Write(e)
		buf.WriteString("\n\n")
		if _, err := w.Write(buf.Bytes()); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		// Stall after the role delta and the first real delta (if any).
		if reply.release != nil && i == min(1, len(events)-3) {
			select {
			case <-reply.release:
			case <-r.Context().Done():
				return
			case <-s.closing:
				return
			}
		}
	}
}
