package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/proctest"
	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/rpc/rpctest"
)

// tapRecord is a record of a tap log, as tap's usage describes it.
type tapRecord struct {
	T            string `json:"t"`
	Dir          string `json:"dir"`
	Frame        string `json:"frame"`
	Unterminated bool   `json:"unterminated,omitempty"`
	Truncated    bool   `json:"truncated,omitempty"`
	Size         int64  `json:"size,omitempty"` // of a truncated frame
}

// readTapLog decodes a tap log.
func readTapLog(t *testing.T, path string) []tapRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []tapRecord
	dec := json.NewDecoder(f)
	for {
		var r tapRecord
		if err := dec.Decode(&r); err == io.EOF {
			return recs
		} else if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
}

// The client closes tap's stdout after three frames of 3000, and keeps its
// own stdin open: tap does not die of SIGPIPE, logs every frame the
// runtime wrote, closes the runtime's input, ends it with SIGTERM when it
// does not exit, and exits with its status; nothing is left running.
func TestTapClientStopsReading(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	t.Parallel() // it waits out tap's grace before SIGTERM
	const frames = 3000
	logPath := filepath.Join(t.TempDir(), "tap.ndjson")
	script := fmt.Sprintf(`echo "$$" >&2; i=0; while [ $i -lt %d ]; do echo '{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"running"}}'; i=$((i+1)); done; exec sleep 1000`, frames)
	cmd := exec.Command(bin, "tap", "--log", logPath, "--", "sh", "-c", script)
	cmd.Env = testEnv()
	stdinR, stdinW, _ := os.Pipe() // held open: the client does not go away, it stops reading
	defer stdinW.Close()
	outR, outW, _ := os.Pipe()
	var stderr rpctest.LockedBuffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, outW, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdinR.Close()
	outW.Close()
	br := bufio.NewReader(outR)
	outR.SetReadDeadline(time.Now().Add(testTimeout))
	for i := range 3 {
		if _, err := br.ReadString('\n'); err != nil {
			cmd.Process.Kill()
			t.Fatalf("frame %d of the runtime's through tap, awaited for up to %s: %v; stderr:\n%s", i+1, testTimeout, err, stderr.String())
		}
	}
	outR.Close() // the client stops reading
	start := time.Now()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-time.After(testTimeout):
		cmd.Process.Kill()
		t.Fatalf("tap did not exit after its client stopped reading; stderr:\n%s", stderr.String())
	}
	code := cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("tap was killed by %v (err %v); stderr:\n%s", ws.Signal(), err, stderr.String())
	}
	t.Logf("tap exited %d after %v; stderr:\n%s", code, time.Since(start).Round(time.Millisecond), stderr.String())
	if code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit status %d, want %d (the runtime's, ended by SIGTERM)", code, 128+int(syscall.SIGTERM))
	}
	wantContains(t, "stderr", stderr.String(), "the client stopped reading", "sending terminated")
	n := 0
	for _, r := range readTapLog(t, logPath) {
		if r.Dir == "s2c" {
			n++
		}
	}
	if n != frames {
		t.Errorf("%d s2c frames logged, want %d", n, frames)
	}
	pid, perr := strconv.Atoi(strings.SplitN(stderr.String(), "\n", 2)[0])
	if perr != nil {
		t.Fatalf("no runtime pid on stderr: %q", stderr.String())
	}
	if !proctest.Gone(t, pid) {
		t.Errorf("runtime %d still running after tap exited", pid)
	}
}

// countingWriter counts what is written to it, and keeps none of it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(b []byte) (int, error) { w.n += int64(len(b)); return len(b), nil }

// A frame far longer than --max-log-frame passes through whole while tap's
// memory stays bounded by the limit: the log holds its first bytes, marked
// as cut, and check reports it as not checked. With a limit of 1 MiB, a
// 200 MiB frame (tap held whole lines: it cost 1.3 GB); with the default
// limit of 64 MiB, a 100 MiB frame (tap peaked at about 410 MiB: it grew
// the line's first bytes by appending, then copied them twice to encode
// the record).
func TestTapHugeFrameBoundedMemory(t *testing.T) {
	startFlood(t, "300 MiB through dshrpc tap, about 10 s")
	small := `{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"idle"}}`
	for _, c := range []struct {
		name         string
		size, maxLog int
		bound        int64
	}{
		{"200MiB-frame-1MiB-logged", 200 << 20, 1 << 20, 64 << 20}, // a third of the frame
		{"100MiB-frame-64MiB-logged", 100 << 20, rpc.DefaultMaxFrameSize, 64<<20 + 24<<20},
	} {
		t.Run(c.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "tap.ndjson")
			script := fmt.Sprintf(`head -c %d /dev/zero | tr '\0' x; echo; echo '%s'`, c.size, small)
			cmd := exec.Command(bin, "tap", "--log", logPath, "--max-log-frame", strconv.Itoa(c.maxLog), "--", "sh", "-c", script)
			var passed countingWriter
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &passed, &stderr
			rss := runFlood(t, cmd, fmt.Sprintf("tap passing a frame of %d MiB", c.size>>20))
			if code := cmd.ProcessState.ExitCode(); code != 0 {
				t.Fatalf("tap exited %d; stderr:\n%s", code, stderr.String())
			}
			t.Logf("passed %d bytes; tap's peak RSS %d MiB (bound %d MiB)", passed.n, rss>>20, c.bound>>20)
			if want := int64(c.size + 1 + len(small) + 1); passed.n != want {
				t.Errorf("passed %d bytes, want %d", passed.n, want)
			}
			if rss > c.bound {
				t.Errorf("peak RSS %d MiB, bound %d MiB", rss>>20, c.bound>>20)
			}
			recs := readTapLog(t, logPath)
			if len(recs) != 2 {
				t.Fatalf("%d records, want 2", len(recs))
			}
			if r := recs[0]; !r.Truncated || r.Size != int64(c.size) || len(r.Frame) != c.maxLog || strings.Trim(r.Frame, "x") != "" {
				t.Errorf("huge frame logged as truncated %v, size %d, %d bytes", r.Truncated, r.Size, len(r.Frame))
			}
			if r := recs[1]; r.Truncated || r.Frame != small {
				t.Errorf("small frame logged as %+v", r)
			}
			ch := dshrpc(t, "", "check", logPath)
			ch.wantCode(t, exitFailed) // beyond the reader's limit
			wantContains(t, "check", ch.stdout, fmt.Sprintf(":1: malformed: s2c a frame of %d bytes, longer than the maximum frame size", c.size))
			ch = dshrpc(t, "", "check", "--max-frame-size", strconv.Itoa(c.size), logPath)
			ch.wantCode(t, exitOK)
			wantContains(t, "check", ch.stdout, fmt.Sprintf(":1: warning: not-checked: s2c a frame of %d bytes was logged cut to its first %d", c.size, c.maxLog))
		})
	}
}
