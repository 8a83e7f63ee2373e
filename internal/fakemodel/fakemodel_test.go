package fakemodel

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// post sends a chat-completions request and returns the response.
func post(t *testing.T, s *Server, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role             string  `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage map[string]any `json:"usage"`
}

// String shows a chunk as JSON, so that failures print its values (the
// pointer members included), not addresses.
func (c chunk) String() string { return jsonText(c) }

// jsonText is v as JSON, for failure messages.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v (%v)", v, err)
	}
	return string(b)
}

// readSSE checks the SSE framing strictly ("data: " line, blank line) and
// returns the decoded chunks; it fails unless the stream ends with [DONE].
func readSSE(t *testing.T, resp *http.Response) []chunk {
	t.Helper()
	if got := resp.Header.Get("Content-Type"); got != "text/event-stream" {
		t.Fatalf("content-type %q", got)
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	events := strings.Split(string(raw), "\n\n")
	if last := events[len(events)-1]; last != "" {
		t.Fatalf("stream does not end with a blank line: %q", last)
	}
	events = events[:len(events)-1]
	if events[len(events)-1] != "data: [DONE]" {
		t.Fatalf("last event %q, want data: [DONE]", events[len(events)-1])
	}
	var chunks []chunk
	for _, e := range events[:len(events)-1] {
		data, ok := strings.CutPrefix(e, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("malformed event %q", e)
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("event %q: %v", e, err)
		}
		if c.Object != "chat.completion.chunk" || len(c.Choices) != 1 {
			t.Fatalf("bad chunk %q", data)
		}
		chunks = append(chunks, c)
	}
	return chunks
}

func finish(c chunk) string {
	if c.Choices[0].FinishReason == nil {
		return ""
	}
	return *c.Choices[0].FinishReason
}

func TestTextSSE(t *testing.T) {
	s := New(Text("hello there, world"))
	defer s.Close()
	chunks := readSSE(t, post(t, s, `{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if len(chunks) < 4 {
		t.Fatalf("%d chunks, want role + several deltas + final", len(chunks))
	}
	if chunks[0].Choices[0].Delta.Role != "assistant" {
		t.Errorf("first chunk is not the role delta: %v", chunks[0])
	}
	var text strings.Builder
	for i, c := range chunks {
		if c.Model != "m1" {
			t.Errorf("chunk %d model %q", i, c.Model)
		}
		if c.Choices[0].Delta.Content != nil {
			text.WriteString(*c.Choices[0].Delta.Content)
		}
		if i < len(chunks)-1 && (finish(c) != "" || c.Usage != nil) {
			t.Errorf("chunk %d has finish/usage before the end", i)
		}
	}
	if text.String() != "hello there, world" {
		t.Errorf("text %q", text.String())
	}
	last := chunks[len(chunks)-1]
	if finish(last) != FinishStop {
		t.Errorf("finish %q", finish(last))
	}
	if last.Usage["prompt_tokens"] != float64(10) || last.Usage["completion_tokens"] != float64(3) {
		t.Errorf("usage %v", last.Usage)
	}
}

func TestReasoningToolCallMaxTokens(t *testing.T) {
	s := New(
		Reasoning("let me think", "answer").WithUsage(Usage{PromptTokens: 7, CompletionTokens: 5, ReasoningTokens: 3, CachedTokens: 2}),
		ToolCall("call-1", "bash", `{"command":"echo hi"}`),
		MaxTokens("cut off"),
	)
	defer s.Close()

	chunks := readSSE(t, post(t, s, `{"stream":true}`))
	var thinking, text string
	for _, c := range chunks {
		if d := c.Choices[0].Delta; d.ReasoningContent != nil {
			thinking += *d.ReasoningContent
		}
		if d := c.Choices[0].Delta; d.Content != nil {
			if thinking != "let me think" {
				t.Errorf("content before reasoning finished")
			}
			text += *d.Content
		}
	}
	if thinking != "let me think" || text != "answer" {
		t.Errorf("thinking %q text %q", thinking, text)
	}
	u := chunks[len(chunks)-1].Usage
	if u["prompt_cache_hit_tokens"] != float64(2) || u["completion_tokens_details"].(map[string]any)["reasoning_tokens"] != float64(3) {
		t.Errorf("usage %v", u)
	}

	chunks = readSSE(t, post(t, s, `{"stream":true}`))
	var calls int
	for _, c := range chunks {
		for _, tc := range c.Choices[0].Delta.ToolCalls {
			calls++
			if tc.ID != "call-1" || tc.Type != "function" || tc.Function.Name != "bash" || tc.Function.Arguments != `{"command":"echo hi"}` {
				t.Errorf("tool call %+v", tc)
			}
		}
	}
	if calls != 1 || finish(chunks[len(chunks)-1]) != FinishToolCalls {
		t.Errorf("calls %d finish %q", calls, finish(chunks[len(chunks)-1]))
	}

	chunks = readSSE(t, post(t, s, `{"stream":true}`))
	if finish(chunks[len(chunks)-1]) != FinishLength {
		t.Errorf("finish %q", finish(chunks[len(chunks)-1]))
	}
}

func TestErrorReplyAndExhaustion(t *testing.T) {
	s := New(Error(400, "bad things", "invalid_request_error"))
	defer s.Close()
	for i, want := range []struct {
		status int
		msg    string
	}{{400, "bad things"}, {500, "fakemodel: script exhausted"}} {
		resp := post(t, s, `{}`)
		if resp.StatusCode != want.status {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
		var body struct {
			Error struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Code    *string `json:"code"`
			} `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		if body.Error.Message != want.msg || body.Error.Type == "" || body.Error.Code == nil {
			t.Errorf("request %d: body %s", i, jsonText(body))
		}
	}
}

func TestRequestsRecordedInOrder(t *testing.T) {
	s := New(Text("one"), Text("two"))
	defer s.Close()
	for _, body := range []string{
		`{"model":"a","stream":true,"max_tokens":4096,"messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"first"}]}],"tools":[{"type":"function","function":{"name":"bash","parameters":{}}}]}`,
		`{"model":"b","stream":true,"messages":[{"role":"tool","tool_call_id":"c1","content":"out"}]}`,
	} {
		readSSE(t, post(t, s, body))
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	r0, r1 := reqs[0], reqs[1]
	if r0.Index != 0 || r0.Path != "/chat/completions" || r0.Chat.Model != "a" || !r0.Chat.Stream {
		t.Errorf("request 0: %+v", r0)
	}
	if r0.Chat.MaxTokens == nil || *r0.Chat.MaxTokens != 4096 || r1.Chat.MaxTokens != nil {
		t.Errorf("max_tokens not decoded")
	}
	if r0.Chat.LastUserText() != "first" || r0.Chat.Messages[0].Text() != "sys" {
		t.Errorf("messages %+v", r0.Chat.Messages)
	}
	if names := r0.Chat.ToolNames(); len(names) != 1 || names[0] != "bash" {
		t.Errorf("tools %v", names)
	}
	if r0.Body["model"] != "a" {
		t.Errorf("generic body %v", r0.Body)
	}
	if m := r1.Chat.LastMessage(); m.Role != "tool" || m.ToolCallID != "c1" || m.Text() != "out" {
		t.Errorf("request 1 last message %+v", m)
	}
}

func TestChooser(t *testing.T) {
	s := NewChooser(func(r Request) Reply { return Text("echo " + r.Chat.LastUserText()) })
	defer s.Close()
	chunks := readSSE(t, post(t, s, `{"messages":[{"role":"user","content":"ping"}]}`))
	var text string
	for _, c := range chunks {
		if c.Choices[0].Delta.Content != nil {
			text += *c.Choices[0].Delta.Content
		}
	}
	if text != "echo ping" {
		t.Errorf("text %q", text)
	}
}

func TestStallUntilAndClose(t *testing.T) {
	release := make(chan struct{})
	s := New(Text("slow reply").StallUntil(release), Text("stuck").StallUntil(make(chan struct{})))
	defer s.Close()

	resp := post(t, s, `{}`)
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, `"role":"assistant"`) {
		t.Fatalf("first line %q %v", line, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		rest, _ := io.ReadAll(br)
		got <- string(rest)
	}()
	select {
	case r := <-got:
		t.Fatalf("stream finished before release: %q", r)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if rest := <-got; !strings.HasSuffix(rest, "data: [DONE]\n\n") {
		t.Fatalf("rest %q", rest)
	}

	// A reply stalled forever must not keep Close from returning.
	resp2 := post(t, s, `{}`)
	_, _ = bufio.NewReader(resp2.Body).ReadString('\n')
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Close blocked on a stalled reply")
	}
	s.Close() // idempotent
}

func TestUserTexts(t *testing.T) {
	c := ChatRequest{Messages: []Message{
		{Role: "system", Content: json.RawMessage(`"sys"`)},
		{Role: "user", Content: json.RawMessage(`"prompt alpha"`)},
		{Role: "user", Content: json.RawMessage(`[{"type":"text","text":"snap"},{"type":"text","text":"shot"}]`)},
	}}
	if got := c.UserTexts(); len(got) != 2 || got[0] != "prompt alpha" || got[1] != "snapshot" {
		t.Errorf("UserTexts %q", got)
	}
	if !c.HasUserText("alpha") || c.HasUserText("sys") || c.LastUserText() != "snapshot" {
		t.Errorf("HasUserText/LastUserText wrong")
	}
}
