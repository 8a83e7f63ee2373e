package fuzz

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"github.com/linerpc/linerpc/internal/vectortest"
)

// maxSeedLine bounds the lines taken as seeds.
const maxSeedLine = 2048

var update = flag.Bool("update", false, "rewrite the seed corpora under testdata/fuzz from the vectors and transcripts")

// projectLines returns the frames of the project's wire vectors (as sent,
// raw lines included, one line per element of a chunked vector) and of the
// recorded transcripts, deduplicated, in a stable order.
func projectLines(t *testing.T) [][]byte {
	t.Helper()
	seen := map[string]bool{}
	var out [][]byte
	add := func(b []byte) {
		// Long lines make slow seeds and add nothing the short ones lack.
		if len(b) > 0 && len(b) <= maxSeedLine && !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, append([]byte(nil), b...))
		}
	}
	files, _ := filepath.Glob(filepath.Join(vectortest.Dir(), "*.ndjson"))
	sort.Strings(files)
	for _, f := range files {
		vs, err := vectortest.Load(filepath.Base(f))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			add(compactJSON(v.Frame))
			if v.Raw != nil {
				add([]byte(*v.Raw))
			}
			for _, fr := range v.Frames {
				add(compactJSON(fr))
			}
		}
	}
	files, _ = filepath.Glob(filepath.Join(vectortest.Dir(), "..", "transcripts", "*.ndjson"))
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var rec struct{ Frame string }
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			add([]byte(rec.Frame))
		}
	}
	return out
}

// corpusFile renders one seed in the format of go test fuzz v1.
func corpusFile(args ...any) []byte {
	var b bytes.Buffer
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		switch v := a.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%s)\n", strconv.Quote(string(v)))
		case bool:
			fmt.Fprintf(&b, "bool(%v)\n", v)
		case uint8:
			fmt.Fprintf(&b, "byte(%s)\n", strconv.QuoteRune(rune(v)))
		case uint16:
			fmt.Fprintf(&b, "uint16(%d)\n", v)
		}
	}
	return b.Bytes()
}

// seedCorpus returns the generated seed files of every target, by path.
func seedCorpus(t *testing.T) map[string][]byte {
	ls := projectLines(t)
	files := map[string][]byte{}
	seenSDK := map[string]bool{}
	put := func(target string, args ...any) {
		body := corpusFile(args...)
		sum := sha256.Sum256(body)
		dir := filepath.Join("testdata", "fuzz", target)
		if target == "FuzzScan" {
			// The scanner's target lives beside the scanner (its checks
			// use the package's unexported test helpers).
			dir = filepath.Join("..", "internal", "wire", dir)
		}
		files[filepath.Join(dir, fmt.Sprintf("seed-%x", sum[:8]))] = body
	}
	var params [][]byte
	for _, l := range ls {
		put("FuzzScan", l)
		put("FuzzDispatch", l, len(l)%2 == 0)
		put("FuzzResponses", l, uint8(len(l)))
		var env struct {
			Params, Result json.RawMessage
		}
		if json.Unmarshal(l, &env) == nil {
			for _, p := range []json.RawMessage{env.Params, env.Result} {
				if len(p) > 0 {
					params = append(params, p)
				}
			}
		}
	}
	// A few payloads of each shape (member names and event type): the
	// target is slow per input, and near-duplicates add no coverage.
	shapes := map[string]int{}
	putSDK := func(b []byte) {
		var m map[string]json.RawMessage
		json.Unmarshal(b, &m)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var ev struct{ Type string }
		json.Unmarshal(m["event"], &ev)
		shape := fmt.Sprint(keys, string(m["type"]), ev.Type)
		if !seenSDK[string(b)] && shapes[shape] < 2 {
			seenSDK[string(b)] = true
			shapes[shape]++
			put("FuzzSDKPayloads", b)
		}
	}
	for _, p := range params {
		putSDK(p)
		var ev struct{ Event json.RawMessage }
		if json.Unmarshal(p, &ev) == nil && len(ev.Event) > 0 {
			putSDK(ev.Event)
		}
	}
	// Framing: each transcript as one stream, cut in a few ways.
	tr, _ := filepath.Glob(filepath.Join(vectortest.Dir(), "..", "transcripts", "*.ndjson"))
	sort.Strings(tr)
	for i, f := range tr {
		data, _ := os.ReadFile(f)
		var stream []byte
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var rec struct{ Frame string }
			json.Unmarshal(sc.Bytes(), &rec)
			stream = append(append(stream, rec.Frame...), '\n')
		}
		if len(stream) > 64<<10 {
			continue
		}
		cuts := []byte{byte(1 + i), 0, 255, 7, byte(13 * i)}
		put("FuzzLineFraming", stream, cuts[:i%5], uint16(300+i*1000))
		// Its first frames with Content-Length headers, garbage between
		// them (header_test.go: pieces cut at NUL, garbage and bodies in
		// turn), in a header style and a chunking of their own.
		garbage := []string{"", "\r\n", "garbage\n", "X-Trace: 1\r\n\r\n{}", "Content-Length: 2x\r\n\r\n"}
		var framed []byte
		frames := bytes.SplitAfter(bytes.TrimSuffix(stream, []byte("\n")), []byte("\n"))
		for j, line := range frames[:min(len(frames), 12)] {
			framed = append(append(append(framed, garbage[(i+j)%len(garbage)]...), 0), bytes.TrimSuffix(line, []byte("\n"))...)
			framed = append(framed, 0)
		}
		put("FuzzHeaderReader", framed, cuts[:(i+2)%5], uint16(300+i*1000), uint8(i*21), i%3 == 0)
		put("FuzzHeaderFraming", framed, cuts[:(i+3)%5], uint16(300+i*1000), uint8(i*37), i%3 == 1)
	}
	return files
}

// TestSeedCorpus checks that the seed corpora generated from the vectors
// and transcripts are checked in; with -update it writes them.
func TestSeedCorpus(t *testing.T) {
	for path, body := range seedCorpus(t) {
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, body, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, body) {
			t.Errorf("%s is missing or stale: run go test ./fuzz -run TestSeedCorpus -update", path)
		}
	}
}
