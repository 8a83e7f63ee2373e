package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/linerpc/linerpc/rpc"
	"pgregory.net/rapid"
)

// garbage lines that must be dropped without disturbing their neighbours.
var garbage = []string{
	``, `   `, "\r", `not json`, `{"id":1,`, `[]`, `null`, `{"jsonrpc":"2.0"}`,
	`{"ID":1,"Method":"note"}`, "\u0085{}", `{"id":1}{"id":2}`, `{'a':1}`,
	`{"id":"nobody","result":{}}`, `{"method":"note","params":{"text":1}}`,
}

// TestPropertyChunkingAndGarbageNeverLoseFrames feeds streams of valid
// notifications and requests, mixed with garbage, blank, CRLF, BOM-prefixed
// and oversize lines, cut into arbitrary chunks: every valid notification is
// delivered exactly once and in order, and every valid request is answered
// exactly once, whatever the chunking.
func TestPropertyChunkingAndGarbageNeverLoseFrames(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		const maxFrame = 256
		var stream bytes.Buffer
		var wantNotes []string
		var wantIDs []string
		n := rapid.IntRange(0, 40).Draw(rt, "frames")
		for i := range n {
			switch rapid.IntRange(0, 5).Draw(rt, "kind") {
			case 0, 1:
				text := fmt.Sprint(i)
				prefix := rapid.SampledFrom([]string{"", " ", "\uFEFF", "\u00A0\t"}).Draw(rt, "prefix")
				suffix := rapid.SampledFrom([]string{"", "\r", "  ", "\u3000"}).Draw(rt, "suffix")
				fmt.Fprintf(&stream, "%s{\"jsonrpc\":\"2.0\",\"method\":\"note\",\"params\":{\"text\":%q}}%s\n", prefix, text, suffix)
				wantNotes = append(wantNotes, text)
			case 2:
				id := fmt.Sprintf(`"r%d"`, i)
				fmt.Fprintf(&stream, `{"jsonrpc":"2.0","id":%s,"method":"echo","params":{"text":"%d"}}`+"\n", id, i)
				wantIDs = append(wantIDs, id)
			case 3:
				stream.WriteString(rapid.SampledFrom(garbage).Draw(rt, "garbage") + "\n")
			case 4:
				stream.WriteString(`{"jsonrpc":"2.0","method":"note","params":{"text":"` + strings.Repeat("o", maxFrame) + `"}}` + "\n")
			case 5:
				stream.WriteString("\n")
			}
		}
		if rapid.Bool().Draw(rt, "tail") {
			stream.WriteString(`{"jsonrpc":"2.0","method":"note","params":{"text":"tail"}}`) // unterminated: dropped
		}

		data := stream.Bytes()
		var chunks [][]byte
		for len(data) > 0 {
			k := rapid.IntRange(1, len(data)).Draw(rt, "cut")
			chunks = append(chunks, data[:k])
			data = data[k:]
		}

		var notes []string
		reg := echoRegistry()
		rpc.HandleNotification(reg, note, func(ctx context.Context, p echoParams) { notes = append(notes, p.Text) })
		var out syncBuffer
		c := rpc.NewConn(&chunkReader{chunks: chunks}, &out, &rpc.Options{Handler: reg, MaxFrameSize: maxFrame})
		c.Start()
		c.Wait()

		if strings.Join(notes, ",") != strings.Join(wantNotes, ",") {
			rt.Fatalf("notifications %v, want %v", notes, wantNotes)
		}
		var gotIDs []string
		for _, line := range bytes.Split(bytes.TrimSuffix(out.buf.Bytes(), []byte("\n")), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var f struct {
				ID     json.RawMessage
				Result *echoResult
			}
			if err := json.Unmarshal(line, &f); err != nil || f.Result == nil {
				rt.Fatalf("unexpected frame %q", line)
			}
			gotIDs = append(gotIDs, string(f.ID))
		}
		sort.Strings(gotIDs)
		sort.Strings(wantIDs)
		if strings.Join(gotIDs, ",") != strings.Join(wantIDs, ",") {
			rt.Fatalf("answered %v, want %v", gotIDs, wantIDs)
		}
	})
}
