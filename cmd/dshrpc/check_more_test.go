package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Several files: findings and a summary per file, then the total; the
// exit status is that of the worst file.
func TestCheckManyFiles(t *testing.T) {
	dir := "../../testdata/transcripts/"
	clean, bad := dir+"text-turn.ndjson", dir+"errors.ndjson"
	r := dshrpc(t, "", "check", clean, bad, clean)
	r.wantCode(t, exitFailed)
	wantContains(t, "stdout", r.stdout,
		clean+": transcript, ",
		bad+":8: unknown-method: ",
		bad+": transcript, 21 lines, 21 frames (10 requests, 10 responses, 1 notification): 9 problems, 0 warnings (bad-payload 7, unknown-method 2)",
		"\ntotal: 3 files, ",
		"9 problems, 0 warnings (bad-payload 7, unknown-method 2)\n")
	if n := strings.Count(r.stdout, clean+": transcript, "); n != 2 {
		t.Errorf("%d summaries of %s, want 2:\n%s", n, clean, r.stdout)
	}
	if !strings.HasPrefix(r.stdout[strings.LastIndex(r.stdout[:len(r.stdout)-1], "\n")+1:], "total: ") {
		t.Errorf("the total is not the last line:\n%s", r.stdout)
	}
	r = dshrpc(t, "", "check", clean, clean)
	r.wantCode(t, exitOK)
	wantContains(t, "stdout", r.stdout, "total: 2 files, ", ": ok\n")
	// A file that cannot be read is an I/O failure, whatever the others
	// hold; they are checked.
	for _, readable := range []string{clean, bad} {
		r = dshrpc(t, "", "check", readable, "/no/such/transcript")
		r.wantCode(t, exitRuntime)
		wantContains(t, "stdout", r.stdout, readable+": transcript, ")
		wantContains(t, "stderr", r.stderr, "dshrpc check: open /no/such/transcript: no such file or directory")
	}
	// What the shell passes for testdata/transcripts/*.ndjson.
	files, _ := filepath.Glob(dir + "*.ndjson")
	r = dshrpc(t, "", append([]string{"check"}, files...)...)
	r.wantCode(t, exitFailed) // errors.ndjson
	wantContains(t, "stdout", r.stdout, fmt.Sprintf("total: %d files, ", len(files)))
}

func rec(dir, frame string) string {
	b, _ := json.Marshal(map[string]string{"dir": dir, "frame": frame})
	return string(b) + "\n"
}

