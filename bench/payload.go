// Package bench holds side-by-side benchmarks of linerpc against the Go
// JSON-RPC libraries and a floor with no RPC machinery at all. The contender
// adapters live in the non-test files of this package (one per contender);
// the workloads are the *_test.go files. See README.md.
package bench

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
)

// The typed payloads, identical for every contender: params are decoded into
// these structs on the receiving side, results into them on the calling side.

// Prompt is the params of "session/prompt" (workloads 1, 2, 6) and of the
// "session/note" notification (workload 5).
type Prompt struct {
	SessionID     string  `json:"sessionId"`
	ContentBlocks []Block `json:"contentBlocks"`
}

// Block is a content block.
type Block struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Reply is the result of "session/prompt" and "blob/put".
type Reply struct {
	MessageID string `json:"messageId"`
}

// Blob is the params of "blob/put" (workload 4): a 1 MiB base64 string.
type Blob struct {
	Data string `json:"data"`
}

// Event is the params of the "session.event" notification (workload 3): an
// assistant/message event of about 1 KiB on the wire.
type Event struct {
	SessionID string    `json:"sessionId"`
	Event     EventBody `json:"event"`
}

// EventBody is the envelope of an event.
type EventBody struct {
	Type string    `json:"type"`
	Seq  int64     `json:"seq"`
	Time int64     `json:"time"`
	Data EventData `json:"data"`
}

// EventData is the data of an assistant/message event.
type EventData struct {
	Turn    int     `json:"turn"`
	Message Message `json:"message"`
}

// Message is an assistant message.
type Message struct {
	ID      string  `json:"id"`
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// Method and notification names on the wire.
const (
	methodPrompt   = "session/prompt"
	methodBlob     = "blob/put"
	notifyNote     = "session/note"
	notifyEvent    = "session.event"
	notifyOversize = "session/oversize" // the oversize frame: no handler anywhere
)

// helloPrompt is the round-trip params:
// {"sessionId":"main","contentBlocks":[{"type":"text","text":"hello"}]}.
var helloPrompt = Prompt{SessionID: "main", ContentBlocks: []Block{{Type: "text", Text: "hello"}}}

// m1 is the round-trip result: {"messageId":"m-1"}.
var m1 = Reply{MessageID: "m-1"}

// checkPrompt reports whether p is helloPrompt.
func checkPrompt(p *Prompt) error {
	if p.SessionID != "main" || len(p.ContentBlocks) != 1 ||
		p.ContentBlocks[0].Type != "text" || p.ContentBlocks[0].Text != "hello" {
		return fmt.Errorf("bad prompt params: %+v", *p)
	}
	return nil
}

func checkReply(r Reply, err error) error {
	if err != nil {
		return err
	}
	if r.MessageID != "m-1" {
		return fmt.Errorf("bad result: %+v", r)
	}
	return nil
}

// eventText is the ~800 characters of the assistant message.
var eventText = strings.Repeat("lorem ipsum ", 67)[:800]

// newEvent returns the event with sequence number seq.
func newEvent(seq int64) Event {
	return Event{
		SessionID: "main",
		Event: EventBody{
			Type: "assistant/message",
			Seq:  seq,
			Time: 1767225600000,
			Data: EventData{
				Turn: 1,
				Message: Message{
					ID:      "6f1d3c1e-7d1b-4b8e-9c55-0a1f2e3d4c5b",
					Role:    "assistant",
					Content: []Block{{Type: "text", Text: eventText}},
				},
			},
		},
	}
}

// checkEvent reports whether e is newEvent(e.Event.Seq), field by field.
func checkEvent(e *Event) error {
	b := &e.Event
	if e.SessionID != "main" || b.Type != "assistant/message" || b.Time != 1767225600000 ||
		b.Data.Turn != 1 || b.Data.Message.ID != "6f1d3c1e-7d1b-4b8e-9c55-0a1f2e3d4c5b" ||
		b.Data.Message.Role != "assistant" || len(b.Data.Message.Content) != 1 ||
		b.Data.Message.Content[0].Type != "text" || b.Data.Message.Content[0].Text != eventText {
		return fmt.Errorf("bad event %d", b.Seq)
	}
	return nil
}

// blobSize is the length of the base64 string of workload 4.
const blobSize = 1 << 20

// blobData is 1 MiB of base64 (of 768 KiB of seeded random bytes).
var blobData = func() string {
	raw := make([]byte, blobSize/4*3)
	r := rand.NewChaCha8([32]byte{'l', 'i', 'n', 'e', 'r', 'p', 'c'})
	r.Read(raw)
	return base64.StdEncoding.EncodeToString(raw)
}()

// checkBlob compares the length, both ends and one byte every 4 KiB of d
// with blobData: cheap enough not to weigh on the workload, strict enough
// that a truncated or shifted payload fails.
func checkBlob(d string) error {
	if len(d) != len(blobData) || d[:64] != blobData[:64] || d[len(d)-64:] != blobData[len(d)-64:] {
		return fmt.Errorf("bad blob: %d bytes", len(d))
	}
	for i := 0; i < len(d); i += 4096 {
		if d[i] != blobData[i] {
			return fmt.Errorf("bad blob at byte %d", i)
		}
	}
	return nil
}

// noteFrame is a valid "session/note" notification with the round-trip
// params, as written by a peer (workload 5).
const noteFrame = `{"jsonrpc":"2.0","method":"session/note","params":{"sessionId":"main","contentBlocks":[{"type":"text","text":"hello"}]}}`

// garbageLines are the malformed lines of workload 5, used in turn: a line
// of plain text as long as noteFrame (a log line that leaked into the
// stream), and noteFrame cut short (a frame interrupted mid-write), which a
// parser has to read almost to its end before rejecting it.
var garbageLines = [2]string{
	padTo("2026-01-01T00:00:00.000Z WARN child process wrote to stdout: retrying connection", len(noteFrame)),
	noteFrame[:len(noteFrame)-12],
}

func padTo(s string, n int) string {
	for len(s) < n {
		s += " ."
	}
	return s[:n]
}
