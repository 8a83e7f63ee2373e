package sdkproto_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
)

// gateWriter blocks every Write until open is closed: a client that
// stopped reading, until it resumes.
type gateWriter struct {
	open chan struct{}
	w    io.Writer
}

func (g gateWriter) Write(b []byte) (int, error) {
	<-g.open
	return g.w.Write(b)
}

// firstRead closes reading at the first Read of its reader.
type firstRead struct {
	io.Reader
	once    *sync.Once
	reading chan struct{}
}

func (r firstRead) Read(p []byte) (int, error) {
	r.once.Do(func() { close(r.reading) })
	return r.Reader.Read(p)
}

// A client that stops reading stalls one session's write: that call, the
// other sessions' calls and the session's next call all return at their
// own deadlines instead of freezing; once the client reads again, the
// stalled event arrives and the session's seqs are contiguous.
func TestEmitterStalledClient(t *testing.T) {
	t.Parallel()
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	gate := gateWriter{open: make(chan struct{}), w: sw}
	srv := sdkproto.NewServer(&routeRuntime{}, nil)
	served := make(chan error, 1)
	reading := make(chan struct{})
	go func() {
		served <- srv.Serve(context.Background(), firstRead{cr, new(sync.Once), reading}, gate)
	}()
	var mu sync.Mutex
	var got []sdkproto.SessionEventParams
	arrived := make(chan struct{}, 64) // one token per event received
	var statuses int
	reg := rpc.NewRegistry()
	reg.HandleUnknownNotification(func(_ context.Context, method string, params json.RawMessage) {
		mu.Lock()
		defer mu.Unlock()
		if method == sdkproto.SessionStatus.Name() {
			statuses++
			return
		}
		var ev sdkproto.SessionEventParams
		if err := json.Unmarshal(params, &ev); err != nil {
			t.Error(err)
		}
		got = append(got, ev)
		select {
		case arrived <- struct{}{}:
		default:
		}
	})
	peer := rpc.NewConn(sr, cw, &rpc.Options{Handler: reg})
	peer.Start()
	defer func() {
		cw.Close()
		<-served
		sw.Close()
		peer.Close()
		peer.Wait()
	}()
	em := srv.Emitter()
	// Serve binds the emitter to its connection before it starts reading;
	// from then on the probe stalls like the rest, until its deadline.
	<-reading
	probe, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	err := em.Status(probe, "probe", sdkproto.StatusIdle)
	cancel()
	if errors.Is(err, sdkproto.ErrNotServing) {
		t.Fatal("the emitter is not bound once Serve reads its input")
	}

	// Each call returns by its deadline: with its notification queued
	// behind the stalled Write (nil), or with the deadline once the queue
	// is full or its session's turn is held by the stalled write.
	bounded := func(name string, call func(ctx context.Context) error) (err error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		err = call(ctx)
		took := time.Since(start)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want nil or its deadline", name, err)
		}
		t.Logf("%s returned after %v: %v", name, took.Round(time.Millisecond), err)
		if took > faultWait {
			t.Errorf("%s returned %v after its deadline of 100ms", name, took)
		}
		return err
	}
	events := 0 // the events queued: an event that failed was not sent
	big := json.RawMessage(`{"text":"` + strings.Repeat("x", 1<<20) + `"}`)
	appended := func(name, session string, typ sdkproto.EventType, data any) bool {
		t.Helper()
		err := bounded(name, func(ctx context.Context) error {
			_, err := em.Append(ctx, session, typ, data)
			return err
		})
		if err == nil {
			events++
		}
		return err == nil
	}
	bigSent := appended("the stalled append", "a", "demo/big", big)
	bounded("another session's status", func(ctx context.Context) error {
		return em.Status(ctx, "b", sdkproto.StatusRunning)
	})
	appended("another session's append", "b", "demo/small", map[string]int{"n": 1})
	appended("the stalled session's next append", "a", "demo/small", map[string]int{"n": 2})

	close(gate.open) // the client reads again
	if _, err := em.Append(context.Background(), "a", "demo/small", map[string]int{"n": 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := em.Append(context.Background(), "b", "demo/small", map[string]int{"n": 4}); err != nil {
		t.Fatal(err)
	}
	want := events + 2 // and the two after
	for range want {
		<-arrived
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != want {
		t.Fatalf("%d events arrived, want %d", len(got), want)
	}
	next := map[string]int64{}
	for _, e := range got {
		if e.Event.Seq != next[e.SessionID] {
			t.Errorf("%s: seq %d, want %d", e.SessionID, e.Event.Seq, next[e.SessionID])
		}
		next[e.SessionID]++
	}
	// Sessions keep their own order only: a's first event is the stalled
	// one, if it was sent, whatever b's went out meanwhile.
	for _, e := range got {
		if e.SessionID == "a" && bigSent {
			if e.Event.Type != "demo/big" {
				t.Errorf("a's first event %s, want the stalled one", e.Event.Type)
			}
			break
		}
	}
}
