package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoTestHelpers: the dshrpc binary links neither package
// testing nor the module's test helpers (rpc/rpctest, the helpers of
// sdkproto/replay/replaytest and sdkproto/sdktest): the runtimes it serves
// come from packages that do not import them (sdkproto/replay,
// sdkproto/scripted). It asks the go command, which TestMain needs to
// build the binary anyway, for the packages the binary depends on.
func TestBinaryLinksNoTestHelpers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", ".")
	cmd.Env = testEnv()
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("go list -deps did not return within %s", testTimeout)
	}
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list -deps: %v\n%s", err, stderr)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || deps[len(deps)-1] != "github.com/linerpc/linerpc/cmd/dshrpc" {
		t.Fatalf("go list -deps . does not end with the command itself:\n%s", out)
	}
	for _, dep := range deps {
		switch dep {
		case "testing",
			"github.com/linerpc/linerpc/rpc/rpctest",
			"github.com/linerpc/linerpc/sdkproto/replay/replaytest",
			"github.com/linerpc/linerpc/sdkproto/sdktest":
			t.Errorf("dshrpc depends on %s, a package for tests (go list -deps ./cmd/dshrpc)", dep)
		}
	}
}
