package sdkproto_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/linerpc/linerpc/internal/vectortest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/sdkproto"
)

// The runtime-side wire vectors (given.receiver == "runtime", revisions
// all and newer) replayed against a Server. What is generic lives in the
// Server; what a deployment decides (which adapters exist, route
// resolution, the agent registry, teardown steps, the image store) lives
// in vecRuntime and vecStore below, configured from each vector's given.

// vecRuntime reproduces the deployment the vectors describe.
type vecRuntime struct {
	providers []string // adapters mounted; deepseek-official mounts itself
	detached  string   // a session whose agent another component disposed
	failures  int      // teardown steps that fail

	mu       sync.Mutex
	sessions map[string]bool
	content  json.RawMessage // of the last prompt, as stored
	shutdown int
}

var vecEfforts = []string{"off", "low", "high", "max"}

func (r *vecRuntime) Initialize(ctx context.Context, req sdkproto.InitializeRequest) error {
	provider := sdkproto.Interpolate(req.Params.Member("provider"))
	if !slices.Contains(r.providers, provider) && provider != "deepseek-official" {
		return fmt.Errorf("no adapter registered for provider \"%s\"", provider)
	}
	if req.Params.Member("model") == nil {
		return fmt.Errorf("provider \"%s\" has no model \"undefined\"", provider)
	}
	if e := req.Route.ReasoningEffort; e != "" && !slices.Contains(vecEfforts, e) {
		return fmt.Errorf("provider \"%s\" model \"%s\" does not support reasoning effort \"%s\"", provider, req.Route.Model, e)
	}
	return nil
}

func (r *vecRuntime) OpenSession(ctx context.Context, id string, route sdkproto.Route) error {
	if id == r.detached {
		return errors.New("session agent was disposed outside the server: " + id)
	}
	return nil
}

func (r *vecRuntime) Prompt(ctx context.Context, req sdkproto.PromptRequest) (sdkproto.SessionPromptResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	content, _ := json.Marshal(req.Content)
	r.content = content
	id := "6f1d2c3a-0b4e-4f5a-8c6d-7e8f9a0b1c2d"
	msg := json.RawMessage(`{"id":"` + id + `","role":"user","content":` + string(content) + `,"source":{"kind":"user"}}`)
	em := req.Emitter
	if _, err := em.Append(ctx, req.SessionID, sdkproto.EventAgentInboxSpliced, map[string]any{
		"target": "next-turn", "start": 0, "inserted": []json.RawMessage{msg},
	}); err != nil {
		return sdkproto.SessionPromptResult{}, err
	}
	if !r.sessions[req.SessionID] {
		r.sessions[req.SessionID] = true
		em.Status(ctx, req.SessionID, sdkproto.StatusRunning)
	}
	return sdkproto.SessionPromptResult{MessageID: id}, nil
}

func (r *vecRuntime) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.shutdown++
	r.mu.Unlock()
	var errs []error
	for i := range r.failures {
		errs = append(errs, fmt.Errorf("teardown step %d failed", i+1))
	}
	return errors.Join(errs...)
}

// vecStore is a local attachment store: it sniffs the image type from
// the bytes, as upstream's local store does, with its messages.
type vecStore struct{ accepted []string }

func (s vecStore) AcceptedMediaTypes() []string               { return s.accepted }
func (s vecStore) CheckBatch(uploads []sdkproto.Upload) error { return nil }

func (s vecStore) Store(ctx context.Context, uploads []sdkproto.Upload) ([]sdkproto.ImageAttachmentRef, error) {
	var refs []sdkproto.ImageAttachmentRef
	for _, u := range uploads {
		kind, w, h, ok := sniffImage(u.Data)
		if !ok {
			return nil, errors.New("Unsupported or malformed image data.")
		}
		if kind != u.MimeType {
			return nil, errors.New("Declared image type does not match its bytes.")
		}
		refs = append(refs, sdkproto.ImageAttachmentRef{
			AttachmentID: fmt.Sprintf("sha256:%064x", len(u.Data)), MediaType: kind,
			Bytes: int64(len(u.Data)), Width: w, Height: h,
		})
	}
	return refs, nil
}

// sniffImage recognises the four accepted formats by their bytes.
func sniffImage(b []byte) (mediaType string, w, h int64, ok bool) {
	if len(b) >= 30 && string(b[:4]) == "RIFF" && string(b[8:16]) == "WEBPVP8L" {
		bits := binary.LittleEndian.Uint32(b[21:25])
		return "image/webp", int64(bits&0x3fff) + 1, int64(bits>>14&0x3fff) + 1, true
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return "", 0, 0, false
	}
	return "image/" + format, int64(cfg.Width), int64(cfg.Height), true
}

