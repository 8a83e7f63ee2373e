package sdkproto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/linerpc/linerpc/internal/vectortest"
	"github.com/linerpc/linerpc/sdkproto"
)

// The wire vectors that concern the vocabulary: typed decoding, lossless
// round trips and payload validation, for revisions all and newer.
//
// Every vector of content-blocks.ndjson, session-events.ndjson and
// notifications.ndjson that targets those revisions runs: its params decode
// into the typed payload and encode back to the same bytes, and these
// expectation keys are checked: blocks, runValidation (with errorPrefix),
// rootRunValidation (with errorMessage), finalResponseText, isReceiptFor,
// eventType, known, surface, chunkType, finishReason, decoded, params
// (object params of the four protocol notifications), attachmentCode, and
// reply where the reply is produced by the validation in this package
// (initialize effort/maxTokens, prompt content shape and image base64 /
// media type / attachment store checks; a successful reply means the
// validation must pass). requests.ndjson contributes its initialize and
// session/prompt vectors (params validation, decoded) and the client-side
// result checks (client).
//
// Not checked here, and why:
//   - class, method, id: transport classification (package rpc's vectors).
//   - reply when produced by runtime state or later steps (not initialized,
//     shutting down, agent disposed, cwd/provider/route errors, the store's
//     image decoding: "Declared image type…", "Unsupported or malformed…"),
//     and replies of shutdown and unknown methods: server tests.
//   - storedContent, emitsBeforeReply, sideEffects: what the runtime stores
//     and emits after admission (server tests).
//   - lineage, delivered, collected, events, finalResponse, stopAt, error,
//     pending, settle: client bookkeeping and run() flows (client tests).
//   - params of non-object params (notification-params-array) and of
//     unknown notification methods: transport normalisation / no typed
//     payload.
//   - strict, lenient, python, note, replyHint: informational.

type tally struct {
	mu      sync.Mutex
	vectors map[string]int
	keys    map[string]map[string]int
}

func (t *tally) ran(file string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.vectors[file]++
}

func (t *tally) checked(file, key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.keys[file] == nil {
		t.keys[file] = map[string]int{}
	}
	t.keys[file][key]++
}

func TestVectorsTypes(t *testing.T) {
	tl := &tally{vectors: map[string]int{}, keys: map[string]map[string]int{}}
	files := []struct {
		name string
		run  func(t *testing.T, tl *tally, v vectortest.Vector)
	}{
		{"content-blocks.ndjson", runContentVector},
		{"session-events.ndjson", runEventVector},
		{"notifications.ndjson", runNotificationVector},
		{"requests.ndjson", runRequestVector},
	}
	for _, f := range files {
		vs, err := vectortest.Load(f.name)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(f.name, func(t *testing.T) {
			for _, v := range vs {
				if !v.Targets() {
					continue
				}
				t.Run(v.Name, func(t *testing.T) { f.run(t, tl, v) })
			}
		})
	}
	// Minimum counts: vectors run per file, and checks per expectation key.
	wantVectors := map[string]int{
		"content-blocks.ndjson": 53, "session-events.ndjson": 56,
		"notifications.ndjson": 30, "requests.ndjson": 69,
	}
	wantKeys := map[string]map[string]int{
		"content-blocks.ndjson": {"roundtrip": 53, "blocks": 10, "runValidation": 13,
			"finalResponseText": 8, "reply": 36, "attachmentCode": 14},
		"session-events.ndjson": {"roundtrip": 56, "eventType": 53, "known": 53, "surface": 53,
			"runValidation": 56, "isReceiptFor": 4, "chunkType": 11, "finishReason": 10,
			"finalResponseText": 4},
		"notifications.ndjson": {"roundtrip": 28, "decoded": 7, "params": 28, "rootRunValidation": 2},
		"requests.ndjson":      {"reply": 45, "decoded": 7, "client": 11},
	}
	for file, n := range wantVectors {
		if got := tl.vectors[file]; got < n {
			t.Errorf("%s: %d vectors ran, want at least %d", file, got, n)
		}
		for key, n := range wantKeys[file] {
			if got := tl.keys[file][key]; got < n {
				t.Errorf("%s: %q checked %d times, want at least %d", file, key, got, n)
			}
		}
	}
	if testing.Verbose() {
		for file, keys := range tl.keys {
			names := make([]string, 0, len(keys))
			for k := range keys {
				names = append(names, fmt.Sprintf("%s=%d", k, keys[k]))
			}
			sort.Strings(names)
			t.Logf("%s: %d vectors; %s", file, tl.vectors[file], strings.Join(names, " "))
		}
	}
}

