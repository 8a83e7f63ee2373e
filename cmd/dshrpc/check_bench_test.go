package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// benchTranscriptSize is about the size of the large transcripts check is
// meant for: a long session log of a busy runtime.
const benchTranscriptSize = 30 << 20

// sessionRef matches a session id inside a transcript's quoted frame
// (`\"sessionId\":\"main`, and the parent and child ids of subagent
// notifications), up to the escaped quote that ends it.
var sessionRef = regexp.MustCompile(`(Id\\":\\")([^\\"]+)`)

// largeTranscript repeats the recorded transcripts (testdata/transcripts)
// to about benchTranscriptSize bytes. Each repetition of a transcript
// renames its sessions, so that the result reads as one runtime serving
// many sessions one after the other, rather than the same sessions
// starting over at seq 0 (which would make almost every event a seq-order
// finding, and the benchmark one of printing findings).
func largeTranscript(b *testing.B) []byte {
	b.Helper()
	names, err := filepath.Glob("../../testdata/transcripts/*.ndjson")
	if err != nil || len(names) == 0 {
		b.Fatalf("no transcripts: %v", err)
	}
	var one [][]byte
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		one = append(one, data)
	}
	var out bytes.Buffer
	out.Grow(benchTranscriptSize + 1<<20)
	for r := 0; out.Len() < benchTranscriptSize; r++ {
		for i, data := range one {
			suffix := []byte("-" + strconv.Itoa(r) + "-" + strconv.Itoa(i))
			out.Write(sessionRef.ReplaceAllFunc(data, func(m []byte) []byte {
				return append(m[:len(m):len(m)], suffix...)
			}))
		}
	}
	return out.Bytes()
}

// BenchmarkCheckLargeTranscript measures dshrpc check on a large
// transcript: bytes per second through the whole of it (line reading,
// unwrapping, scanning, decoding and validating each frame), findings
// printed to io.Discard. It reports the findings per run, which must stay
// few: they are the recorded transcripts' own. It also reports the
// process's CPU time per run and the bytes checked per second of it
// (cpu-MB/s), which, unlike MB/s, a busy machine does not lower.
func BenchmarkCheckLargeTranscript(b *testing.B) {
	data := largeTranscript(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var findings int
	cpu := cpuTime()
	for b.Loop() {
		_, counts, err := checkFile(io.Discard, "bench", bytes.NewReader(data), 64<<20)
		if err != nil {
			b.Fatal(err)
		}
		findings = counts.Problems() + counts.Warnings()
	}
	perOp := (cpuTime() - cpu).Seconds() / float64(b.N)
	b.ReportMetric(float64(findings), "findings/op")
	b.ReportMetric(perOp*1e3, "cpu-ms/op")
	b.ReportMetric(float64(len(data))/1e6/perOp, "cpu-MB/s")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
