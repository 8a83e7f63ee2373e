//go:build unix

package main

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/linerpc/linerpc/internal/linetest"
)

// The tests that need a unix: sh, cat and sleep as servers, signals,
// process groups.

// TestTransportFailures: a server that cannot be reached, or that hangs
// up, exits, echoes or answers nothing, ends rpcurl with status 3, saying
// what it waited for.
func TestTransportFailures(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "tcp:" + l.Addr().String()
	l.Close() // nothing listens there any more

	runGolden(t, []goldenCase{
		{name: "fail-not-found", args: w("list", "--", "rpcurl-test-no-such-server"), code: exitTransport},
		{name: "fail-refused", args: w(refused, "list"), code: exitTransport},
		{name: "fail-exits", args: w("list", "--", "sh", "-c", "echo something went wrong >&2; exit 4"), code: exitTransport},
		{name: "fail-exits-verbose", args: w("-v", "call", "m", "--", "sh", "-c", "read -r line; echo not JSON"), code: exitTransport},
		{name: "fail-echo", args: w("list", "--", "cat"), code: exitTransport},
		{name: "fail-timeout", args: w("--timeout", "200ms", "list", "--", "sleep", "600"), code: exitTransport},
		{name: "fail-discover-result", args: w("list", "--", "sh", "-c", `read -r h; read -r b; read -r line; echo '{"jsonrpc":"2.0","id":"rpcurl-probe","result":{"openrpc":1}}'`), code: exitTransport},
	}, refused, "tcp:$REFUSED")
}

// TestInterrupted: Ctrl-C while waiting for the server ends rpcurl with
// status 130 at once: the child gets SIGTERM without waiting for it to
// exit at the end of its input, and is reaped.
func TestInterrupted(t *testing.T) {
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	log := newWatchedLog()
	sent := log.lineWith("sent as a Content-Length frame")
	done := make(chan result, 1)
	go func() {
		done <- runInvocation(t, invocation{args: w("-v", "list", "--", "sleep", "600"), ctx: ctx, stderr: log})
	}()
	linetest.Within(t, sent, "rpcurl to send its probe")
	interrupt()
	r := linetest.Within(t, done, "rpcurl to return once interrupted")
	r.wantCode(t, exitInterrupted)
	wantContains(t, "stderr", r.stderr, "rpcurl: interrupted while waiting for the answer to rpc.discover\n")
}

// TestSIGINT: the binary itself, sent SIGINT, exits with status 130.
func TestSIGINT(t *testing.T) {
	cmd := exec.Command(filepath.Join(bin, "rpcurl"), "-v", "list", "--", "sleep", "600")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := newWatchedLog()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 4096)
		for {
			n, err := stderr.Read(buf)
			log.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	linetest.Within(t, log.lineWith("sent as a Content-Length frame"), "rpcurl to send its probe")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	linetest.Within(t, copied, "rpcurl's stderr to end after SIGINT")
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("rpcurl after SIGINT: %v, want exit status %d", err, exitInterrupted)
	}
	linetest.Within(t, log.lineWith("rpcurl: interrupted while waiting for the answer to rpc.discover"), "the interruption to be said")
}

// TestGrandchildrenEnded: what the child started is ended with it.
func TestGrandchildrenEnded(t *testing.T) {
	script := `sleep 600 & echo "grandchild $!" >&2; exec "$0" serve`
	r := rpcurl(t, "", "-v", "call", "calc/add", `{"a":1,"b":2}`, "--compact", "--", "sh", "-c", script, filepath.Join(bin, "calc"))
	r.wantCode(t, exitOK)
	m := regexp.MustCompile(`grandchild (\d+)`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("the child did not say its grandchild's pid:\n%s", r.stderr)
	}
	pid, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
		t.Errorf("the grandchild %d outlived rpcurl", pid)
	}
}

// zombie reports whether pid has exited and waits for its parent (init,
// here) to reap it.
func zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // gone
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] == "Z"
}
