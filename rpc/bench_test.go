package rpc_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"

	gojson "github.com/goccy/go-json"
	"github.com/linerpc/linerpc/rpc"
)

// The hot-path micro-benchmarks. Each "Floor" benchmark moves the same
// bytes over the same pipe with go-json and a line reader and nothing else,
// so that the ratio of a benchmark to its floor is the cost of the RPC
// machinery. Compare them with benchstat over -count=10 runs.

type promptParams struct {
	SessionID     string        `json:"sessionId"`
	ContentBlocks []promptBlock `json:"contentBlocks"`
}

type promptBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type promptResult struct {
	MessageID string `json:"messageId"`
}

var benchPrompt = rpc.NewMethod[promptParams, promptResult]("session/prompt")

var helloPrompt = promptParams{SessionID: "main", ContentBlocks: []promptBlock{{Type: "text", Text: "hello"}}}

func benchPair(b *testing.B, reg *rpc.Registry) (client *rpc.Conn) {
	x, y := net.Pipe()
	server := rpc.NewConn(x, x, &rpc.Options{Handler: reg})
	client = rpc.NewConn(y, y, nil)
	server.Start()
	client.Start()
	b.Cleanup(func() {
		client.Close()
		server.Close()
		x.Close()
		y.Close()
		client.Wait()
		server.Wait()
	})
	return client
}

func promptRegistry() *rpc.Registry {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, benchPrompt, func(ctx context.Context, p promptParams) (promptResult, error) {
		return promptResult{MessageID: "m-1"}, nil
	})
	return reg
}

func BenchmarkRoundTrip(b *testing.B) {
	client := benchPair(b, promptRegistry())
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r, err := benchPrompt.Call(ctx, client, helloPrompt)
		if err != nil || r.MessageID != "m-1" {
			b.Fatal(r, err)
		}
	}
}

// BenchmarkRoundTripFloor is a request and its response as bare go-json
// lines over net.Pipe: encode, write, read a line, decode, on both sides.
func BenchmarkRoundTripFloor(b *testing.B) {
	b.ReportAllocs()
	floorCalls(b, helloPrompt, func(p promptParams) bool { return p.SessionID == "main" })
}

// floorCalls runs b.N calls with params as bare go-json lines over
// net.Pipe; the serving side decodes the params, checks them with valid,
// and answers {"messageId":"m-1"}.
func floorCalls[P any](b *testing.B, params P, valid func(P) bool) {
	x, y := net.Pipe()
	defer x.Close()
	defer y.Close()
	go func() {
		rd := bufio.NewReaderSize(x, 2<<20)
		for {
			line, err := rd.ReadSlice('\n')
			if err != nil {
				return
			}
			var p P
			if gojson.Unmarshal(line, &p) != nil || !valid(p) {
				panic("bad params")
			}
			out, _ := gojson.Marshal(promptResult{MessageID: "m-1"})
			if _, err := x.Write(append(out, '\n')); err != nil {
				return
			}
		}
	}()
	rd := bufio.NewReader(y)
	for b.Loop() {
		out, _ := gojson.Marshal(params)
		if _, err := y.Write(append(out, '\n')); err != nil {
			b.Fatal(err)
		}
		line, err := rd.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		var r promptResult
		if err := gojson.Unmarshal(line, &r); err != nil || r.MessageID != "m-1" {
			b.Fatal(r, err)
		}
	}
}

var benchEvent = rpc.NewNotification[eventParams]("session.event")

type eventParams struct {
	SessionID string `json:"sessionId"`
	Event     struct {
		Type string `json:"type"`
		Seq  int64  `json:"seq"`
		Time int64  `json:"time"`
		Data struct {
			Turn    int `json:"turn"`
			Message struct {
				ID      string        `json:"id"`
				Role    string        `json:"role"`
				Content []promptBlock `json:"content"`
			} `json:"message"`
		} `json:"data"`
	} `json:"event"`
}

func newEvent(seq int64) eventParams {
	var e eventParams
	e.SessionID = "main"
	e.Event.Type = "assistant/message"
	e.Event.Seq = seq
	e.Event.Time = 1767225600000
	e.Event.Data.Turn = 1
	e.Event.Data.Message.ID = "6f1d3c1e-7d1b-4b8e-9c55-0a1f2e3d4c5b"
	e.Event.Data.Message.Role = "assistant"
	e.Event.Data.Message.Content = []promptBlock{{Type: "text", Text: strings.Repeat("lorem ipsum ", 67)}}
	return e
}

