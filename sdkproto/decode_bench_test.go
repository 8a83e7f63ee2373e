package sdkproto_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/linerpc/linerpc/internal/wire"
	"github.com/linerpc/linerpc/sdkproto"
)

// The cost of a session.event to a client, beside go-json's decode of the
// same frame into a plain struct (the floor: what decoding the frame costs
// a program that keeps nothing of its bytes and checks nothing). Compare
// BenchmarkSessionEventDecode with BenchmarkSessionEventDecodeGoJSON, frame
// by frame, with benchstat over -count=10 runs; cpu-ns/op, the process's
// CPU time per op, is the figure to read on a busy machine.

// benchFrames are session.event frames the real runtime wrote
// (testdata/transcripts/text-turn.ndjson): the most frequent (a text
// delta), the reply, and a large user message.
func benchFrames(b *testing.B) []struct {
	name  string
	frame []byte
} {
	b.Helper()
	f, err := os.Open("../testdata/transcripts/text-turn.ndjson")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{
		`"type":"text-delta"`:        "text-delta",
		`"type":"assistant/message"`: "assistant-message",
		`"type":"user/message"`:      "user-message",
	}
	var out []struct {
		name  string
		frame []byte
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct{ Frame string }
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		for marker, name := range want {
			// The user message kept is the larger, second one.
			if strings.Contains(line.Frame, marker) {
				if seen[name]++; seen[name] == map[bool]int{true: 2, false: 1}[name == "user-message"] {
					out = append(out, struct {
						name  string
						frame []byte
					}{name, []byte(line.Frame)})
				}
			}
		}
	}
	if len(out) != len(want) {
		b.Fatalf("found %d of the %d frames", len(out), len(want))
	}
	return out
}

// plainFrame is a session.event frame as a plain struct holds it: what
// SessionEventParams exposes, with the data raw.
type plainFrame struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  struct {
		SessionID string `json:"sessionId"`
		Event     struct {
			Type            string          `json:"type"`
			Seq             int64           `json:"seq"`
			Time            int64           `json:"time"`
			Data            json.RawMessage `json:"data"`
			Ignorable       bool            `json:"ignorable"`
			SourceEventSeqs []int64         `json:"sourceEventSeqs"`
			SurfaceOp       json.RawMessage `json:"surfaceOp"`
		} `json:"event"`
	} `json:"params"`
}

