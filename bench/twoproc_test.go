package bench

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// The two-process suite: workloads 1 to 4 with the client and the server in
// two processes, as a DeepSeek Harness client and its runtime are. The
// benchmark process is the client; the server is a child process (the test
// binary again, process_test.go) that serves on its stdin and stdout, which
// are blocking pipes in the child, and the client writes and reads the
// other ends of those pipes, which are in its poller. Every hand-off
// between goroutines that wait for a pipe may then wake a thread of one
// process or the other, where in one process it is a goroutine switch.
//
// Benchmarks are named BenchmarkTwoProcessWORKLOAD/lib=NAME. Each run of a
// benchmark function (the testing package runs one several times while it
// sizes b.N) starts its own child, warms the connection up, and then
// measures: the child's start and the warm-up are outside the timed region.
// Besides ns/op (wall time), each reports per op, over the timed region:
//
//   - cpu-ns/op: the CPU time (user and system) of both processes;
//     client-cpu-ns/op and server-cpu-ns/op each one's (getrusage
//     RUSAGE_SELF of each process, the child's read by itself and sent over
//     its control pipe);
//   - client-vcsw/op and server-vcsw/op: the voluntary context switches of
//     each process (getrusage's ru_nvcsw, every thread): how often one of
//     its threads waited, for a pipe, a futex or a timer, and was woken;
//   - allocs/op and B/op: the heap allocations of both processes (they
//     replace -benchmem's, which would count the client's alone);
//     client-allocs/op, server-allocs/op, client-B/op and server-B/op each
//     one's (runtime.MemStats Mallocs and TotalAlloc).

// twoProcContenders are the contenders of the suite: the floor (lock-step),
// the pipelined floor (one goroutine hand-off per response), linerpc and
// go.lsp.dev/jsonrpc2 with each codec.
var twoProcContenders = []*contender{
	floorContender,
	floorPipelinedContender,
	linerpcContender,
	lspdevContender,
	lspdevGojsonContender,
}

// forEachTwoProc runs fn as the sub-benchmark lib=NAME of every contender of
// the suite.
func forEachTwoProc(b *testing.B, fn func(b *testing.B, c *contender)) {
	for _, c := range twoProcContenders {
		b.Run("lib="+c.name, func(b *testing.B) { fn(b, c) })
	}
}

// forEachTwoProcT is forEachTwoProc for tests.
func forEachTwoProcT(t *testing.T, fn func(t *testing.T, c *contender)) {
	for _, c := range twoProcContenders {
		t.Run("lib="+c.name, func(t *testing.T) { fn(t, c) })
	}
}

// twoProc is a client and the server process it is connected to.
type twoProc struct {
	p  *serverProcess
	cl client
}

// connectTwoProc starts a server process serving work with c and dials it
// with c; h holds the client's handlers. The process is stopped, and the
// client closed, when tb's run ends.
func connectTwoProc(tb testing.TB, work string, c *contender, h *handlers) *twoProc {
	p, err := startServerProcess(work, c.name)
	if err != nil {
		tb.Fatal(err)
	}
	tp := &twoProc{p: p, cl: c.dial(p.end(), h)}
	tb.Cleanup(func() {
		if err := p.stop(); err != nil {
			tb.Error(err)
		}
		tp.cl.close()
	})
	return tp
}

// procMeter measures what both processes consume over a timed region.
type procMeter struct {
	p              *serverProcess
	client, server usage
}

func startProcMeter(b *testing.B, p *serverProcess) *procMeter {
	b.ReportAllocs() // prints allocs/op and B/op, which stop replaces
	s, err := p.usage()
	if err != nil {
		b.Fatal(err)
	}
	return &procMeter{p: p, server: s, client: selfUsage()}
}