// BenchmarkNotificationStream sends ~1 KiB session.event notifications,
// received, decoded and checked in order on the other side.
func BenchmarkNotificationStream(b *testing.B) {
	reg := rpc.NewRegistry()
	got := make(chan int64, 1)
	var next int64
	rpc.HandleNotification(reg, benchEvent, func(ctx context.Context, e eventParams) {
		if e.Event.Seq != next {
			panic("out of order")
		}
		next++
		got <- e.Event.Seq
	})
	x, y := net.Pipe()
	receiver := rpc.NewConn(x, x, &rpc.Options{Handler: reg})
	sender := rpc.NewConn(y, y, nil)
	receiver.Start()
	defer func() { sender.Close(); receiver.Close(); x.Close(); y.Close(); receiver.Wait() }()
	ctx := context.Background()
	e := newEvent(0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range got {
		}
	}()
	b.ReportAllocs()
	b.SetBytes(1024)
	var seq int64
	for b.Loop() {
		e.Event.Seq = seq
		seq++
		if err := benchEvent.Notify(ctx, sender, e); err != nil {
			b.Fatal(err)
		}
	}
	sender.Notify(ctx, "flush", nil) // ensures the last event was read
	b.StopTimer()
}

// BenchmarkNotificationStreamFloor is the same stream as bare go-json lines.
func BenchmarkNotificationStreamFloor(b *testing.B) {
	x, y := net.Pipe()
	defer x.Close()
	defer y.Close()
	go func() {
		rd := bufio.NewReader(x)
		var next int64
		for {
			line, err := rd.ReadSlice('\n')
			if err != nil {
				return
			}
			var n struct {
				Method string      `json:"method"`
				Params eventParams `json:"params"`
			}
			if gojson.Unmarshal(line, &n) != nil || n.Params.Event.Seq != next {
				panic("bad stream")
			}
			next++
		}
	}()
	e := newEvent(0)
	b.ReportAllocs()
	b.SetBytes(1024)
	var seq int64
	for b.Loop() {
		e.Event.Seq = seq
		seq++
		out, _ := gojson.Marshal(struct {
			JSONRPC string      `json:"jsonrpc"`
			Method  string      `json:"method"`
			Params  eventParams `json:"params"`
		}{"2.0", "session.event", e})
		if _, err := y.Write(append(out, '\n')); err != nil {
			b.Fatal(err)
		}
	}
}

var benchBlob = rpc.NewMethod[blobParams, promptResult]("blob")

type blobParams struct {
	Data string `json:"data"`
}

// BenchmarkLargePayload sends one call with a 1 MiB base64 string param.
func BenchmarkLargePayload(b *testing.B) {
	reg := rpc.NewRegistry()
	rpc.Handle(reg, benchBlob, func(ctx context.Context, p blobParams) (promptResult, error) {
		if len(p.Data) != 1<<20 {
			panic("short blob")
		}
		return promptResult{MessageID: "m-1"}, nil
	})
	client := benchPair(b, reg)
	p := blobParams{Data: strings.Repeat("QUJD", 1<<18)}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(1 << 20)
	for b.Loop() {
		if _, err := benchBlob.Call(ctx, client, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLargePayloadFloor is the same call as bare go-json lines.
func BenchmarkLargePayloadFloor(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(1 << 20)
	floorCalls(b, blobParams{Data: strings.Repeat("QUJD", 1<<18)}, func(p blobParams) bool { return len(p.Data) == 1<<20 })
}

// BenchmarkSkipOversizeLine measures how fast a Conn skips a line longer
// than MaxFrameSize: a 64 MiB line without a newline, written to an
// io.Pipe in 1 MiB Writes (as a peer's large writes arrive), then its LF;
// an op ends when the drop is reported. MB/s is the skipping speed.
func BenchmarkSkipOversizeLine(b *testing.B) {
	const size = 64 << 20
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	r, w := io.Pipe()
	dropped := make(chan struct{}, 1)
	c := rpc.NewConn(r, io.Discard, &rpc.Options{MaxFrameSize: 1 << 20, OnDrop: func(d rpc.Drop) {
		if d.Reason == rpc.DropOversize && d.Size == size {
			dropped <- struct{}{}
		}
	}})
	c.Start()
	defer func() {
		c.Close()
		w.Close()
		c.Wait()
	}()
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for written := 0; written < size; written += len(chunk) {
			w.Write(chunk)
		}
		w.Write([]byte("\n"))
		<-dropped
	}
}
