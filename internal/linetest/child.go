package linetest

import (
	"fmt"
	"io"
	"os"
)

// ServeAsChild makes a test binary a line-framed peer that its own tests
// can start as a real child process: called first in TestMain, it serves
// stdin and stdout with serve and exits (1, having printed serve's error,
// or 0) when the environment variable env is "1", and returns at once
// otherwise, for TestMain to run the tests. The tests start the binary
// (os.Args[0]) with env=1.
func ServeAsChild(env string, serve func(r io.Reader, w io.Writer) error) {
	if os.Getenv(env) != "1" {
		return
	}
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}