// stop reports the metrics of the suite for the b.N ops since start.
func (m *procMeter) stop(b *testing.B) {
	c := selfUsage()
	s, err := m.p.usage()
	if err != nil {
		b.Fatal(err)
	}
	n := float64(b.N)
	cpuC, cpuS := float64(c.cpu-m.client.cpu)/n, float64(s.cpu-m.server.cpu)/n
	allocsC, allocsS := float64(c.mallocs-m.client.mallocs)/n, float64(s.mallocs-m.server.mallocs)/n
	bytesC, bytesS := float64(c.bytes-m.client.bytes)/n, float64(s.bytes-m.server.bytes)/n
	b.ReportMetric(cpuC+cpuS, "cpu-ns/op")
	b.ReportMetric(cpuC, "client-cpu-ns/op")
	b.ReportMetric(cpuS, "server-cpu-ns/op")
	b.ReportMetric(float64(c.vcsw-m.client.vcsw)/n, "client-vcsw/op")
	b.ReportMetric(float64(s.vcsw-m.server.vcsw)/n, "server-vcsw/op")
	// The testing package prints these two as integers, truncated: rounded
	// first, they are the nearest.
	b.ReportMetric(math.Round(allocsC+allocsS), "allocs/op")
	b.ReportMetric(allocsC, "client-allocs/op")
	b.ReportMetric(allocsS, "server-allocs/op")
	b.ReportMetric(math.Round(bytesC+bytesS), "B/op")
	b.ReportMetric(bytesC, "client-B/op")
	b.ReportMetric(bytesS, "server-B/op")
}

// warmUpCalls is how many calls a connection makes before it is measured.
const warmUpCalls = 16

// BenchmarkTwoProcessRoundTrip is workload 1 across processes: one call at
// a time.
func BenchmarkTwoProcessRoundTrip(b *testing.B) {
	forEachTwoProc(b, func(b *testing.B, c *contender) {
		tp := connectTwoProc(b, "RoundTrip", c, &handlers{})
		p := helloPrompt
		for range warmUpCalls {
			if err := checkReply(tp.cl.callPrompt(bg, &p)); err != nil {
				b.Fatal(err)
			}
		}
		m := startProcMeter(b, tp.p)
		for b.Loop() {
			if err := checkReply(tp.cl.callPrompt(bg, &p)); err != nil {
				b.Fatal(err)
			}
		}
		m.stop(b)
	})
}

// BenchmarkTwoProcessConcurrent is workload 2 across processes: 64
// goroutines calling on one connection; an op is one call.
func BenchmarkTwoProcessConcurrent(b *testing.B) {
	forEachTwoProc(b, func(b *testing.B, c *contender) {
		tp := connectTwoProc(b, "Concurrent", c, &handlers{})
		if err := callConcurrently(tp.cl, warmUpCalls*callers); err != nil {
			b.Fatal(err)
		}
		m := startProcMeter(b, tp.p)
		b.ResetTimer()
		if err := callConcurrently(tp.cl, b.N); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		m.stop(b)
	})
}

// BenchmarkTwoProcessStream is workload 3 across processes: the server
// process notifies b.N events, which the client decodes and checks, each
// sequence number once and in order; the clock runs from the command that
// starts the stream to the last event received.
func BenchmarkTwoProcessStream(b *testing.B) {
	forEachTwoProc(b, func(b *testing.B, c *contender) {
		var rec atomic.Pointer[eventRecorder]
		tp := connectTwoProc(b, "Stream", c, &handlers{event: func(e *Event) { rec.Load().handle(e) }})
		if err := streamEvents(tp.p, &rec, warmUpCalls, c); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(eventFrameSize))
		m := startProcMeter(b, tp.p)
		b.ResetTimer()
		if err := streamEvents(tp.p, &rec, b.N, c); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		m.stop(b)
	})
}

// streamEvents has the server process notify n events and waits for them.
func streamEvents(p *serverProcess, rec *atomic.Pointer[eventRecorder], n int, c *contender) error {
	r := newEventRecorder(n)
	rec.Store(r)
	if err := p.send("stream " + strconv.Itoa(n)); err != nil {
		return err
	}
	reordered, err := r.wait(time.Minute)
	if err != nil {
		return err
	}
	if _, err := p.reply(); err != nil {
		return err
	}
	if reordered > 0 && c.unordered == "" {
		return fmt.Errorf("%d of %d events out of order", reordered, n)
	}
	return nil
}

