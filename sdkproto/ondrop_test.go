package sdkproto_test

import (
	"context"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/linerpc/linerpc/rpc"
	"github.com/linerpc/linerpc/sdkproto"
)

// dropWait bounds the wait for a drop that never comes.
const dropWait = 10 * time.Second

// dropSink is an OnDrop that hands each drop's reason and method to the
// test.
func dropSink() (func(rpc.Drop), <-chan rpc.Drop) {
	ch := make(chan rpc.Drop, 16)
	return func(d rpc.Drop) {
		d.Line = nil // valid only during the call
		ch <- d
	}, ch
}

// wantDrops takes len(want) drops from ch and checks their reasons, in
// order.
func wantDrops(t *testing.T, ch <-chan rpc.Drop, want ...rpc.DropReason) []rpc.Drop {
	t.Helper()
	var got []rpc.Drop
	timeout := time.After(dropWait)
	for _, reason := range want {
		select {
		case d := <-ch:
			if d.Reason != reason {
				t.Errorf("drop %d: %v, want %v", len(got), d.Reason, reason)
			}
			got = append(got, d)
		case <-timeout:
			t.Fatalf("%d drops within %v (%v), want %v", len(got), dropWait, got, want)
		}
	}
	return got
}

// TestServerOnDrop: Serve hands ServerOptions.OnDrop every line of the
// client's it ignores, which the runtime answers with nothing.
func TestServerOnDrop(t *testing.T) {
	t.Parallel()
	onDrop, drops := dropSink()
	srv := sdkproto.NewServer(&routeRuntime{}, &sdkproto.ServerOptions{OnDrop: onDrop})
	cr, cw := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), cr, io.Discard) }()
	go func() {
		io.WriteString(cw, "not json\n"+`{"jsonrpc":"2.0","method":"client/hello","params":{}}`+"\n")
		cw.Close()
	}()
	got := wantDrops(t, drops, rpc.DropMalformed, rpc.DropUnhandledNotification)
	if got[1].Method != "client/hello" {
		t.Errorf("the notification's drop names %q", got[1].Method)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(dropWait):
		t.Fatal("Serve did not return after its input ended")
	}
}

// TestClientOnDrop: NewClient hands ClientOptions.OnDrop every line of
// the runtime's it ignores.
func TestClientOnDrop(t *testing.T) {
	t.Parallel()
	onDrop, drops := dropSink()
	_, p := newClPeer(t, &sdkproto.ClientOptions{OnDrop: onDrop})
	p.send("not json")
	p.send(`{"jsonrpc":"2.0","id":99,"result":{}}`)
	wantDrops(t, drops, rpc.DropMalformed, rpc.DropUnmatchedResponse)
}

// TestLaunchOnDrop: Launch hands ClientOptions.OnDrop the lines of its
// child's output that are not frames.
func TestLaunchOnDrop(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	onDrop, drops := dropSink()
	c, err := sdkproto.Launch(exec.Command(sh, "-c", "echo booting; exec cat >/dev/null"),
		&sdkproto.ClientOptions{OnDrop: onDrop, ShutdownTimeout: 10 * time.Millisecond}) // cat answers nothing
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	wantDrops(t, drops, rpc.DropMalformed)
}
