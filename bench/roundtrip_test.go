package bench

import (
	"sync"
	"testing"

	gojson "github.com/goccy/go-json"
)

// Workload 1: one call at a time,
// {"sessionId":"main","contentBlocks":[{"type":"text","text":"hello"}]} →
// {"messageId":"m-1"}, params decoded into Prompt on the server, the result
// into Reply on the client, both checked.
//
// Besides ns/op, B/op and allocs/op (of the whole process: both ends), it
// reports allocs-over-decode/op: allocs/op minus what decoding the params
// and the result alone takes (BenchmarkDecodePR), the quantity of the
// "no more than decoding P and R plus 1" target.
func BenchmarkRoundTrip(b *testing.B) {
	forEach(b, func(b *testing.B, kind string, c *contender) {
		_, cl, stop := c.connect(kind, &handlers{prompt: servePrompt})
		defer stop()
		p := helloPrompt
		b.ReportAllocs()
		mem, cpu := startMem(), startCPU()
		for b.Loop() {
			if err := checkReply(cl.callPrompt(bg, &p)); err != nil {
				b.Fatal(err)
			}
		}
		cpu.stop(b)
		allocs, _ := mem.stop(b.N)
		b.ReportMetric(allocs-decodePRAllocs(), "allocs-over-decode/op")
	})
}

var (
	promptJSON = []byte(`{"sessionId":"main","contentBlocks":[{"type":"text","text":"hello"}]}`)
	replyJSON  = []byte(`{"messageId":"m-1"}`)
)

// decodePR decodes the round trip's params into a Prompt and its result into
// a Reply with go-json, as the floor and linerpc do.
func decodePR() error {
	var p Prompt
	var r Reply
	if err := gojson.UnmarshalOf(promptJSON, &p); err != nil {
		return err
	}
	if err := checkPrompt(&p); err != nil {
		return err
	}
	if err := gojson.UnmarshalOf(replyJSON, &r); err != nil {
		return err
	}
	return checkReply(r, nil)
}

// BenchmarkDecodePR is the allocation budget of a round trip: decoding P and
// R alone.
func BenchmarkDecodePR(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := decodePR(); err != nil {
			b.Fatal(err)
		}
	}
}

var decodePRAllocs = sync.OnceValue(func() float64 {
	return testing.AllocsPerRun(1000, func() {
		if err := decodePR(); err != nil {
			panic(err)
		}
	})
})