// BenchmarkTwoProcessLarge is workload 4 across processes: one call with a
// 1 MiB base64 string param.
func BenchmarkTwoProcessLarge(b *testing.B) {
	forEachTwoProc(b, func(b *testing.B, c *contender) {
		tp := connectTwoProc(b, "Large", c, &handlers{})
		p := Blob{Data: blobData}
		for range 2 {
			if err := checkReply(tp.cl.callBlob(bg, &p)); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(blobSize)
		m := startProcMeter(b, tp.p)
		for b.Loop() {
			if err := checkReply(tp.cl.callBlob(bg, &p)); err != nil {
				b.Fatal(err)
			}
		}
		m.stop(b)
	})
}

// The short tests run each workload of the suite once, small, for every
// contender, every reply checked.

func TestTwoProcessRoundTrip(t *testing.T) {
	forEachTwoProcT(t, func(t *testing.T, c *contender) {
		tp := connectTwoProc(t, "RoundTrip", c, &handlers{})
		for range 3 {
			if err := checkReply(tp.cl.callPrompt(bg, &helloPrompt)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestTwoProcessConcurrent(t *testing.T) {
	forEachTwoProcT(t, func(t *testing.T, c *contender) {
		tp := connectTwoProc(t, "Concurrent", c, &handlers{})
		if err := callConcurrently(tp.cl, 4*callers); err != nil {
			t.Fatal(err)
		}
	})
}

func TestTwoProcessStream(t *testing.T) {
	forEachTwoProcT(t, func(t *testing.T, c *contender) {
		var rec atomic.Pointer[eventRecorder]
		tp := connectTwoProc(t, "Stream", c, &handlers{event: func(e *Event) { rec.Load().handle(e) }})
		if err := streamEvents(tp.p, &rec, 500, c); err != nil {
			t.Fatal(err)
		}
	})
}

func TestTwoProcessLarge(t *testing.T) {
	forEachTwoProcT(t, func(t *testing.T, c *contender) {
		tp := connectTwoProc(t, "Large", c, &handlers{})
		p := Blob{Data: blobData}
		for range 2 {
			if err := checkReply(tp.cl.callBlob(bg, &p)); err != nil {
				t.Fatal(err)
			}
		}
		// A corrupted payload must fail, not pass: the server's check is live.
		bad := Blob{Data: blobData[:len(blobData)-4] + "AAAA"}
		if bad.Data != blobData {
			if _, err := tp.cl.callBlob(bg, &bad); err == nil {
				t.Fatal("a corrupted blob was accepted")
			}
		}
	})
}

// TestTwoProcessShape checks what the suite claims to measure: the server
// process reads and writes blocking pipes, as a child reading os.Stdin
// does, with the client's GOMAXPROCS, while the client's ends are in its
// poller; and the usage it reports grows with the calls it serves.
func TestTwoProcessShape(t *testing.T) {
	tp := connectTwoProc(t, "RoundTrip", linerpcContender, &handlers{})
	stdio, err := tp.p.command("stdio")
	if err != nil {
		t.Fatal(err)
	}
	if want := "stdin=blocking stdout=blocking gomaxprocs=" + strconv.Itoa(runtime.GOMAXPROCS(0)); stdio != want {
		t.Errorf("server process: %s, want %s", stdio, want)
	}
	for _, f := range []*os.File{tp.p.stdin, tp.p.stdout} {
		// Not f.Fd(), which would make it blocking.
		sc, err := f.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := sc.Control(func(fd uintptr) { got = blocking(int(fd)) }); err != nil {
			t.Fatal(err)
		}
		if got != "nonblocking" {
			t.Errorf("client's end %s: %s, want nonblocking (in the poller)", f.Name(), got)
		}
	}
	before, err := tp.p.usage()
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		if err := checkReply(tp.cl.callPrompt(bg, &helloPrompt)); err != nil {
			t.Fatal(err)
		}
	}
	after, err := tp.p.usage()
	if err != nil {
		t.Fatal(err)
	}
	if after.cpu <= before.cpu || after.mallocs < before.mallocs+200 || after.bytes <= before.bytes {
		t.Errorf("server usage over 200 calls: %+v, then %+v", before, after)
	}
}
