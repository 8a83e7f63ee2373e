package main

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/internal/transcript"
	"github.com/linerpc/linerpc/internal/wire"
	"pgregory.net/rapid"
)

// wantRecord is the record of a line as tap logs it, but for its time:
// the first max bytes of the line, encoded as wire.Stringify encodes a
// record.
func wantRecord(t *rapid.T, dir transcript.Dir, line []byte, max int, unterminated bool) string {
	rec := tapRecord{Dir: string(dir), Frame: string(line[:min(len(line), max)]), Unterminated: unterminated}
	if len(line) > max {
		rec.Truncated, rec.Size = true, int64(len(line))
	}
	b, err := wire.Stringify(rec)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Replace(string(b), `"t":""`, `"t":"T"`, 1)
}

// withoutTimes replaces the time of every record with T.
func withoutTimes(log string) []string {
	var recs []string
	for line := range strings.Lines(log) {
		i := strings.Index(line, `","dir":`)
		recs = append(recs, `{"t":"T`+strings.TrimSuffix(line[i:], "\n"))
	}
	return recs
}

// Whatever the lines and however they arrive, each is logged as one
// record holding its first --max-log-frame bytes, encoded as wire.Stringify
// encodes the record: invalid UTF-8 as U+FFFD, a character cut by the
// limit too, and a character split between reads kept whole.
func TestTapLogRecords(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alphabet := []byte("ab\"\\<&\t\x01\x7f\xc3\xa9\xe2\x80\xa8\xf0\x9f\x98\x80\x82")
		lines := rapid.SliceOfN(rapid.SliceOf(rapid.SampledFrom(alphabet)), 1, 5).Draw(t, "lines")
		unterminated := rapid.Bool().Draw(t, "unterminated")
		max := rapid.IntRange(1, 40).Draw(t, "max")
		var in []byte
		var want []string
		for i, l := range lines {
			in = append(in, l...)
			last := i == len(lines)-1 && unterminated
			if !last {
				in = append(in, '\n')
			}
			if !last || len(l) > 0 {
				want = append(want, wantRecord(t, transcript.RuntimeToClient, l, max, last))
			}
		}
		var out bytes.Buffer
		s := newLineSplitter(newTapLog(&out), transcript.RuntimeToClient, max)
		for rest := in; len(rest) > 0; {
			n := rapid.IntRange(1, len(rest)).Draw(t, "read")
			s.add(rest[:n])
			rest = rest[n:]
		}
		s.end()
		if got := withoutTimes(out.String()); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// Logging a line of 100 MiB that arrives in 32 KiB reads, with the
// default --max-log-frame of 64 MiB, allocates the 64 MiB it logs and
// little more: the line is neither held whole nor copied to be encoded.
// (tap allocated about six times what it logged, and peaked at 410 MiB
// of RSS.) A second such line reuses the same memory.
func TestTapLogAllocatesWhatItLogs(t *testing.T) {
	const (
		size   = 100 << 20
		maxLog = 64 << 20
		slack  = 4 << 20 // the pieces, the record's encoding, the bufio buffer
	)
	read := bytes.Repeat([]byte("x"), 32<<10)
	s := newLineSplitter(newTapLog(io.Discard), transcript.ClientToRuntime, maxLog)
	logLine := func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range size / len(read) {
			s.add(read)
		}
		s.add([]byte("\n"))
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	if got := logLine(); got > maxLog+slack {
		t.Errorf("logging a %d MiB line allocated %d MiB, bound %d MiB", size>>20, got>>20, (maxLog+slack)>>20)
	}
	if got := logLine(); got > slack {
		t.Errorf("logging a second %d MiB line allocated %d MiB more, bound %d MiB", size>>20, got>>20, slack>>20)
	}
}

// The record of a frame is JSON that decodes to the frame's first bytes,
// however long it is.
func TestTapLogLongFrame(t *testing.T) {
	var out bytes.Buffer
	s := newLineSplitter(newTapLog(&out), transcript.ClientToRuntime, 3*logPiece)
	line := strings.Repeat("é<\"", logPiece) // pieces end inside a character
	for i := 0; i < len(line); i += 1000 {
		s.add([]byte(line[i:min(i+1000, len(line))]))
	}
	s.add([]byte("\n"))
	var rec tapRecord
	if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
		t.Fatal(err)
	}
	if want := line[:3*logPiece]; rec.Frame != strings.ToValidUTF8(want, "\ufffd") || !rec.Truncated || rec.Size != int64(len(line)) {
		t.Errorf("record of %d bytes, truncated %v, size %d; want the first %d bytes of %d", len(rec.Frame), rec.Truncated, rec.Size, len(want), len(line))
	}
}
