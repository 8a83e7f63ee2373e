package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/linerpc/linerpc/internal/vectortest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// The wire vectors of the transport layer (testdata/vectors/framing.ndjson
// and errors.ndjson), run against a Conn through the public API only.

// runtimeUnknownMethod is what the DSH runtime answers to a method it does
// not know; the vectors' "receiver: runtime" cases expect it.
func runtimeUnknownMethod(method string) error {
	return errors.New("unknown DeepSeek Harness SDK runtime method: " + method)
}

// receiver records what a Conn under test dispatched.
type receiver struct {
	mu            sync.Mutex
	classes       []string // request, notification, response, ignored (non-blank lines only)
	methods       []string
	params        []json.RawMessage
	notifications []json.RawMessage // {"method":…,"params":…}
	drops         []rpc.Drop
}

func (r *receiver) add(class, method string, params json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.classes = append(r.classes, class)
	r.methods = append(r.methods, method)
	r.params = append(r.params, normaliseParams(params))
	if class == "notification" {
		n, _ := json.Marshal(map[string]any{"method": method, "params": normaliseParams(params)})
		r.notifications = append(r.notifications, n)
	}
}

// normaliseParams applies the TypeScript transport's normalisation, which the
// vectors' expectations show: anything but an object becomes {}.
func normaliseParams(p json.RawMessage) json.RawMessage {
	p = bytes.TrimSpace(p)
	if len(p) == 0 || p[0] != '{' {
		return json.RawMessage(`{}`)
	}
	return p
}

// newReceiver builds the registry and options of the receiver a vector names.
func newReceiver(kind string) (*receiver, *rpc.Options) {
	rec := &receiver{}
	reg := rpc.NewRegistry()
	if kind == "runtime" {
		reg.HandleUnknown(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			rec.add("request", method, params)
			return nil, runtimeUnknownMethod(method)
		})
	}
	reg.HandleUnknownNotification(func(ctx context.Context, method string, params json.RawMessage) {
		rec.add("notification", method, params)
	})
	opts := &rpc.Options{Handler: reg, OnDrop: func(d rpc.Drop) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		rec.drops = append(rec.drops, d)
		if d.Reason == rpc.DropUnmatchedResponse {
			rec.classes = append(rec.classes, "response")
		} else {
			rec.classes = append(rec.classes, "ignored")
		}
	}}
	return rec, opts
}

// splitFrames cuts written output into frames, checking that every frame is
// compact JSON terminated by one LF.
func splitFrames(t *testing.T, out []byte) []json.RawMessage {
	t.Helper()
	if len(out) == 0 {
		return nil
	}
	if out[len(out)-1] != '\n' {
		t.Fatalf("output does not end with LF: %q", out)
	}
	var frames []json.RawMessage
	for _, line := range bytes.Split(out[:len(out)-1], []byte{'\n'}) {
		var compact bytes.Buffer
		if err := json.Compact(&compact, line); err != nil {
			t.Fatalf("written frame is not JSON: %q: %v", line, err)
		}
		if !bytes.Equal(compact.Bytes(), line) {
			t.Fatalf("written frame is not compact: %q", line)
		}
		frames = append(frames, json.RawMessage(line))
	}
	return frames
}

func loadVectors(t *testing.T, file string) []vectortest.Vector {
	t.Helper()
	vs, err := vectortest.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatalf("%s: no vectors", file)
	}
	return vs
}

func TestFramingVectors(t *testing.T) {
	ran := 0
	for _, v := range loadVectors(t, "framing.ndjson") {
		if !v.Targets() {
			continue
		}
		ran++
		t.Run(v.Name, func(t *testing.T) { runFramingVector(t, v) })
	}
	if ran < 60 {
		t.Fatalf("ran %d framing vectors, want all of them", ran)
	}
}