// frameParams returns the params member of the vector's frame, as sent.
func frameParams(t *testing.T, v vectortest.Vector) json.RawMessage {
	t.Helper()
	var line []byte
	if v.Raw != nil {
		line = []byte(*v.Raw)
	} else {
		line = v.Frame
	}
	var f map[string]json.RawMessage
	if err := json.Unmarshal(line, &f); err != nil {
		t.Fatal(err)
	}
	return f["params"]
}

func compactJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// roundTrip decodes params into *p and checks that encoding gives back the
// same bytes.
func roundTrip(t *testing.T, params json.RawMessage, p any) {
	t.Helper()
	if err := json.Unmarshal(params, p); err != nil {
		t.Fatalf("decode %s: %v", params, err)
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := compactJSON(t, params); !bytes.Equal(out, want) {
		t.Errorf("round trip:\n got %s\nwant %s", out, want)
	}
}

func expectString(v vectortest.Vector, key string) (string, bool) {
	var s string
	raw, ok := v.Expect[key]
	if !ok || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// checkRun compares a run() verdict with runValidation (or
// rootRunValidation) and its errorPrefix / errorMessage.
func checkRun(t *testing.T, v vectortest.Vector, key string, err error) {
	t.Helper()
	want, _ := expectString(v, key)
	switch want {
	case "ok":
		if err != nil {
			t.Errorf("%s: got %v, want ok", key, err)
		}
		return
	case "SdkProtocolError":
	default:
		t.Fatalf("%s: unexpected expectation %q", key, want)
	}
	var pe *sdkproto.ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: got %v, want a ProtocolError", key, err)
	}
	if prefix, ok := expectString(v, "errorPrefix"); ok && !strings.HasPrefix(pe.Message, prefix) {
		t.Errorf("%s: message %q, want prefix %q", key, pe.Message, prefix)
	}
	if msg, ok := expectString(v, "errorMessage"); ok && pe.Message != msg {
		t.Errorf("%s: message %q, want %q", key, pe.Message, msg)
	}
}

// checkBlocks compares decoded blocks with the blocks expectation.
func checkBlocks(t *testing.T, want json.RawMessage, blocks []sdkproto.ContentBlock) {
	t.Helper()
	var got []map[string]any
	for _, b := range blocks {
		m := map[string]any{"type": b.Type, "variant": string(b.Kind())}
		if b.Kind() == sdkproto.KindToolResult {
			m["isError"] = b.Failed()
			var nested []string
			for _, n := range b.Content {
				nested = append(nested, n.Type)
			}
			m["nested"] = nested
		}
		got = append(got, m)
	}
	// Members the expectation does not mention are not compared.
	var w []map[string]json.RawMessage
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if len(w) != len(got) {
		t.Fatalf("blocks: got %d, want %d", len(got), len(w))
	}
	for i := range w {
		for k, wv := range w[i] {
			gv, _ := json.Marshal(got[i][k])
			if err := vectortest.Match(wv, gv); err != nil {
				t.Errorf("blocks[%d].%s: %v", i, k, err)
			}
		}
	}
}

// replyError returns the error message of the expected reply, ok=false
// when the reply is a result.
func replyError(t *testing.T, v vectortest.Vector) (msg string, isError bool) {
	t.Helper()
	var r struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(v.Expect["reply"], &r); err != nil {
		return "", false
	}
	if r.Error == nil {
		return "", false
	}
	return r.Error.Message, true
}