// vecServer builds the Server and runtime a vector's given describes and
// brings them into its state.
func vecServer(t *testing.T, v vectortest.Vector) (*sdkproto.Server, *rpc.Registry, *vecRuntime) {
	rt := &vecRuntime{sessions: map[string]bool{}, detached: v.GivenString("agentDetached")}
	shuttingDown := v.GivenBool("shuttingDown")
	// Two catalogue entries of errors.ndjson state their precondition only
	// in their name: their given lacks shuttingDown and agentDetached.
	switch v.Name {
	case "catalogue-shutting-down":
		shuttingDown = true
	case "catalogue-agent-disposed":
		rt.detached = "s"
	}
	json.Unmarshal(v.Given["providers"], &rt.providers)
	json.Unmarshal(v.Given["teardownFailures"], &rt.failures)
	opts := &sdkproto.ServerOptions{}
	if raw, ok := v.Given["attachmentStore"]; !ok || string(raw) == "true" {
		store := vecStore{}
		json.Unmarshal(v.Given["acceptedMediaTypes"], &store.accepted)
		opts.Attachments = store
	}
	srv := sdkproto.NewServer(rt, opts)
	reg := rpc.NewRegistry()
	srv.Register(reg)
	var pre []string
	if v.GivenBool("initialized") {
		pre = append(pre, `{"jsonrpc":"2.0","id":"pre-1","method":"initialize","params":{"cwd":"/srv/project","provider":"deepseek-official","model":"deepseek-v4-flash"}}`)
	}
	if shuttingDown {
		pre = append(pre, `{"jsonrpc":"2.0","id":"pre-2","method":"shutdown"}`)
	}
	// One connection per step, so that each settles before the next.
	for _, line := range pre {
		frames := srvExchange(t, reg, [][]byte{[]byte(line + "\n")})
		if len(frames) != 1 || bytes.Contains(frames[0], []byte(`"error"`)) {
			t.Fatalf("precondition %s: %s", line, frames)
		}
	}
	return srv, reg, rt
}

// srvExchange feeds chunks to a connection served by reg until the input
// ends and every handler answered, and returns the frames written.
func srvExchange(t *testing.T, reg *rpc.Registry, chunks [][]byte) []json.RawMessage {
	t.Helper()
	var out rpctest.LockedBuffer
	c := rpc.NewConn(rpctest.Chunks(chunks...), &out, &rpc.Options{Handler: reg})
	c.Start()
	c.Wait()
	c.Close()
	var frames []json.RawMessage
	for _, line := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
		if len(line) > 0 {
			frames = append(frames, json.RawMessage(line))
		}
	}
	return frames
}

func TestServerVectors(t *testing.T) {
	want := map[string]int{"requests.ndjson": 58, "errors.ndjson": 9, "content-blocks.ndjson": 36, "framing.ndjson": 60}
	for file, expected := range want {
		vs, err := vectortest.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		ran := 0
		for _, v := range vs {
			if v.GivenString("receiver") != "runtime" || !v.Targets() {
				continue
			}
			ran++
			t.Run(strings.TrimSuffix(file, ".ndjson")+"/"+v.Name, func(t *testing.T) { runServerVector(t, v) })
		}
		if ran < expected {
			t.Errorf("%s: ran %d runtime vectors, want %d", file, ran, expected)
		}
		t.Logf("%s: %d runtime vectors", file, ran)
	}
}

func runServerVector(t *testing.T, v vectortest.Vector) {
	_, reg, rt := vecServer(t, v)
	chunks, err := v.Chunks()
	if err != nil {
		t.Fatal(err)
	}
	frames := srvExchange(t, reg, chunks)
	var replies, before []json.RawMessage
	for _, f := range frames {
		var m map[string]json.RawMessage
		json.Unmarshal(f, &m)
		if _, isNote := m["method"]; isNote {
			if len(replies) == 0 {
				before = append(before, f)
			}
			continue
		}
		replies = append(replies, f)
	}
	e := v.Expect
	switch {
	case e["replyRaw"] != nil:
		var raw string
		json.Unmarshal(e["replyRaw"], &raw)
		srvMatchOne(t, json.RawMessage(raw), replies)
	case e["replies"] != nil:
		var wants []json.RawMessage
		json.Unmarshal(e["replies"], &wants)
		if len(replies) != len(wants) {
			t.Fatalf("wrote %d replies, want %d: %s", len(replies), len(wants), replies)
		}
		for _, w := range wants {
			if !slices.ContainsFunc(replies, func(g json.RawMessage) bool { return vectortest.Match(w, g) == nil }) {
				t.Fatalf("no reply matches %s; wrote %s", w, replies)
			}
		}
	case string(e["reply"]) == "null" || e["reply"] == nil:
		if len(frames) != 0 {
			t.Fatalf("wrote %s, want nothing", frames)
		}
	default:
		srvMatchOne(t, e["reply"], replies)
	}
	if raw, ok := e["emitsBeforeReply"]; ok {
		var wants []json.RawMessage
		json.Unmarshal(raw, &wants)
		if len(before) != len(wants) {
			t.Fatalf("emitted %s before the reply, want %s", before, raw)
		}
		for i, w := range wants {
			var got map[string]json.RawMessage
			json.Unmarshal(before[i], &got)
			note, _ := json.Marshal(map[string]json.RawMessage{"method": got["method"], "params": got["params"]})
			if err := vectortest.Match(w, note); err != nil {
				t.Fatalf("notification %d: %v", i, err)
			}
		}
	}
	if raw, ok := e["storedContent"]; ok {
		if err := vectortest.Match(raw, rt.content); err != nil {
			t.Fatalf("stored content %s: %v", rt.content, err)
		}
	}
}

func srvMatchOne(t *testing.T, want json.RawMessage, replies []json.RawMessage) {
	t.Helper()
	if len(replies) != 1 {
		t.Fatalf("wrote %d replies, want 1: %s", len(replies), replies)
	}
	if err := vectortest.Match(want, replies[0]); err != nil {
		t.Fatalf("reply %s: %v", replies[0], err)
	}
}