// The initialize exchange of a clean transcript; the rules themselves are
// tested with internal/transcript.
const (
	tInit   = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"cwd":"/w","provider":"deepseek-official","model":"m"}}`
	tInitOK = `{"jsonrpc":"2.0","id":1,"result":{"serverInfo":{"name":"deepseek-harness-sdk-runtime","version":"0.0.1"}}}`
)

// A line longer than the maximum frame size is reported as a reader
// drops it, raw or in a transcript, and the lines after it are checked.
func TestCheckOversize(t *testing.T) {
	big := `{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"` + strings.Repeat("s", 3000) + `","status":"idle"}}`
	raw := tInit + "\n" + big + "\n" + tInitOK + "\n"
	r := dshrpc(t, raw, "check", "--max-frame-size", "1000")
	r.wantCode(t, exitFailed)
	wantContains(t, "stdout", r.stdout,
		fmt.Sprintf("<stdin>:2: malformed: a line of %d bytes, longer than the maximum frame size (1000): the reader skips it", len(big)),
		"<stdin>: raw frames, 3 lines, 3 frames (1 request, 1 response, 0 notifications): 1 problem")
	r = dshrpc(t, rec("c2s", tInit)+rec("s2c", big)+rec("s2c", tInitOK), "check", "--max-frame-size", "2000")
	r.wantCode(t, exitFailed)
	wantContains(t, "stdout", r.stdout, fmt.Sprintf("<stdin>:2: malformed: s2c a frame of %d bytes, longer than the maximum frame size (2000)", len(big)))
	// Under the limit, the same frame is fine.
	r = dshrpc(t, raw, "check")
	r.wantCode(t, exitOK)
}

// genReader produces a stream from next, chunk by chunk, without ever
// holding more than a chunk: input of any size that is never on disk.
type genReader struct {
	buf  []byte
	next func(dst []byte) []byte // appends the next chunk; nil at the end
	done bool
}

func (g *genReader) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.done {
			return 0, io.EOF
		}
		b := g.next(g.buf[:0])
		if b == nil {
			g.done = true
			continue
		}
		g.buf = b
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// checkRSS runs dshrpc check on what gen produces and returns its output
// and peak resident set size in bytes.
func checkRSS(t *testing.T, gen io.Reader, args ...string) (string, int64) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"check"}, args...)...)
	cmd.Stdin = gen
	var out headTail
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	rss := runFlood(t, cmd, "dshrpc check of a generated transcript")
	return out.String(), rss
}

// headTail keeps the first and the last 64 KiB written to it.
type headTail struct{ head, tail []byte }

const headTailMax = 64 << 10

func (h *headTail) Write(b []byte) (int, error) {
	if room := headTailMax - len(h.head); room > 0 {
		h.head = append(h.head, b[:min(room, len(b))]...)
	}
	h.tail = append(h.tail, b...)
	if len(h.tail) > 2*headTailMax {
		h.tail = append(h.tail[:0], h.tail[len(h.tail)-headTailMax:]...)
	}
	return len(b), nil
}

func (h *headTail) String() string {
	t := h.tail
	if len(t) > headTailMax {
		t = t[len(t)-headTailMax:]
	}
	return string(h.head) + "\n…\n" + string(t)
}

// Transcripts of hundreds of MiB, generated as they are read (never on
// disk), are checked in memory bounded by the frame limit: a clean one of
// 100 MiB with ever new ids and sessions, two million one-byte junk lines
// (each a finding, printed as found), and one line of 200 MiB (skipped
// unread). dshrpc check took 100 MiB of RSS for a clean 100 MiB, more than
// 1.5 GiB for 26 million junk lines, and 1.5 GiB for a 200 MiB line, when
// it kept its findings and answered ids and read lines without a limit.
func TestCheckFloodBoundedMemory(t *testing.T) {
	startFlood(t, "500 MiB of transcripts through dshrpc check, about 40 s")
	const bound = 80 << 20 // peak RSS of dshrpc check, whatever the input

	t.Run("clean-100MiB", func(t *testing.T) {
		const size = 100 << 20
		produced, turn := 0, 0
		delta := strings.Repeat("x", 256)
		g := &genReader{next: func(b []byte) []byte {
			if produced >= size {
				return nil
			}
			if turn == 0 {
				b = append(b, rec("c2s", tInit)+rec("s2c", tInitOK)...)
			}
			turn++
			s := fmt.Sprintf("s%d", turn) // a new session per turn
			id := turn * 10
			b = fmt.Appendf(b, `{"dir":"c2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"%s\",\"contentBlocks\":[{\"type\":\"text\",\"text\":\"hi\"}]}}"}`+"\n", id, s)
			b = fmt.Appendf(b, `{"dir":"s2c","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"session.event\",\"params\":{\"sessionId\":\"%s\",\"event\":{\"type\":\"agent/inbox/spliced\",\"seq\":0,\"time\":1,\"data\":{\"target\":\"next-turn\",\"start\":0,\"inserted\":[{\"id\":\"m%d\",\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"source\":{\"kind\":\"user\"}}]}}}}"}`+"\n", s, id)
			b = fmt.Appendf(b, `{"dir":"s2c","frame":"{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"messageId\":\"m%d\"}}"}`+"\n", id, id)
			for i := 1; i <= 8; i++ {
				b = fmt.Appendf(b, `{"dir":"s2c","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"session.event\",\"params\":{\"sessionId\":\"%s\",\"event\":{\"type\":\"assistant/chunk\",\"seq\":%d,\"time\":1,\"data\":{\"turn\":1,\"step\":1,\"chunk\":{\"type\":\"text-delta\",\"index\":0,\"text\":\"%s\"}}}}}"}`+"\n", s, i, delta)
			}
			b = fmt.Appendf(b, `{"dir":"s2c","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"session.status\",\"params\":{\"sessionId\":\"%s\",\"status\":\"idle\"}}"}`+"\n", s)
			produced += len(b)
			return b
		}}
		out, rss := checkRSS(t, g)
		t.Logf("%d MiB, %d turns: peak RSS %d MiB (bound %d MiB): %s", produced>>20, turn, rss>>20, bound>>20, strings.TrimSpace(out))
		if !strings.HasSuffix(out, ": ok\n") {
			t.Errorf("output %.2000q, want ok", out)
		}
		if rss > bound {
			t.Errorf("peak RSS %d MiB, bound %d MiB", rss>>20, bound>>20)
		}
	})

	t.Run("junk-and-a-200MiB-line", func(t *testing.T) {
		const junk = 2_000_000
		step := 0
		chunk := []byte(strings.Repeat("x\n", 32<<10))
		long := 0
		g := &genReader{next: func(b []byte) []byte {
			step++
			switch {
			case step <= junk/(32<<10): // junk lines, in 64 KiB chunks
				return append(b, chunk...)
			case long < 200<<20: // one line of 200 MiB
				long += 1 << 20
				return append(b, strings.Repeat("y", 1<<20)...)
			case long == 200<<20:
				long++
				return append(b, '\n')
			}
			return nil
		}}
		out, rss := checkRSS(t, g, "--max-frame-size", "4194304")
		n := junk / (32 << 10) * (32 << 10)
		t.Logf("%d junk lines and a line of 200 MiB: peak RSS %d MiB (bound %d MiB)", n, rss>>20, bound>>20)
		if want := fmt.Sprintf(":%d: malformed: a line of %d bytes, longer than the maximum frame size (4194304)", n+1, 200<<20); !strings.Contains(out, want) {
			t.Errorf("output does not contain %q; its end:\n%s", want, out[max(0, len(out)-2000):])
		}
		if rss > bound {
			t.Errorf("peak RSS %d MiB, bound %d MiB", rss>>20, bound>>20)
		}
	})
}

// What dshrpc run --json prints is a transcript dshrpc check accepts as
// clean, warnings included, so that a script can check a run it recorded.
func TestCheckAcceptsRunJSON(t *testing.T) {
	for _, prompt := range []string{"hi", "/tool echo hi", "/subagent ask the child"} {
		run := dshrpc(t, "", "run", "--json", prompt)
		run.wantCode(t, exitOK)
		r := dshrpc(t, run.stdout, "check", "--strict")
		r.wantCode(t, exitOK)
		if !strings.HasSuffix(r.stdout, ": ok\n") || strings.Contains(r.stdout, " 0 frames") {
			t.Errorf("%s: check of run --json: %s", prompt, r.stdout)
		}
	}
}
