// Command demoruntime is the Go runtime that the interop tests hand to the
// real TypeScript HarnessClient: the demo runtime (package sdkproto/demo)
// served on stdio.
// It exits 0 after a successful shutdown or when its input ends (the first
// rung of the TypeScript teardown ladder), and 1 when serving failed.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/linerpc/linerpc/sdkproto/demo"
)

func main() {
	// SIGTERM is the ladder's second rung: end serving as on input end, so
	// the turns in flight are cut off and the process still exits 0.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	err := demo.Serve(ctx, os.Stdin, os.Stdout)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "demoruntime:", err)
		os.Exit(1)
	}
}
