package replaytest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/replay"
	"github.com/linerpc/linerpc/sdkproto/replay/replaytest"
)

// load loads a recorded transcript of testdata/transcripts.
func load(t testing.TB, name string) *replay.Recording {
	t.Helper()
	f, err := os.Open("../../../testdata/transcripts/" + name + ".ndjson")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := replay.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// bound is a context that ends after MaxWait, so that no call of these
// tests can hang.
func bound(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), replaytest.MaxWait)
	t.Cleanup(cancel)
	return ctx
}

// initialize initializes c with the recording's params.
func initialize(t testing.TB, ctx context.Context, rec *replay.Recording, c *sdkproto.Client) {
	t.Helper()
	p, ok := rec.InitializeParams()
	if !ok {
		t.Fatal("the recording has no initialize")
	}
	if _, err := c.Initialize(ctx, p); err != nil {
		t.Fatalf("initialize: %v", err)
	}
}

// TestClientFollowsTheRecording: a client that follows the recording to
// its end fails nothing, and its cleanup (the shutdown request) ends the
// replay.
func TestClientFollowsTheRecording(t *testing.T) {
	rec := load(t, "text-turn")
	rt := &recordingTB{TB: t}
	ctx := bound(t)
	func() {
		defer rt.cleanup()
		c := replaytest.Client(rt, rec, nil)
		initialize(t, ctx, rec, c)
		res, err := c.Run(ctx, "main", sdkproto.TextBlock("say hi"))
		if err != nil || res.FinalResponse != "hello from the fake model" {
			t.Errorf("run: %+v, %v", res, err)
		}
	}()
	if len(rt.errors) != 0 {
		t.Errorf("the cleanup reported %q", rt.errors)
	}
}

// TestCleanupReportsDeparture: Client's cleanup fails a test whose client
// departed without the test taking the error.
func TestCleanupReportsDeparture(t *testing.T) {
	rec := load(t, "text-turn")
	rt := &recordingTB{TB: t}
	ctx := bound(t)
	func() {
		defer rt.cleanup()
		c := replaytest.Client(rt, rec, &sdkproto.ClientOptions{ShutdownTimeout: time.Minute})
		initialize(t, ctx, rec, c)
		c.Run(ctx, "main", sdkproto.TextBlock("say bye"))
	}()
	if len(rt.errors) != 1 || !strings.Contains(rt.errors[0], "replay: the client departed from the recording at line 3") {
		t.Errorf("the cleanup reported %q", rt.errors)
	}
}

// TestWaitTakesTheDeparture: once the test took Serve's error with Wait,
// the cleanup no longer reports it.
func TestWaitTakesTheDeparture(t *testing.T) {
	rec := load(t, "text-turn")
	rt := &recordingTB{TB: t}
	ctx := bound(t)
	var err error
	func() {
		defer rt.cleanup()
		r := replaytest.Start(rt, rec, nil)
		initialize(t, ctx, rec, r.Client)
		r.Client.Run(ctx, "main", sdkproto.TextBlock("say bye"))
		err = r.Wait()
	}()
	if d := (*replay.Departure)(nil); !errors.As(err, &d) || d.Line != 3 {
		t.Errorf("Wait returned %v, want the departure at line 3", err)
	}
	if len(rt.errors) != 0 {
		t.Errorf("the cleanup reported %q, though the test took the departure", rt.errors)
	}
}

// recordingTB is a testing.TB whose cleanups run when the test says, and
// whose errors are recorded rather than reported.
type recordingTB struct {
	testing.TB
	cleanups []func()
	errors   []string
}

func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Helper()          {}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingTB) cleanup() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}
