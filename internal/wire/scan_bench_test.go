package wire

import (
	"strings"
	"testing"
)

// benchScan measures Scan on one line, with and without LazyParams; both
// valid and invalid lines must report 0 allocs/op.
func benchScan(b *testing.B, line []byte, wantErr bool) {
	for _, lazy := range []bool{false, true} {
		b.Run(map[bool]string{false: "full", true: "lazy"}[lazy], func(b *testing.B) {
			s := Scanner{LazyParams: lazy}
			var env Envelope
			if _, _, err := s.Scan(line, &env); (err != nil) != wantErr {
				b.Fatalf("unexpected verdict: %v", err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				s.Scan(line, &env)
			}
		})
	}
}

func BenchmarkScanRequest(b *testing.B) {
	// A typical ~120-byte request frame.
	line := []byte(`{"jsonrpc":"2.0","id":12345,"method":"textDocument/hover","params":{"uri":"file:///a/b.go","line":10,"ch":4}}`)
	benchScan(b, line, false)
}

func BenchmarkScanLargeString(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"put","params":["` + strings.Repeat("lorem ipsum dolor sit amet é ", 1<<20/30) + `"]}`)
	benchScan(b, line, false)
}

func BenchmarkScanEvent(b *testing.B) {
	// A ~1 KiB session.event notification: mostly one long string.
	line := []byte(`{"jsonrpc":"2.0","method":"session.event","params":{"sessionId":"main","event":{"type":"assistant/message","seq":12,"time":1767225600000,"data":{"turn":1,"message":{"id":"6f1d3c1e-7d1b-4b8e-9c55-0a1f2e3d4c5b","role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("lorem ipsum ", 67)[:800] + `"}]}}}}}`)
	benchScan(b, line, false)
}

func BenchmarkScanInvalid(b *testing.B) {
	// The fault is at the end and outside params, so that both modes find
	// it after reading the whole line.
	line := []byte(`{"jsonrpc":"2.0","method":"textDocument/hover","params":{"uri":"file:///a/b.go","line":10,"ch":4},"id":012345}`)
	benchScan(b, line, true)
}

func BenchmarkNumberInt64(b *testing.B) {
	for _, raw := range []string{"12345", "5.0e0"} {
		b.Run(raw, func(b *testing.B) {
			r := []byte(raw)
			b.ReportAllocs()
			for b.Loop() {
				NumberInt64(r)
			}
		})
	}
}