func runFramingVector(t *testing.T, v vectortest.Vector) {
	chunks, err := v.Chunks()
	if err != nil {
		t.Fatal(err)
	}
	rec, opts := newReceiver(v.GivenString("receiver"))
	var out rpctest.LockedBuffer
	c := rpc.NewConn(rpctest.Chunks(chunks...), &out, opts)
	c.Start()
	if err := c.Wait(); !errors.Is(err, rpc.ErrInputEnded) {
		t.Fatalf("Wait = %v, want ErrInputEnded", err)
	}
	defer c.Close()

	want := v.Expect
	frames := splitFrames(t, out.Bytes())
	rec.mu.Lock()
	defer rec.mu.Unlock()

	// Classes: blank lines leave no trace, so only the classes of non-blank
	// lines are compared, in order.
	var wantClasses []string
	if raw, ok := want["classes"]; ok {
		mustUnmarshal(t, raw, &wantClasses)
	} else {
		var class string
		mustUnmarshal(t, want["class"], &class)
		wantClasses = []string{class}
	}
	nonBlank := nonBlankClasses(wantClasses, bytes.Join(chunks, nil))
	if v.GivenString("receiver") == "ts-client" {
		// A peer without request handlers answers requests itself; the
		// answer, checked below, is the only trace of their class.
		for range frames {
			rec.classes = append(rec.classes, "request")
		}
	}
	if strings.Join(rec.classes, ",") != strings.Join(nonBlank, ",") {
		t.Fatalf("classes %v, want %v (of %v)", rec.classes, nonBlank, wantClasses)
	}

	if m, ok := want["method"]; ok && len(rec.methods) > 0 && rec.classes[0] != "response" {
		var method string
		mustUnmarshal(t, m, &method)
		if rec.methods[0] != method {
			t.Fatalf("method %q, want %q", rec.methods[0], method)
		}
		if p, ok := want["params"]; ok {
			if err := vectortest.Match(p, rec.params[0]); err != nil {
				t.Fatalf("params: %v", err)
			}
		}
	}
	if n, ok := want["notifications"]; ok {
		got, _ := json.Marshal(rec.notifications)
		if err := vectortest.Match(n, got); err != nil {
			t.Fatalf("notifications: %v", err)
		}
	}

	switch {
	case want["replyRaw"] != nil:
		var raw string
		mustUnmarshal(t, want["replyRaw"], &raw)
		// Structural match: the exact echo of an id beyond 2^53 equals
		// upstream's rounded echo as a float64, which the vector accepts.
		if len(frames) != 1 {
			t.Fatalf("wrote %d frames, want 1", len(frames))
		}
		if err := vectortest.Match(json.RawMessage(raw), frames[0]); err != nil {
			t.Fatalf("reply: %v", err)
		}
	case want["replies"] != nil:
		var replies []json.RawMessage
		mustUnmarshal(t, want["replies"], &replies)
		if len(frames) != len(replies) {
			t.Fatalf("wrote %d frames, want %d: %s", len(frames), len(replies), frames)
		}
		matchUnordered(t, replies, frames)
	case want["reply"] != nil && string(want["reply"]) != "null":
		if len(frames) != 1 {
			t.Fatalf("wrote %d frames, want 1: %s", len(frames), frames)
		}
		if err := vectortest.Match(want["reply"], frames[0]); err != nil {
			t.Fatalf("reply: %v", err)
		}
		if id, ok := want["id"]; ok {
			var reply map[string]json.RawMessage
			mustUnmarshal(t, frames[0], &reply)
			if err := vectortest.Match(id, reply["id"]); err != nil {
				t.Fatalf("echoed id: %v", err)
			}
		}
	default:
		if len(frames) != 0 {
			t.Fatalf("wrote %s, want nothing", frames)
		}
	}
}

// nonBlankClasses drops the classes of the lines of stream that are blank
// after trimming: they are skipped silently, with nothing to observe.
func nonBlankClasses(classes []string, stream []byte) []string {
	parts := bytes.Split(stream, []byte{'\n'})
	if len(parts) > 0 && len(bytes.TrimSpace(parts[len(parts)-1])) > 0 {
		// An unterminated tail counts as one ignored (dropped) line.
	} else {
		parts = parts[:len(parts)-1]
	}
	if len(parts) != len(classes) {
		return classes
	}
	var out []string
	for i, p := range parts {
		if len(bytes.TrimSpace(p)) == 0 {
			continue
		}
		out = append(out, classes[i])
	}
	return out
}

func matchUnordered(t *testing.T, want, got []json.RawMessage) {
	t.Helper()
	used := make([]bool, len(got))
outer:
	for _, w := range want {
		for i, g := range got {
			if !used[i] && vectortest.Match(w, g) == nil {
				used[i] = true
				continue outer
			}
		}
		t.Fatalf("no written frame matches %s; wrote %s", w, got)
	}
}

func mustUnmarshal(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
}
