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
	const frames = 3000
	logPath := filepath.Join(t.TempDir(), "tap.ndjson")
	script := fmt.Sprintf(`echo "$$" >&2; i=0; while [ $i -lt %d ]; do echo '{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"running"}}'; i=$((i+1)); done; exec sleep 1000`, frames)
	cmd := exec.Command(bin, "tap", "--log", logPath, "--", "sh", "-c", script)
	cmd.Env = testEnv()
	stdinR, stdinW, _ := os.Pipe() // held open: the client does not go away, it stops reading
	defer stdinW.Close()
	outR, outW, _ := os.Pipe()
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, outW, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdinR.Close()
	outW.Close()
	br := bufio.NewReader(outR)
	for range 3 {
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
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

// A frame of 200 MiB passes through whole while tap's memory stays
// bounded by --max-log-frame: the log holds its first bytes, marked as
// cut, and check reports it as not checked. (tap held whole lines: a
// 200 MiB line cost 1.3 GB.)
func TestTapHugeFrameBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("flood")
	}
	if runtime.GOOS != "linux" {
		t.Skip("ru_maxrss in KiB")
	}
	const (
		size   = 200 << 20
		maxLog = 1 << 20
		bound  = 96 << 20 // under half the frame: a copy of it would not fit
	)
	small := `{"jsonrpc":"2.0","method":"session.status","params":{"sessionId":"s","status":"idle"}}`
	logPath := filepath.Join(t.TempDir(), "tap.ndjson")
	script := fmt.Sprintf(`head -c %d /dev/zero | tr '\0' x; echo; echo '%s'`, size, small)
	cmd := exec.Command(bin, "tap", "--log", logPath, "--max-log-frame", strconv.Itoa(maxLog), "--", "sh", "-c", script)
	cmd.Env = testEnv()
	out, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	passed, err := io.Copy(io.Discard, out)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tap: %v; stderr:\n%s", err, stderr.String())
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	t.Logf("passed %d bytes; tap's peak RSS %d MiB (bound %d MiB)", passed, rss>>20, bound>>20)
	if want := int64(size + 1 + len(small) + 1); passed != want {
		t.Errorf("passed %d bytes, want %d", passed, want)
	}
	if rss > bound {
		t.Errorf("peak RSS %d MiB, bound %d MiB", rss>>20, bound>>20)
	}
	recs := readTapLog(t, logPath)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	if r := recs[0]; !r.Truncated || r.Size != size || len(r.Frame) != maxLog || strings.Trim(r.Frame, "x") != "" {
		t.Errorf("huge frame logged as truncated %v, size %d, %d bytes", r.Truncated, r.Size, len(r.Frame))
	}
	if r := recs[1]; r.Truncated || r.Frame != small {
		t.Errorf("small frame logged as %+v", r)
	}
	c := dshrpc(t, "", "check", logPath)
	c.wantCode(t, exitFailed) // 200 MiB is beyond the reader's limit
	wantContains(t, "check", c.stdout, fmt.Sprintf(":1: malformed: s2c a frame of %d bytes, longer than the maximum frame size", size))
	c = dshrpc(t, "", "check", "--max-frame-size", strconv.Itoa(size), logPath)
	c.wantCode(t, exitOK)
	wantContains(t, "check", c.stdout, fmt.Sprintf(":1: warning: not-checked: s2c a frame of %d bytes was logged cut to its first %d", size, maxLog))
}