// BenchmarkSessionEventDecodeGoJSON is the floor: go-json decodes the frame
// into a plainFrame.
func BenchmarkSessionEventDecodeGoJSON(b *testing.B) {
	for _, f := range benchFrames(b) {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(int64(len(f.frame)))
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				var p plainFrame
				if err := gojson.Unmarshal(f.frame, &p); err != nil || p.Params.Event.Type == "" {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSessionEventDecodeGoJSONRPC is what a JSON-RPC client built on
// go-json pays for the same frame: the envelope decoded with its params
// raw (as a connection must, to route the frame before it knows the
// params' type), then the params decoded into a plain struct.
func BenchmarkSessionEventDecodeGoJSONRPC(b *testing.B) {
	for _, f := range benchFrames(b) {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(int64(len(f.frame)))
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				var env struct {
					JSONRPC string          `json:"jsonrpc"`
					Method  string          `json:"method"`
					Params  json.RawMessage `json:"params"`
				}
				if err := gojson.Unmarshal(f.frame, &env); err != nil {
					b.Fatal(err)
				}
				var p plainFrame
				if err := gojson.Unmarshal(env.Params, &p.Params); err != nil || p.Params.Event.Type == "" {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSessionEventDecode is a Client's decode of the frame, step by
// step as rpc's reader and the Client take it: the frame scanned with its
// params guessed to end it (wire.Scanner.ParamsToEnd), the params then
// validated on their own (no typed decoder takes session.event: the
// Client's handler of unknown notifications does) and copied for the
// handler, the Client's Notification made of them, and decoded
// (Notification.SessionEvent).
func BenchmarkSessionEventDecode(b *testing.B) {
	benchClient(b, false)
}

// BenchmarkNotificationSessionEvent is the decode proper: the Client's
// Notification of the frame, as its handler of unknown notifications
// received the params from rpc, decoded (Notification.SessionEvent). The
// frame's reading before it (BenchmarkSessionEventDecode has it too) is
// what any notification costs, decoded or not.
func BenchmarkNotificationSessionEvent(b *testing.B) {
	for _, f := range benchFrames(b) {
		b.Run(f.name, func(b *testing.B) {
			var s wire.Scanner
			var env wire.Envelope
			if _, _, err := s.Scan(f.frame, &env); err != nil {
				b.Fatal(err)
			}
			n := sdkproto.Received(sdkproto.SessionEvent.Name(), append(json.RawMessage(nil), env.Params.Raw...))
			b.SetBytes(int64(len(f.frame)))
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				p, err := n.SessionEvent()
				if err != nil || p.Event.Type == "" {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSessionEventRun is BenchmarkSessionEventDecode with the rest of
// what Run does with the event: the session read by the session tree's
// filter and by Run, and the event checked as the TypeScript run() checks
// it (CheckRunEvent).
func BenchmarkSessionEventRun(b *testing.B) {
	benchClient(b, true)
}

func benchClient(b *testing.B, run bool) {
	for _, f := range benchFrames(b) {
		b.Run(f.name, func(b *testing.B) {
			var s wire.Scanner
			s.LazyParams, s.ParamsToEnd = true, true
			var env wire.Envelope
			b.SetBytes(int64(len(f.frame)))
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				if _, _, err := s.Scan(f.frame, &env); err != nil {
					b.Fatal(err)
				}
				if _, _, err := s.Scan(env.Params.Raw, nil); err != nil {
					b.Fatal(err)
				}
				n := sdkproto.Received(sdkproto.SessionEvent.Name(), append(json.RawMessage(nil), env.Params.Raw...))
				if run {
					if sid, ok := n.SessionID(); !ok || sid != "main" {
						b.Fatal("no session")
					}
					n.SessionID()
				}
				p, err := n.SessionEvent()
				if err != nil || p.Event.Type == "" {
					b.Fatal(err)
				}
				if run {
					if err := p.CheckRunEvent(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkClientSessionEvents is a Client reading session.event frames
// from its runtime, a subscription handing them over, and the consumer
// decoding and checking each as Run does: the whole cost of an event to a
// program, per event, in time and in CPU (cpu-ns/op: the process's, which
// counts the read loop's goroutine, the writer's and the collector too).
func BenchmarkClientSessionEvents(b *testing.B) {
	for _, f := range benchFrames(b) {
		b.Run(f.name, func(b *testing.B) {
			const batch = 256
			pr, pw := io.Pipe()
			c := sdkproto.NewClient(pr, io.Discard, nil)
			defer c.Close()
			sub := c.Subscribe(nil)
			// The writer keeps at most four batches ahead of the consumer,
			// so that the subscription's queue stays short.
			ahead := make(chan struct{}, 4)
			go func() {
				frames := bytes.Repeat(append(f.frame, '\n'), batch)
				for i := 0; i < b.N; i += batch {
					ahead <- struct{}{}
					pw.Write(frames[:min(batch, b.N-i)*(len(f.frame)+1)])
				}
				pw.Close()
			}()
			b.SetBytes(int64(len(f.frame)) + 1)
			b.ReportAllocs()
			defer reportCPU(b)()
			b.ResetTimer()
			for i := range b.N {
				n, err := sub.Next(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				sid, _ := n.SessionID()
				p, err := n.SessionEvent()
				if err != nil || sid != "main" {
					b.Fatal(err)
				}
				if err := p.CheckRunEvent(); err != nil {
					b.Fatal(err)
				}
				if (i+1)%batch == 0 {
					<-ahead
				}
			}
			b.StopTimer()
		})
	}
}

// reportCPU starts measuring the process's CPU time and returns the
// function that reports it per op (cpu-ns/op): unlike time per op, what a
// busy machine barely changes. It counts every goroutine of the process,
// the collector's included.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
