package sdkproto_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/linerpc/linerpc/internal/linetest"
	"github.com/linerpc/linerpc/rpc/rpctest"
	"github.com/linerpc/linerpc/sdkproto"
	"github.com/linerpc/linerpc/sdkproto/demo"
)

// demoEnv makes the test binary serve the demo runtime on stdin/stdout,
// so that tests can launch it as a real child process.
const demoEnv = "LINERPC_SDKPROTO_DEMO"

func TestMain(m *testing.M) {
	linetest.ServeAsChild(demoEnv, func(r io.Reader, w io.Writer) error {
		return demo.Serve(context.Background(), r, w)
	})
	os.Exit(m.Run())
}

// clDemo connects a Client to the Go demo runtime (demo.Serve) over pipes.
func clDemo(t *testing.T) *sdkproto.Client {
	t.Helper()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- demo.Serve(context.Background(), c2sR, s2cW)
		s2cW.Close()
		c2sR.Close()
	}()
	c := sdkproto.NewClient(s2cR, c2sW, nil)
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("demo.Serve: %v", err)
		}
	})
	if _, err := c.Initialize(t.Context(), clInitParams()); err != nil {
		t.Fatal(err)
	}
	return c
}

// End to end against the Go server of this package.
func TestClientAgainstDemoRuntime(t *testing.T) {
	t.Parallel()
	c := clDemo(t)
	for _, tc := range []struct {
		prompt string
		reason sdkproto.TurnEndKind
	}{
		{"hello demo", sdkproto.TurnCompleted},
		{"/think about it", sdkproto.TurnCompleted},
		{"/tool echo this", sdkproto.TurnCompleted},
		{"/subagent ask the child", sdkproto.TurnCompleted},
		{"/fail", sdkproto.TurnError},
	} {
		res, err := c.Run(t.Context(), "demo-"+tc.prompt, sdkproto.TextBlock(tc.prompt))
		if err != nil {
			t.Fatalf("%s: %v", tc.prompt, err)
		}
		if res.FinishReason != tc.reason || (tc.reason == sdkproto.TurnCompleted && res.FinalResponse == "") {
			t.Errorf("%s: reason %q, final %q", tc.prompt, res.FinishReason, res.FinalResponse)
		}
		t.Logf("%s: %q (%d events, %d notifications)", tc.prompt, res.FinalResponse, len(res.Events), len(res.Notifications))
	}
}

// No goroutine outlives a Client: after Close, the goroutine count is back
// where it was (this test is not parallel, so nothing else runs).
func TestClientNoGoroutineLeft(t *testing.T) {
	rpctest.CheckNoLeak(t)
	c := clDemoLocal(t)
	tree := c.SubscribeSessionTree("main")
	if _, err := c.Run(t.Context(), "main", sdkproto.TextBlock("/tool echo hi")); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	tree.Close()
	l := launchSh(t, `exec sleep 30`, &sdkproto.ClientOptions{ShutdownTimeout: 50 * time.Millisecond, EOFGrace: 50 * time.Millisecond})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// clDemoLocal is clDemo with the server's end awaited by the caller's Close.
func clDemoLocal(t *testing.T) *sdkproto.Client {
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	go func() {
		_ = demo.Serve(context.Background(), c2sR, s2cW)
		s2cW.Close()
		c2sR.Close()
	}()
	c := sdkproto.NewClient(s2cR, c2sW, nil)
	if _, err := c.Initialize(t.Context(), clInitParams()); err != nil {
		t.Fatal(err)
	}
	return c
}

// End to end over a real child process: the Go client launches this test
// binary as the Go demo runtime, runs turns, and tears it down.
func TestClientLaunchesDemoProcess(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), demoEnv+"=1")
	c, err := sdkproto.Launch(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(procCtx(t), clInitParams()); err != nil {
		t.Fatal(err)
	}
	res, err := c.Run(procCtx(t), "main", sdkproto.TextBlock("/subagent count to three"))
	if err != nil {
		t.Fatal(err)
	}
	var started, finished bool
	for _, n := range res.Notifications {
		switch n.Method {
		case sdkproto.SubagentStarted.Name():
			started = true
		case sdkproto.SubagentFinished.Name():
			finished = true
		}
	}
	if res.FinishReason != sdkproto.TurnCompleted || res.FinalResponse == "" || !started || !finished {
		t.Fatalf("reason %q, final %q, subagent started %v finished %v", res.FinishReason, res.FinalResponse, started, finished)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if st := c.ProcessState(); st == nil || !st.Exited() || st.ExitCode() != 0 {
		t.Fatalf("runtime ended with %v, want exit 0 after shutdown", st)
	}
}
